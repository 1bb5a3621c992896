#!/usr/bin/env python3
"""Builds hand-written incident bundles into this script's folder, one folder per incident (stdlib only).
Every truth line number is computed from the text written; a check at the end prints each indicating line."""
import json, os, random, shutil, sys
import datetime as dt

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = dt.timezone.utc


class F:
    """A text file built line by line; keys remember 1-based line numbers."""
    def __init__(self):
        self.lines, self.keys = [], {}

    def add(self, text="", key=None):
        parts = text.split("\n")
        if key is not None:
            assert key not in self.keys, key
            self.keys[key] = len(self.lines) + 1
        self.lines.extend(parts)
        return self

    def mark(self, key):  # mark the line most recently added
        self.keys[key] = len(self.lines)

    def text(self):
        return "\n".join(self.lines) + "\n"


class Case:
    def __init__(self, cid):
        self.cid, self.files, self.ind = cid, {}, []

    def f(self, path):
        return self.files.setdefault(path, F())

    def indicate(self, path, key):
        self.ind.append((path, key))

    def write(self, job, truth):
        d = os.path.join(ROOT, self.cid)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        for p, fb in self.files.items():
            fp = os.path.join(d, p)
            os.makedirs(os.path.dirname(fp), exist_ok=True)
            with open(fp, "w", newline="") as fh:
                fh.write(fb.text())
        with open(os.path.join(d, "job.yaml"), "w") as fh:
            fh.write(job)
        truth = dict(truth)
        truth["indicating_lines"] = [{"file": p, "line": self.files[p].keys[k]} for p, k in self.ind]
        with open(os.path.join(d, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=2)
            fh.write("\n")


def job_yaml(job_id, name, framework, status, started, ended, exit_code, gpn, par, nodes, code, ckpts, extra=""):
    out = [f'job_id: "{job_id}"', f"name: {name}", f"framework: {framework}", f"status: {status}",
           f"started_at: {started}"]
    if ended:
        out.append(f"ended_at: {ended}")
    if exit_code is not None:
        out.append(f"exit_code: {exit_code}")
    out.append(f"gpus_per_node: {gpn}")
    out.append("parallelism: {tp: %d, pp: %d, dp: %d, cp: %d, ep: 1}" % par)
    out.append("nodes:")
    for n in nodes:
        items = ", ".join(f"{k}: {v}" for k, v in n.items())
        out.append(f"  - {{{items}}}")
    out.append("code:")
    for c in code:
        out.append('  - {commit: %s, at: %s, message: "%s"}' % c)
    out.append("checkpoints:")
    for c in ckpts:
        out.append("  - {step: %d, at: %s, path: %s, valid: %s}" % c)
    if extra:
        out.append(extra.rstrip("\n"))
    tp, pp, dp, cp = par
    world = sum(len(n["ranks"].strip("[]").split(",")) for n in nodes)
    assert tp * pp * dp * cp == world, (tp, pp, dp, cp, world)
    return "\n".join(out) + "\n"


def ranks_str(a, b):
    return "[" + ", ".join(str(i) for i in range(a, b)) + "]"


def T(s):
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def dmesg_ts(t):
    return t.strftime("[%a %b %d %H:%M:%S %Y]")


_us = [100000]


def torch_glog(t, rank, level="E"):
    _us[0] = _us[0] + random.randint(9, 900) if _us[0] < 990000 else 100000
    return f"[rank{rank}]:[{level}{t.strftime('%m%d %H:%M:%S')}.{_us[0]:06d} "


# ----------------------------------------------------------------------------------------------
# nvidia-smi -q (driver 550 layout: "Clocks Event Reasons", "GPU Power Readings")
def smi_gpu(bus, idx, product="NVIDIA A100-SXM4-80GB", total=81920, used=70211, temp=44, power=371.4,
            limit=400.0, sm=1410, reasons=None, dram_corr=0, serial=None, uuid=None, util=97):
    r = {"Idle": "Not Active", "Applications Clocks Setting": "Not Active", "SW Power Cap": "Not Active",
         "HW Slowdown": "Not Active", "HW Thermal Slowdown": "Not Active", "HW Power Brake Slowdown": "Not Active",
         "Sync Boost": "Not Active", "SW Thermal Slowdown": "Not Active", "Display Clock Setting": "Not Active"}
    r.update(reasons or {})
    serial = serial or str(1324021000000 + random.randint(0, 99999))
    uuid = uuid or "GPU-%08x-%04x-%04x-%04x-%012x" % (random.getrandbits(32), random.getrandbits(16),
                                                      random.getrandbits(16), random.getrandbits(16), random.getrandbits(48))
    L = [
        f"GPU {bus}",
        f"    Product Name                          : {product}",
        "    Product Brand                         : NVIDIA",
        "    Product Architecture                  : Ampere",
        "    Display Mode                          : Disabled",
        "    Display Active                        : Disabled",
        "    Persistence Mode                      : Enabled",
        "    Addressing Mode                       : None",
        "    MIG Mode",
        "        Current                           : Disabled",
        "        Pending                           : Disabled",
        "    Accounting Mode                       : Disabled",
        "    Accounting Mode Buffer Size           : 4000",
        "    Driver Model",
        "        Current                           : N/A",
        "        Pending                           : N/A",
        f"    Serial Number                         : {serial}",
        f"    GPU UUID                              : {uuid}",
        f"    Minor Number                          : {idx}",
        "    VBIOS Version                         : 92.00.45.00.08",
        "    MultiGPU Board                        : No",
        "    Board ID                              : 0x%x" % (int(bus.split(":")[1], 16) << 8),
        "    GPU Part Number                       : 692-2G506-0212-002",
        "    Inforom Version",
        "        Image Version                     : G506.0212.00.02",
        "        OEM Object                        : 2.0",
        "        ECC Object                        : 6.16",
        "        Power Management Object           : N/A",
        "    PCI",
        f"        Bus                               : 0x{bus.split(':')[1]}",
        "        Device                            : 0x00",
        "        Domain                            : 0x0000",
        "        Device Id                         : 0x20B210DE" if total == 81920 else "        Device Id                         : 0x20B010DE",
        f"        Bus Id                            : {bus}",
        "        GPU Link Info",
        "            PCIe Generation",
        "                Max                       : 4",
        "                Current                   : 4",
        "            Link Width",
        "                Max                       : 16x",
        "                Current                   : 16x",
        "    Fan Speed                             : N/A",
        "    Performance State                     : P0",
        "    Clocks Event Reasons",
    ]
    for k in ["Idle", "Applications Clocks Setting", "SW Power Cap", "HW Slowdown"]:
        L.append(f"        {k:<34}: {r[k]}")
    for k in ["HW Thermal Slowdown", "HW Power Brake Slowdown"]:
        L.append(f"            {k:<30}: {r[k]}")
    for k in ["Sync Boost", "SW Thermal Slowdown", "Display Clock Setting"]:
        L.append(f"        {k:<34}: {r[k]}")
    L += [
        "    FB Memory Usage",
        f"        Total                             : {total} MiB",
        f"        Reserved                          : {659 if total == 81920 else 571} MiB",
        f"        Used                              : {used} MiB",
        f"        Free                              : {total - used - (659 if total == 81920 else 571)} MiB",
        "    BAR1 Memory Usage",
        f"        Total                             : {131072 if total == 81920 else 65536} MiB",
        "        Used                              : 5 MiB",
        f"        Free                              : {131067 if total == 81920 else 65531} MiB",
        "    Compute Mode                          : Default",
        "    Utilization",
        f"        Gpu                               : {util} %",
        f"        Memory                            : {max(util - 31, 0)} %",
        "        Encoder                           : 0 %",
        "        Decoder                           : 0 %",
        "    ECC Mode",
        "        Current                           : Enabled",
        "        Pending                           : Enabled",
        "    ECC Errors",
        "        Volatile",
        "            SRAM Correctable              : 0",
        "            SRAM Uncorrectable            : 0",
        f"            DRAM Correctable              : {dram_corr}",
        "            DRAM Uncorrectable            : 0",
        "        Aggregate",
        "            SRAM Correctable              : 0",
        "            SRAM Uncorrectable            : 0",
        f"            DRAM Correctable              : {dram_corr}",
        "            DRAM Uncorrectable            : 0",
        "    Retired Pages",
        "        Single Bit ECC                    : N/A",
        "        Double Bit ECC                    : N/A",
        "        Pending Page Blacklist            : N/A",
        "    Remapped Rows",
        "        Correctable Error                 : 0",
        "        Uncorrectable Error               : 0",
        "        Pending                           : No",
        "        Remapping Failure Occurred        : No",
        "    Temperature",
        f"        GPU Current Temp                  : {temp} C",
        "        GPU T.Limit Temp                  : N/A",
        "        GPU Shutdown Temp                 : 92 C",
        "        GPU Slowdown Temp                 : 89 C",
        "        GPU Max Operating Temp            : 85 C",
        f"        Memory Current Temp               : {temp + 6} C",
        "        Memory Max Operating Temp         : 95 C",
        "    GPU Power Readings",
        f"        Power Draw                        : {power:.2f} W",
        f"        Current Power Limit               : {limit:.2f} W",
        f"        Requested Power Limit             : {limit:.2f} W",
        "        Default Power Limit               : 400.00 W",
        "        Min Power Limit                   : 100.00 W",
        "        Max Power Limit                   : 400.00 W",
        "    Clocks",
        f"        Graphics                          : {sm} MHz",
        f"        SM                                : {sm} MHz",
        "        Memory                            : 1593 MHz",
        f"        Video                             : {min(1275, sm)} MHz",
        "    Applications Clocks",
        "        Graphics                          : 1095 MHz",
        "        Memory                            : 1593 MHz",
        "    Default Applications Clocks",
        "        Graphics                          : 1095 MHz",
        "        Memory                            : 1593 MHz",
        "    Max Clocks",
        "        Graphics                          : 1410 MHz",
        "        SM                                : 1410 MHz",
        "        Memory                            : 1593 MHz",
        "        Video                             : 1290 MHz",
        "    Processes",
        "        GPU instance ID                   : N/A",
        "        Compute instance ID               : N/A",
        f"        Process ID                        : {random.randint(30000, 90000)}",
        "            Type                          : C",
        "            Name                          : /usr/bin/python3",
        f"            Used GPU Memory               : {used - 600} MiB",
        "",
    ]
    return L


BUSES = ["00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0",
         "00000000:87:00.0", "00000000:90:00.0", "00000000:B7:00.0", "00000000:BD:00.0"]


def smi_file(fb, when, gpus, driver="550.90.07", cuda="12.4"):
    fb.add("")
    fb.add("==============NVSMI LOG==============")
    fb.add("")
    fb.add(f"Timestamp                                 : {when.strftime('%a %b %d %H:%M:%S %Y')}")
    fb.add(f"Driver Version                            : {driver}")
    fb.add(f"CUDA Version                              : {cuda}")
    fb.add("")
    fb.add(f"Attached GPUs                             : {len(gpus)}")
    for g in gpus:
        if isinstance(g, str):
            fb.add(g)
            continue
        lines, marks = g
        start = len(fb.lines)
        for l in lines:
            fb.add(l)
        for key, needle in marks:
            for i, l in enumerate(lines):
                if needle in l:
                    fb.keys[key] = start + i + 1
                    break
            else:
                raise AssertionError(needle)


def ibstat_file(fb, host_guid, ports, marks=None):
    """ports: list of (ca, state, phys, rate)."""
    for i, (ca, state, phys, rate) in enumerate(ports):
        g = host_guid + i
        fb.add(f"CA '{ca}'")
        fb.add("\tCA type: MT4123")
        fb.add("\tNumber of ports: 1")
        fb.add("\tFirmware version: 20.39.1002")
        fb.add("\tHardware version: 0")
        fb.add(f"\tNode GUID: 0x{g:016x}")
        fb.add(f"\tSystem image GUID: 0x{g:016x}")
        fb.add("\tPort 1:")
        fb.add(f"\t\tState: {state}", key=(marks or {}).get((ca, "state")))
        fb.add(f"\t\tPhysical state: {phys}", key=(marks or {}).get((ca, "phys")))
        fb.add(f"\t\tRate: {rate}")
        fb.add(f"\t\tBase lid: {100 + i if state == 'Active' else 65535}")
        fb.add("\t\tLMC: 0")
        fb.add(f"\t\tSM lid: {1 if state == 'Active' else 0}")
        fb.add("\t\tCapability mask: 0xa651e848")
        fb.add(f"\t\tPort GUID: 0x{g:016x}")
        fb.add("\t\tLink layer: InfiniBand")


# ==============================================================================================
# 1. MosaicML Composer (llm-foundry), Xid 79 while saving the ba6000 checkpoint
def case_composer_xid79():
    random.seed(101)
    c = Case("composer-xid79-ckpt-save-4node")
    hosts = [f"mlab-a100-0{i}" for i in (31, 32, 33, 34)]
    ips = [f"10.42.8.{i}" for i in (31, 32, 33, 34)]
    bad, bad_local = 2, 5
    bad_rank = bad * 8 + bad_local
    t0 = T("2026-11-27T01:02:00")
    bt = 3.97
    pids = {h: 48000 + 713 * i for i, h in enumerate(hosts)}

    def ts(t):
        return t.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % random.randint(0, 999)

    t_b = lambda b: t0 + dt.timedelta(seconds=95 + b * bt + (40 if b > 1000 else 0) + (40 if b > 2000 else 0)
                                      + (40 if b > 3000 else 0) + (40 if b > 4000 else 0) + (40 if b > 5000 else 0))
    t_save = t_b(6000) + dt.timedelta(seconds=1)
    t_xid = t_save + dt.timedelta(seconds=33)
    t_wd = t_save + dt.timedelta(seconds=603)
    for n, h in enumerate(hosts):
        f = c.f(f"logs/{h}/composer-launch.log")
        r0 = n * 8
        pid = pids[h]
        f.add(f"Starting distributed environment on local node for global_rank({r0}-{r0 + 7})")
        f.add(f"Distributed KV store: tcp://{ips[0]}:29400")
        for lr in range(8):
            f.add(f"Launching process for local_rank({lr}), global_rank({r0 + lr}) with command(['/usr/bin/python3', '-u', 'train.py', 'yamls/pretrain/mpt-30b-code.yaml'])")
        f.add("/usr/lib/python3/dist-packages/composer/callbacks/speed_monitor.py:120: UserWarning: gpu_flop count not found for None with precision: amp_bf16; MFU cannot be calculated and reported. gpu_flops_available can be manually overridden by setting gpu_flops_available in SpeedMonitor.")
        f.add("  warnings.warn(")
        f.add(f"{ts(t0 + dt.timedelta(seconds=21))}: rank{r0}[{pid}][MainThread]: INFO: llmfoundry.command_utils.train: Building tokenizer...")
        f.add(f"{ts(t0 + dt.timedelta(seconds=22))}: rank{r0}[{pid}][MainThread]: INFO: llmfoundry.command_utils.train: Building train loader...")
        f.add(f"{ts(t0 + dt.timedelta(seconds=24))}: rank{r0}[{pid}][MainThread]: INFO: streaming.base.dataset: Because `predownload` was not specified, it will default to 8*batch_size if batch_size is not None, otherwise 64.")
        f.add(f"{ts(t0 + dt.timedelta(seconds=31))}: rank{r0}[{pid}][MainThread]: INFO: llmfoundry.command_utils.train: Initializing model...")
        f.add(f"{ts(t0 + dt.timedelta(seconds=58))}: rank{r0}[{pid}][MainThread]: INFO: llmfoundry.command_utils.train: Building trainer...")
        f.add(f"{ts(t0 + dt.timedelta(seconds=59))}: rank{r0}[{pid}][MainThread]: INFO: composer.utils.reproducibility: Setting seed to 17")
        f.add(f"{ts(t0 + dt.timedelta(seconds=59))}: rank{r0}[{pid}][MainThread]: INFO: composer.trainer.trainer: Run name: mpt-30b-code-r4")
        f.add(f"{h}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using enp170s0f0:{ips[n]}<0>")
        f.add(f"{h}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_6:1/IB [5]mlx5_7:1/IB [6]mlx5_8:1/IB [7]mlx5_9:1/IB ; OOB enp170s0f0:{ips[n]}<0>")
        f.add(f"{h}:{pid}:{pid} [0] NCCL INFO cudaDriverVersion 12040")
        if n == 0:
            f.add("NCCL version 2.21.5+cuda12.4")
        f.add(f"{ts(t0 + dt.timedelta(seconds=90))}: rank{r0}[{pid}][MainThread]: INFO: composer.trainer.trainer: Using precision Precision.AMP_BF16")
        f.add(f"{ts(t0 + dt.timedelta(seconds=92))}: rank{r0}[{pid}][MainThread]: INFO: llmfoundry.command_utils.train: Logging config")
        f.add(f"{ts(t0 + dt.timedelta(seconds=93))}: rank{r0}[{pid}][MainThread]: INFO: llmfoundry.command_utils.train: Starting training...")
        f.add("******************************")
        f.add("Config:")
        f.add("composer_commit_hash: None")
        f.add("composer_version: 0.26.1")
        f.add("enabled_algorithms/GradientClipping: true")
        f.add("node_name: unknown because NODENAME environment variable not set")
        f.add("num_gpus_per_node: 8")
        f.add("num_nodes: 4")
        f.add("rank_zero_seed: 17")
        f.add("******************************")
        loss = 2.31
        for b in range(200, 6001, 200):
            loss = max(1.12, loss - 0.0172 + random.uniform(-0.02, 0.02))
            tb = t_b(b)
            f.add(f"[batch={b}/24000]:")
            f.add(f"\t Train time/batch: {b - 1}")
            f.add(f"\t Train time/sample: {(b - 1) * 512}")
            f.add(f"\t Train loss/train/total: {loss:.4f}")
            f.add(f"\t Train metrics/train/LanguageCrossEntropy: {loss:.4f}")
            f.add(f"\t Train throughput/batches_per_sec: {1 / bt + random.uniform(-0.004, 0.004):.4f}")
            f.add(f"\t Train lr-DecoupledLionW/group0: {0.00012 * min(1, b / 2000):.4e}")
            if b % 1000 == 0:
                f.add(f"{ts(tb + dt.timedelta(seconds=1))}: rank{r0}[{pid}][MainThread]: DEBUG: composer.utils.checkpoint: Saving checkpoint to /mnt/ckpt/mpt-30b-code/ep{{epoch}}-ba{{batch}}-rank{{rank}}.pt")
                if b < 6000:
                    f.add(f"{ts(tb + dt.timedelta(seconds=39))}: rank{r0}[{pid}][MainThread]: DEBUG: composer.utils.checkpoint: Finished saving checkpoint to /mnt/ckpt/mpt-30b-code/ep0-ba{b}-rank{r0}.pt")
            if b == 2300 and n == 1:
                f.add(f"{ts(tb)}: rank{r0}[{pid}][MainThread]: WARNING: streaming.base.stream: Retrying download of shard.00412.mds.zstd (attempt 1/2): ReadTimeoutError")
        if n != bad:
            # healthy nodes: their ranks sit in the FSDP all-gather of the sharded save until the watchdog fires
            f.add(f"{torch_glog(t_wd, r0)}ProcessGroupNCCL.cpp:616] [Rank {r0}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1204117, OpType=_ALLGATHER_BASE, NumelIn=26214400, NumelOut=838860800, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.")
            f.add(f"{torch_glog(t_wd, r0)}ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {r0}] Exception (either an error or timeout) detected by watchdog at work: 1204117, last enqueued NCCL work: 1204118, last completed NCCL work: 1204116.")
            f.add(f"{torch_glog(t_wd, r0)}ProcessGroupNCCL.cpp:630] [Rank {r0}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
            f.add(f"{torch_glog(t_wd, r0)}ProcessGroupNCCL.cpp:636] [Rank {r0}] To avoid data inconsistency, we are taking the entire process down.")
            f.add(f"{torch_glog(t_wd, r0)}ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {r0}] Process group watchdog thread terminated with exception: [Rank {r0}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1204117, OpType=_ALLGATHER_BASE, NumelIn=26214400, NumelOut=838860800, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.")
            f.add("terminate called after throwing an instance of 'c10::DistBackendError'")
            f.add(f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank {r0}] Process group watchdog thread terminated with exception: [Rank {r0}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1204117, OpType=_ALLGATHER_BASE, NumelIn=26214400, NumelOut=838860800, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.")
            f.add(f"ERROR:composer.cli.launcher:Rank {r0} crashed with exit code -6.")
            f.add("Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.")
            f.add(f"Global rank {r0} (PID {pid}) exited with code -6")
        else:
            f.add(f"ERROR:composer.cli.launcher:Rank {bad_rank} crashed with exit code 1.")
            f.add("Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.")
            f.add(f"Global rank {bad_rank} (PID {pid + bad_local}) exited with code 1")
            f.add(f"----------Begin global rank {bad_rank} STDOUT----------")
            f.add(f"{h}:{pid + bad_local}:{pid + bad_local} [{bad_local}] NCCL INFO cudaDriverVersion 12040")
            f.add(f"----------End global rank {bad_rank} STDOUT----------")
            f.add(f"----------Begin global rank {bad_rank} STDERR----------")
            f.add("Traceback (most recent call last):")
            f.add('  File "/workspace/llm-foundry/scripts/train/train.py", line 9, in <module>')
            f.add("    train_from_yaml(yaml_path, args_list)")
            f.add('  File "/workspace/llm-foundry/llmfoundry/command_utils/train.py", line 620, in train_from_yaml')
            f.add("    return train(yaml_cfg)")
            f.add('  File "/workspace/llm-foundry/llmfoundry/command_utils/train.py", line 599, in train')
            f.add("    trainer.fit()")
            f.add('  File "/usr/lib/python3/dist-packages/composer/trainer/trainer.py", line 2313, in fit')
            f.add("    self._train_loop()")
            f.add('  File "/usr/lib/python3/dist-packages/composer/trainer/trainer.py", line 2605, in _train_loop')
            f.add("    self.engine.run_event(Event.BATCH_CHECKPOINT)")
            f.add('  File "/usr/lib/python3/dist-packages/composer/core/engine.py", line 308, in run_event')
            f.add("    self._run_nonlogger_callbacks(event)")
            f.add('  File "/usr/lib/python3/dist-packages/composer/core/engine.py", line 501, in _run_nonlogger_callbacks')
            f.add("    self._run_callbacks(event, callbacks)")
            f.add('  File "/usr/lib/python3/dist-packages/composer/core/engine.py", line 493, in _run_callbacks')
            f.add("    cb.run_event(event, self.state, self.logger)")
            f.add('  File "/usr/lib/python3/dist-packages/composer/core/callback.py", line 96, in run_event')
            f.add("    return event_cb(state, logger)")
            f.add('  File "/usr/lib/python3/dist-packages/composer/callbacks/checkpoint_saver.py", line 362, in batch_checkpoint')
            f.add("    self._save_checkpoint(")
            f.add('  File "/usr/lib/python3/dist-packages/composer/callbacks/checkpoint_saver.py", line 418, in _save_checkpoint')
            f.add("    saved_path = checkpoint.save_checkpoint(")
            f.add('  File "/usr/lib/python3/dist-packages/composer/utils/checkpoint.py", line 1096, in save_checkpoint')
            f.add("    state_dict = _get_save_state_dict(state, weights_only)")
            f.add('  File "/usr/lib/python3/dist-packages/composer/core/state.py", line 1004, in state_dict')
            f.add("    serialized_value = self.get_model_state_dict()")
            f.add('  File "/usr/lib/python3/dist-packages/torch/distributed/fsdp/_state_dict_utils.py", line 375, in _sharded_post_state_dict_hook')
            f.add("    return _common_unshard_post_state_dict_hook(")
            f.add('  File "/usr/lib/python3/dist-packages/torch/distributed/fsdp/_state_dict_utils.py", line 265, in _common_unshard_post_state_dict_hook')
            f.add("    param_hook(state_dict, prefix, fqn)")
            f.add("RuntimeError: CUDA error: unspecified launch failure", key="err")
            f.add("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
            f.add("For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
            f.add("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
            f.add("")
            f.add(f"----------End global rank {bad_rank} STDERR----------")
            c.indicate(f"logs/{h}/composer-launch.log", "err")
            for lr in range(8):
                if lr != bad_local:
                    f.add(f"Sending process {pid + lr} closure signal SIGTERM")
            f.add(f"Global rank {r0} (PID {pid}) exited with code -15")
    # probes
    for n, h in enumerate(hosts):
        d = c.f(f"probes/{h}/dmesg.txt")
        boot = t0 - dt.timedelta(days=3, hours=4)
        d.add(f"{dmesg_ts(boot)} Linux version 5.15.0-122-generic (buildd@lcy02-amd64-034) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #132-Ubuntu SMP Thu Aug 29 13:45:52 UTC 2024 (Ubuntu 5.15.0-122.132-generic 5.15.163)")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=31))} nvidia: module license 'NVIDIA' taints kernel.")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=32))} nvidia-nvlink: Nvlink Core is being initialized, major device number 511")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=33))} NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=40))} nvidia-nvswitch: Probing device 0000:c4:00.0, Vendor Id = 0x10de, Device Id = 0x1af1, Class = 0x68000")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=48))} mlx5_core 0000:aa:00.0 enp170s0f0: Link up")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=48))} IPv6: ADDRCONF(NETDEV_CHANGE): enp170s0f0: link becomes ready")
        d.add(f"{dmesg_ts(t0 - dt.timedelta(minutes=3))} nvidia_uvm: module uses symbols from proprietary module nvidia, inheriting taint.")
        if n == bad:
            bus = "0000:90:00"
            d.add(f"{dmesg_ts(t_xid)} NVRM: GPU at PCI:{bus}: GPU-6b2f01c4-83d1-5f2a-0b9e-4ad0c1e72f10")
            d.add(f"{dmesg_ts(t_xid)} NVRM: GPU Board Serial Number: 1324021038871")
            d.add(f"{dmesg_ts(t_xid)} NVRM: Xid (PCI:{bus}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", key="xid")
            d.add(f"{dmesg_ts(t_xid)} NVRM: GPU {bus}.0: GPU has fallen off the bus.", key="fell")
            d.add(f"{dmesg_ts(t_xid)} NVRM: A GPU crash dump has been created. If possible, please run")
            d.add("NVRM: nvidia-bug-report.sh as root to collect this data before")
            d.add("NVRM: the NVIDIA kernel module is unloaded.")
            c.indicate(f"probes/{h}/dmesg.txt", "xid")
            c.indicate(f"probes/{h}/dmesg.txt", "fell")
        if n not in (0, bad):
            continue
        s = c.f(f"probes/{h}/nvidia-smi.txt")
        when = t_wd + dt.timedelta(minutes=4)
        gpus = []
        for i, bus in enumerate(BUSES):
            if n == bad and i == bad_local:
                gpus.append(("Unable to determine the device handle for GPU0000:90:00.0: Unknown Error", "nodev"))
                continue
            gpus.append((bus, {"power": 61.2 + random.uniform(-3, 3), "sm": 210, "reasons": {"Idle": "Active"},
                               "dram_corr": (2 if (n == 0 and i == 2) else 0)}, {}))
        smi_perf_file(s, when, gpus, driver="550.90.07", cuda="12.4", attached=8)
        if n == bad:
            c.indicate(f"probes/{h}/nvidia-smi.txt", "nodev")
    nodes = [{"host": h, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8)} for i, h in enumerate(hosts)]
    job = job_yaml("mpt-30b-code-r4", "mpt-30b-code", "fsdp", "failed", iso(t0), iso(t_wd + dt.timedelta(seconds=40)), 1, 8,
                   (1, 1, 32, 1), nodes,
                   [("4c1d2e7", "2026-11-20T16:40:00Z", "yamls: code mix v2"),
                    ("a93f0b2", "2026-11-25T11:05:00Z", "bump composer to 0.26.1")],
                   [(4000, iso(t_b(4000) + dt.timedelta(seconds=40)), "/mnt/ckpt/mpt-30b-code/ep0-ba4000", "true"),
                    (5000, iso(t_b(5000) + dt.timedelta(seconds=40)), "/mnt/ckpt/mpt-30b-code/ep0-ba5000", "true"),
                    (6000, iso(t_save), "/mnt/ckpt/mpt-30b-code/ep0-ba6000", "false")],
                   "spares: 2\nscheduler: composer-launcher\nlauncher: composer -n 8 --world_size 32\n")
    c.write(job, {
        "fault": "gpu_fell_off_bus", "category": "hardware",
        "root_cause": f"GPU {bad_local} (PCI 0000:90:00) of {hosts[bad]} fell off the bus (Xid 79) while the job was saving the batch-6000 sharded checkpoint; global rank {bad_rank} died with a CUDA error and the other ranks timed out in the save's all-gather, leaving ba6000 incomplete",
        "faulty_nodes": [hosts[bad]], "stage": "checkpoint", "iteration": 6001,
        "actions": [{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 5000}],
    })
    return c


# ==============================================================================================
# 2. Horovod over Gloo (horovodrun --gloo), InfiniBand port flapping twice on one node
def perfquery_block(fb, hca, lid, sym=0, rec=0, downed=0, rcverr=0, xmitdisc=0, keys=None):
    keys = keys or {}
    fb.add(f"# {hca} port 1")
    fb.add(f"# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)")
    rows = [("PortSelect", "1"), ("CounterSelect", "0x0000"), ("SymbolErrorCounter", str(sym)),
            ("LinkErrorRecoveryCounter", str(rec)), ("LinkDownedCounter", str(downed)),
            ("PortRcvErrors", str(rcverr)), ("PortRcvRemotePhysicalErrors", "0"), ("PortRcvSwitchRelayErrors", "0"),
            ("PortXmitDiscards", str(xmitdisc)), ("PortXmitConstraintErrors", "0"), ("PortRcvConstraintErrors", "0"),
            ("CounterSelect2", "0x00"), ("LocalLinkIntegrityErrors", "0"), ("ExcessiveBufferOverrunErrors", "0"),
            ("QP1Dropped", "0"), ("VL15Dropped", "0"), ("PortXmitData", str(random.randint(10**12, 9 * 10**12))),
            ("PortRcvData", str(random.randint(10**12, 9 * 10**12))), ("PortXmitPkts", str(random.randint(10**9, 9 * 10**9))),
            ("PortRcvPkts", str(random.randint(10**9, 9 * 10**9))), ("PortXmitWait", str(random.randint(10**5, 10**7)))]
    for k, v in rows:
        fb.add(f"{(k + ':').ljust(33, '.')}{v}", key=keys.get(k))
    fb.add("")


def case_horovod_ibflap():
    random.seed(202)
    c = Case("horovod-gloo-ib-flap-8node")
    hosts = [f"hv-gpu-{200 + i}" for i in range(1, 9)]
    ips = [f"10.31.4.{200 + i}" for i in range(1, 9)]
    bad = 4
    bad_rank = bad * 4 + 3
    lf = c.f(f"logs/{hosts[0]}/horovodrun.log")
    t0 = T("2026-11-27T02:45:00")
    pids = [31000 + 977 * i for i in range(8)]
    lf.add("Filtering local host names.")
    lf.add("Remote host found: " + " ".join(hosts[1:]))
    lf.add("Checking ssh on all remote hosts.")
    lf.add("SSH was successful into all the remote hosts.")
    lf.add("Testing interfaces on all the hosts.")
    lf.add("Launched horovod server.")
    lf.add("Attempted to launch horovod task servers.")
    lf.add("Waiting for the hosts to acknowledge.")
    lf.add("Notified all the hosts that the registration is complete.")
    lf.add("Waiting for hosts to perform host-to-host interface checks.")
    lf.add("Host-to-host interface checks successful.")
    lf.add("Interfaces on all the hosts were successfully checked.")
    lf.add("Common interface found: ib0")

    def rank_pid(r):
        return pids[r // 4] + (r % 4) * 3

    def P(r, stream="stdout"):
        return f"[{r}]<{stream}>:"

    for r in range(32):
        lf.add(P(r, "stderr") + "/usr/local/lib/python3.10/dist-packages/torchvision/transforms/v2/_deprecated.py:42: UserWarning: The transform `ToTensor()` is deprecated and will be removed in a future release. Instead, please use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.Output is equivalent up to float precision.")
        lf.add(P(r, "stderr") + "  warnings.warn(")
    lf.add(P(0) + "2026-11-27 02:45:41,118 INFO train_vit.py:141] resuming from /shared/ckpt/vit-l16-in21k/step_00003750.pt (epoch 12)")
    lf.add(P(0) + f"{hosts[0]}:{rank_pid(0)}:{rank_pid(0)} [0] NCCL INFO Bootstrap : Using ib0:{ips[0]}<0>")
    lf.add(P(0) + f"{hosts[0]}:{rank_pid(0)}:{rank_pid(0)} [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)")
    lf.add(P(0) + f"{hosts[0]}:{rank_pid(0)}:{rank_pid(0)} [0] NCCL INFO cudaDriverVersion 12020")
    lf.add(P(0) + "NCCL version 2.18.5+cuda12.2")
    for r in range(0, 32, 1):
        h = hosts[r // 4]
        lf.add(P(r) + f"{h}:{rank_pid(r)}:{rank_pid(r) + 61} [{r % 4}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB ib0:{ips[r // 4]}<0>")
    for r in (0, 16, 19, 31):
        h = hosts[r // 4]
        lf.add(P(r) + f"{h}:{rank_pid(r)}:{rank_pid(r) + 61} [{r % 4}] NCCL INFO comm 0x55d1c9a2b7f0 rank {r} nranks 32 cudaDev {r % 4} nvmlDev {r % 4} busId {['07000', '47000', '87000', 'c7000'][r % 4]} commId 0x8f1e2c0b4a7d3e61 - Init COMPLETE")
    step_t = 0.541
    t = t0 + dt.timedelta(seconds=48)
    tflap1 = tup1 = tflap2 = tup2 = tfail = None
    s = 3751
    loss = 2.914
    while True:
        dur = step_t + random.uniform(-0.01, 0.01)
        if s == 4213:
            tflap1 = t + dt.timedelta(seconds=0.2)
            tup1 = tflap1 + dt.timedelta(seconds=6)
            dur += 6.3
        if s == 4063:
            dur += 24.0
        if s == 4291:
            tflap2 = t + dt.timedelta(seconds=0.3)
            tfail = tflap2 + dt.timedelta(seconds=121)
            tup2 = tflap2 + dt.timedelta(seconds=152)
            break
        t = t + dt.timedelta(seconds=dur)
        loss -= 0.0004 + random.uniform(-0.002, 0.002)
        if s % 10 == 0:
            avg = (0.541 + (0.63 if s == 4220 else 0) + (2.4 if s == 4070 else 0)) + random.uniform(-0.004, 0.004)
            lf.add(P(0) + f"{t.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} INFO train_vit.py:212] epoch {(s - 1) // 312} step {s}/6250 loss {loss:.4f} lr {1.9e-3 * (1 - s / 6250) + 2e-4:.3e} img/s {32 * 384 / avg:.1f} step_time {avg:.3f}s")
        if s == 4062:
            lf.add(P(0) + f"{(t + dt.timedelta(seconds=0.4)).strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} INFO train_vit.py:233] saved checkpoint /shared/ckpt/vit-l16-in21k/step_00004062.pt")
        if s == 3990:
            lf.add(P(22, "stderr") + "WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPConnectionPool(host='minio.data.svc', port=9000): Read timed out. (read timeout=30)\")': /in21k-shards/train-01841.tar")
        if s == 4213:
            h = hosts[bad]
            for ev in ("port error", "port active"):
                lf.add(P(bad_rank))
                lf.add(P(bad_rank) + f"{h}:{rank_pid(bad_rank)}:{rank_pid(bad_rank) + 64} [3] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_3:1 Got async event : {ev}",
                       key=("ev1" if ev == "port error" else None))
        s += 1
    h = hosts[bad]
    lf.add(P(bad_rank))
    lf.add(P(bad_rank) + f"{h}:{rank_pid(bad_rank)}:{rank_pid(bad_rank) + 64} [3] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_3:1 Got async event : port error", key="ev2")
    lf.add(P(bad_rank))
    lf.add(P(bad_rank) + f"{h}:{rank_pid(bad_rank)}:{rank_pid(bad_rank) + 70} [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {ips[bad + 1]}<52841> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid fe80::a088:c203:8c:4f13 remoteGidsfe80::a088:c203:8c:51a0", key="cqe")
    lf.add(P(bad_rank) + f"{h}:{rank_pid(bad_rank)}:{rank_pid(bad_rank) + 70} [3] NCCL INFO transport/net.cc:1137 -> 6")
    lf.add(P(bad_rank) + f"{h}:{rank_pid(bad_rank)}:{rank_pid(bad_rank) + 70} [3] NCCL INFO proxy.cc:698 -> 6")
    lf.add(P(bad_rank) + f"{h}:{rank_pid(bad_rank)}:{rank_pid(bad_rank) + 70} [3] NCCL INFO proxy.cc:877 -> 6 [Progress Thread]")
    peer = bad_rank + 1
    ph = hosts[peer // 4]
    lf.add(P(peer))
    lf.add(P(peer) + f"{ph}:{rank_pid(peer)}:{rank_pid(peer) + 70} [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {ips[bad]}<40233> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::a088:c203:8c:51a0 remoteGidsfe80::a088:c203:8c:4f13")
    lf.add(P(peer) + f"{ph}:{rank_pid(peer)}:{rank_pid(peer) + 70} [0] NCCL INFO transport/net.cc:1137 -> 6")
    lf.add(P(peer) + f"{ph}:{rank_pid(peer)}:{rank_pid(peer) + 70} [0] NCCL INFO proxy.cc:698 -> 6")
    tb = [
        "Traceback (most recent call last):",
        '  File "/workspace/train_vit.py", line 301, in <module>',
        "    main()",
        '  File "/workspace/train_vit.py", line 262, in main',
        "    optimizer.step()",
        '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/optimizer.py", line 200, in step',
        "    self.synchronize()",
        '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/optimizer.py", line 162, in synchronize',
        "    output = synchronize(handle)",
        '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/mpi_ops.py", line 949, in synchronize',
        "    raise HorovodInternalError(e)",
    ]
    for r in (bad_rank, peer):
        for l in tb:
            lf.add(P(r, "stderr") + l)
        lf.add(P(r, "stderr") + "horovod.common.exceptions.HorovodInternalError: NCCL async error: remote process exited or there was a network error",
               key=("hie" if r == bad_rank else None))
    lf.add(f"Process {bad_rank} exit with status code 1.")
    lf.add(f"Terminating remaining workers after failure of Process {bad_rank}.")
    lf.add(f"Process {peer} exit with status code 1.")
    for r in range(32):
        if r not in (bad_rank, peer):
            lf.add(f"Process {r} exit with status code 143.")
    lf.add("Traceback (most recent call last):")
    lf.add('  File "/usr/local/bin/horovodrun", line 8, in <module>')
    lf.add("    sys.exit(run_commandline())")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/launch.py", line 837, in run_commandline')
    lf.add("    _run(args)")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/launch.py", line 827, in _run')
    lf.add("    return _run_static(args)")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/launch.py", line 685, in _run_static')
    lf.add("    _launch_job(args, settings, nics, command)")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/launch.py", line 800, in _launch_job')
    lf.add("    run_controller(args.use_gloo, gloo_run_fn,")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/launch.py", line 768, in run_controller')
    lf.add("    gloo_run()")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/launch.py", line 790, in gloo_run_fn')
    lf.add("    gloo_run(settings, nics, env, driver_ip, command)")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/gloo_run.py", line 300, in gloo_run')
    lf.add("    launch_gloo(command, exec_command, settings, nics, env, server_ip)")
    lf.add('  File "/usr/local/lib/python3.10/dist-packages/horovod/runner/gloo_run.py", line 284, in launch_gloo')
    lf.add("    raise RuntimeError('Horovod detected that one or more processes exited with non-zero '")
    lf.add("RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job to be terminated. The first process to do so was:")
    lf.add(f"Process name: {bad_rank}")
    lf.add("Exit code: 1")
    c.indicate(f"logs/{hosts[0]}/horovodrun.log", "ev1")
    c.indicate(f"logs/{hosts[0]}/horovodrun.log", "cqe")
    # probes
    for n, h in enumerate(hosts):
        d = c.f(f"probes/{h}/dmesg.txt")
        boot = t0 - dt.timedelta(days=9, hours=2)
        d.add(f"{dmesg_ts(boot)} Linux version 5.15.0-107-generic (buildd@lcy02-amd64-017) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #117-Ubuntu SMP Fri Apr 26 12:26:49 UTC 2024 (Ubuntu 5.15.0-107.117-generic 5.15.149)")
        for i, bus in enumerate(["0c", "4b", "8b", "c1"]):
            d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=22 + i))} mlx5_core 0000:{bus}:00.0: firmware version: 20.39.1002")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=41))} mlx5_core 0000:0c:00.0 ibp12s0: renamed from ib0")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=44))} IPv6: ADDRCONF(NETDEV_CHANGE): ibp12s0: link becomes ready")
        d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=60))} NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024")
        if n == bad:
            d.add(f"{dmesg_ts(tflap1)} mlx5_core 0000:c1:00.0 ibp193s0: Link down", key="d1")
            d.add(f"{dmesg_ts(tup1)} mlx5_core 0000:c1:00.0 ibp193s0: Link up")
            d.add(f"{dmesg_ts(tup1)} IPv6: ADDRCONF(NETDEV_CHANGE): ibp193s0: link becomes ready")
            d.add(f"{dmesg_ts(tflap2)} mlx5_core 0000:c1:00.0 ibp193s0: Link down", key="d2")
            d.add(f"{dmesg_ts(tup2)} mlx5_core 0000:c1:00.0 ibp193s0: Link up")
            d.add(f"{dmesg_ts(tup2)} IPv6: ADDRCONF(NETDEV_CHANGE): ibp193s0: link becomes ready")
            c.indicate(f"probes/{h}/dmesg.txt", "d1")
            c.indicate(f"probes/{h}/dmesg.txt", "d2")
        ib = c.f(f"probes/{h}/ibstat.txt")
        ibstat_file(ib, 0xa088c203008c4f00 + n * 0x100, [(f"mlx5_{i}", "Active", "LinkUp", 200) for i in range(4)])
        pq = c.f(f"probes/{h}/ib-counters.txt")
        for i in range(4):
            if n == bad and i == 3:
                perfquery_block(pq, f"mlx5_{i}", 100 + 4 * n + i, sym=8734, rec=2, downed=2, rcverr=311,
                                keys={"LinkDownedCounter": "ldc"})
                c.indicate(f"probes/{h}/ib-counters.txt", "ldc")
            else:
                perfquery_block(pq, f"mlx5_{i}", 100 + 4 * n + i, sym=(3 if (n == 6 and i == 1) else 0))
    nodes = [{"host": h, "ip": ips[i], "ranks": ranks_str(4 * i, 4 * i + 4)} for i, h in enumerate(hosts)]
    job = job_yaml("hvd-44817", "vit-l16-in21k", "other", "failed", iso(t0), iso(tfail + dt.timedelta(seconds=9)), 1, 4,
                   (1, 1, 32, 1), nodes,
                   [("e7b90c1", "2026-11-19T09:12:00Z", "augment: randaug m9"),
                    ("5d2a44f", "2026-11-24T15:40:00Z", "ckpt every epoch")],
                   [(3750, "2026-11-27T02:31:10Z", "/shared/ckpt/vit-l16-in21k/step_00003750.pt", "true"),
                    (4062, iso(t0 + dt.timedelta(seconds=48 + 311 * 0.541)), "/shared/ckpt/vit-l16-in21k/step_00004062.pt", "true")],
                   "spares: 1\nlauncher: horovodrun --gloo -np 32 -H hv-gpu-201:4,...,hv-gpu-208:4\n")
    c.write(job, {
        "fault": "ib_link_flap", "category": "network",
        "root_cause": f"InfiniBand port mlx5_3 (ibp193s0) on {hosts[bad]} flapped twice; the first outage (6 s) was ridden out, the second (~150 s) outlasted the IB retry budget, so NCCL on rank {bad_rank} got retry-exceeded completions (status 12) and Horovod aborted the job",
        "faulty_nodes": [hosts[bad]], "stage": "training", "iteration": 4213,
        "actions": [{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 4062}],
    })
    return c


# ==============================================================================================
# 3. Kubeflow TrainJob (kubectl logs --prefix --timestamps), Lightning FSDP, container OOM-killed
def case_k8s_oom():
    random.seed(303)
    c = Case("kubeflow-trainjob-lightning-memcg-oom")
    hosts = [f"k8s-gpu-n{i}" for i in (11, 12, 13, 14)]
    ips = [f"10.8.3.{i}" for i in (11, 12, 13, 14)]
    pods = ["llama-sft-8b-node-0-0-x7k2p", "llama-sft-8b-node-0-1-m4d9s", "llama-sft-8b-node-0-2-q8r7t", "llama-sft-8b-node-0-3-b2w6n"]
    bad = 2
    t0 = T("2026-11-27T09:58:20")
    st = 1.21
    t_kill = None
    kill_pid = 48251

    last = {}

    def P(n, t):
        # kubectl --timestamps: RFC3339 with nanoseconds, monotonic per container
        ns = int(t.timestamp() * 1e9) + random.randint(1000, 900000)
        ns = max(ns, last.get(n, 0) + random.randint(20000, 400000))
        last[n] = ns
        sec, frac = divmod(ns, 10**9)
        return f"[pod/{pods[n]}/node] {dt.datetime.fromtimestamp(sec, UTC).strftime('%Y-%m-%dT%H:%M:%S')}.{frac:09d}Z "

    t_first = t0 + dt.timedelta(seconds=150)
    t_step = lambda s: t_first + dt.timedelta(seconds=(s - 1501) * st)
    kill_step = 1746
    t_kill = t_step(kill_step) + dt.timedelta(seconds=0.5)
    for n, h in enumerate(pods):
        f = c.f(f"logs/{hosts[n]}/{pods[n]}.log")
        tt = t0 + dt.timedelta(seconds=2)
        f.add(P(n, tt) + "W1127 09:58:22.418000 1 torch/distributed/run.py:793] ")
        f.add(P(n, tt) + "W1127 09:58:22.418000 1 torch/distributed/run.py:793] *****************************************")
        f.add(P(n, tt) + "W1127 09:58:22.418000 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        f.add(P(n, tt) + "W1127 09:58:22.418000 1 torch/distributed/run.py:793] *****************************************")
        for lr in range(8):
            f.add(P(n, tt + dt.timedelta(seconds=9)) + "/usr/local/lib/python3.11/dist-packages/huggingface_hub/file_download.py:1150: FutureWarning: `resume_download` is deprecated and will be removed in version 1.0.0. Downloads always resume when possible. If you want to force a new download, use `force_download=True`.")
            f.add(P(n, tt + dt.timedelta(seconds=9)) + "  warnings.warn(")
        for lr in range(8):
            f.add(P(n, tt + dt.timedelta(seconds=14)) + f"Initializing distributed: GLOBAL_RANK: {8 * n + lr}, MEMBER: {8 * n + lr + 1}/32")
        if n == 0:
            f.add(P(n, tt + dt.timedelta(seconds=15)) + "GPU available: True (cuda), used: True")
            f.add(P(n, tt + dt.timedelta(seconds=15)) + "TPU available: False, using: 0 TPU cores")
            f.add(P(n, tt + dt.timedelta(seconds=15)) + "HPU available: False, using: 0 HPUs")
            f.add(P(n, tt + dt.timedelta(seconds=16)) + "----------------------------------------------------------------------------------------------------")
            f.add(P(n, tt + dt.timedelta(seconds=16)) + "distributed_backend=nccl")
            f.add(P(n, tt + dt.timedelta(seconds=16)) + "All distributed processes registered. Starting with 32 processes")
            f.add(P(n, tt + dt.timedelta(seconds=16)) + "----------------------------------------------------------------------------------------------------")
            f.add(P(n, tt + dt.timedelta(seconds=16)) + "")
        f.add(P(n, tt + dt.timedelta(seconds=20)) + f"{pods[n]}:{200 + 11 * n}:{200 + 11 * n} [0] NCCL INFO Bootstrap : Using eth0:10.244.{5 + n}.19<0>")
        f.add(P(n, tt + dt.timedelta(seconds=20)) + f"{pods[n]}:{200 + 11 * n}:{200 + 11 * n} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB eth0:10.244.{5 + n}.19<0>")
        f.add(P(n, tt + dt.timedelta(seconds=21)) + f"LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        if n == 0:
            f.add(P(n, tt + dt.timedelta(seconds=40)) + "Restoring states from the checkpoint path at /mnt/ckpt/llama-sft-8b/step=1500.ckpt")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "  | Name  | Type             | Params | Mode ")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "---------------------------------------------------")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "0 | model | LlamaForCausalLM | 250 M  | train")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "---------------------------------------------------")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "250 M     Trainable params")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "0         Non-trainable params")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "250 M     Total params")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "1,003.127 Total estimated model params size (MB)")
            f.add(P(n, tt + dt.timedelta(seconds=41)) + "Restored all states from the checkpoint at /mnt/ckpt/llama-sft-8b/step=1500.ckpt")
        mem = 212.4 if n != bad else 331.0
        loss = 1.402
        for s in range(1510, kill_step, 10):
            tl = t_step(s)
            if n == 0:
                loss -= 0.0006 + random.uniform(-0.004, 0.004)
                f.add(P(n, tl) + f"step={s} loss={loss:.4f} lr={2e-5 * (1 - s / 6000):.3e} tokens/s={random.randint(404000, 409000)} step_time={st + random.uniform(-0.01, 0.01):.3f}s")
            if s % 50 == 0:
                mem += (random.uniform(-0.4, 0.4) if n != bad else random.uniform(28.5, 31.0))
                f.add(P(n, tl) + f"[hostmem] node_rank={n} rss_total={mem:.1f}GiB limit=480.0GiB dataloader_workers=96")
            if s == 1600 and n == 1:
                f.add(P(n, tl) + "/usr/local/lib/python3.11/dist-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 12 worker processes in total. Our suggested max number of worker in current system is 11, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.")
                f.add(P(n, tl) + "  warnings.warn(")
        if n == bad:
            f.add(P(n, t_kill - dt.timedelta(seconds=0.3)) + "Token indices sequence length is longer than the specified maximum sequence length for this model (31877 > 8192). Running this sequence through the model will result in indexing er")
        else:
            te = t_kill + dt.timedelta(seconds=41)
            peer = 8 * n + (0 if n > bad else 7)
            gid = f"{peer}"
            f.add(P(n, te) + f"[rank{peer}]:[E1127 {te.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} ProcessGroupNCCL.cpp:1824] [PG ID 0 PG GUID 0(default_pg) Rank {peer}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5")
            f.add(P(n, te) + "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
            f.add(P(n, te) + "Last error:")
            f.add(P(n, te) + f"NET/IB : Got completion from peer 10.244.7.19<{random.randint(40000, 60000)}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::a088:c203:2b:{4100 + n:x} remoteGidsfe80::a088:c203:2b:4102")
            f.add(P(n, te) + "Exception raised from checkForNCCLErrorsInternal at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2027 (most recent call first):")
            f.add(P(n, te) + "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c2b8b9446 in /usr/local/lib/python3.11/dist-packages/torch/lib/libc10.so)")
            tf = te + dt.timedelta(seconds=6)
            pid0 = 211 + 7 * n
            f.add(P(n, tf) + f"E1127 {tf.strftime('%H:%M:%S')}.771000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: {pid0}) of binary: /usr/bin/python3")
            for l in ["Traceback (most recent call last):",
                      '  File "/usr/local/bin/torchrun", line 8, in <module>',
                      "    sys.exit(main())",
                      '  File "/usr/local/lib/python3.11/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
                      "    return f(*args, **kwargs)",
                      '  File "/usr/local/lib/python3.11/dist-packages/torch/distributed/run.py", line 919, in main',
                      "    run(args)",
                      '  File "/usr/local/lib/python3.11/dist-packages/torch/distributed/run.py", line 910, in run',
                      "    elastic_launch(",
                      '  File "/usr/local/lib/python3.11/dist-packages/torch/distributed/launcher/api.py", line 138, in __call__',
                      "    return launch_agent(self._config, self._entrypoint, list(args))",
                      '  File "/usr/local/lib/python3.11/dist-packages/torch/distributed/launcher/api.py", line 269, in launch_agent',
                      "    raise ChildFailedError(",
                      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                      "============================================================",
                      "sft_train.py FAILED",
                      "------------------------------------------------------------",
                      "Failures:",
                      "  <NO_OTHER_FAILURES>",
                      "------------------------------------------------------------",
                      "Root Cause (first observed failure):",
                      "[0]:",
                      f"  time      : {tf.strftime('%Y-%m-%d_%H:%M:%S')}",
                      f"  host      : {pods[n]}",
                      f"  rank      : {8 * n} (local_rank: 0)",
                      f"  exitcode  : -6 (pid: {pid0})",
                      "  error_file: <N/A>",
                      f"  traceback : Signal 6 (SIGABRT) received by PID {pid0}",
                      "============================================================"]:
                f.add(P(n, tf) + l)
    # probes on the node that hosted pod 2
    h = hosts[bad]
    d = c.f(f"probes/{h}/dmesg.txt")
    boot = t0 - dt.timedelta(days=6, hours=1)
    d.add(f"{dmesg_ts(boot)} Linux version 5.15.0-1057-nvidia (buildd@lcy02-amd64-061) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #57-Ubuntu SMP Tue Jul 16 14:35:41 UTC 2024 (Ubuntu 5.15.0-1057.57-nvidia 5.15.160)")
    d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=70))} NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024")
    d.add(f"{dmesg_ts(t0 - dt.timedelta(seconds=8))} IPv6: ADDRCONF(NETDEV_CHANGE): cali7d1f0e2a9b4: link becomes ready")
    pod_uid = "3f0c2b8e_1d4a_4c7e_9f21_7a6b5c4d3e2f"
    cid = "9c1e7f04b2d8a6c35e17f90d4b2a8c6e1f3d5b7a9c0e2f4a6b8d0c1e3f5a7b9d"
    memcg = f"/kubepods.slice/kubepods-pod{pod_uid}.slice/cri-containerd-{cid}.scope"
    tk = t_kill
    K = lambda: dmesg_ts(tk)
    d.add(f"{K()} pt_data_worker invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=-997")
    d.add(f"{K()} CPU: 73 PID: 51764 Comm: pt_data_worker Not tainted 5.15.0-1057-nvidia #57-Ubuntu")
    d.add(f"{K()} Hardware name: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 03/28/2024")
    d.add(f"{K()} Call Trace:")
    d.add(f"{K()}  <TASK>")
    for fr in ["dump_stack_lvl+0x4a/0x63", "dump_header+0x4a/0x1f4", "oom_kill_process.cold+0xb/0x10",
               "out_of_memory+0x106/0x2e0", "mem_cgroup_out_of_memory+0x13b/0x160", "try_charge_memcg+0x68a/0x740",
               "charge_memcg+0x45/0xb0", "__mem_cgroup_charge+0x2d/0x90", "do_anonymous_page+0x11b/0x3c0",
               "__handle_mm_fault+0x847/0x900", "handle_mm_fault+0xd8/0x2c0", "do_user_addr_fault+0x1c2/0x690",
               "exc_page_fault+0x77/0x170", "asm_exc_page_fault+0x27/0x30"]:
        d.add(f"{K()}  {fr}")
    d.add(f"{K()} RIP: 0033:0x7f9a1c6a3a1b")
    d.add(f"{K()}  </TASK>")
    d.add(f"{K()} memory: usage 503316480kB, limit 503316480kB, failcnt 88214", key="usage")
    d.add(f"{K()} swap: usage 0kB, limit 0kB, failcnt 0")
    d.add(f"{K()} Memory cgroup stats for {memcg}:")
    d.add(f"{K()} anon 509814636544")
    d.add(f"{K()} file 1237843968")
    d.add(f"{K()} shmem 2147483648")
    d.add(f"{K()} Tasks state (memory values in pages):")
    d.add(f"{K()} [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name")
    d.add(f"{K()} [  48102]     0 48102   842113    61211   778240        0          -997 torchrun")
    for lr in range(8):
        d.add(f"{K()} [  {kill_pid - 6 + lr * 0 + lr:5d}]     0 {kill_pid - 6 + lr:5d} {153086420 + lr * 1117:9d} {15308642 + lr * 771 + (2000000 if lr == 6 else 0):8d} {140236800 + lr * 4096:9d}        0          -997 python3")
    for w in range(4):
        d.add(f"{K()} [  {51760 + w:5d}]     0 {51760 + w:5d} {9120331 + w * 13:9d} {6411028 + w * 977:8d} 53968896        0          -997 pt_data_worker")
    d.add(f"{K()} oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-{cid}.scope,mems_allowed=0-1,oom_memcg={memcg},task_memcg={memcg},task=python3,pid={kill_pid},uid=0", key="constraint")
    d.add(f"{K()} Memory cgroup out of memory: Killed process {kill_pid} (python3) total-vm:612345680kB, anon-rss:69234568kB, file-rss:412344kB, shmem-rss:2097152kB, UID:0 pgtables:560948kB oom_score_adj:-997", key="killed")
    d.add(f"{K()} Tasks in {memcg} are going to be killed due to memory.oom.group set")
    for p in [48102] + [kill_pid - 6 + lr for lr in range(8) if kill_pid - 6 + lr != kill_pid] + [51760, 51761, 51762, 51763]:
        nm = "torchrun" if p == 48102 else ("pt_data_worker" if p >= 51760 else "python3")
        d.add(f"{K()} Memory cgroup out of memory: Killed process {p} ({nm}) total-vm:{random.randint(3000000, 612345680)}kB, anon-rss:{random.randint(200000, 62000000)}kB, file-rss:{random.randint(10000, 400000)}kB, shmem-rss:0kB, UID:0 pgtables:{random.randint(2000, 540000)}kB oom_score_adj:-997")
    c.indicate(f"probes/{h}/dmesg.txt", "constraint")
    c.indicate(f"probes/{h}/dmesg.txt", "killed")
    pdsc = c.f(f"probes/{h}/kubectl-describe-pod.txt")
    fmt = lambda t: t.strftime("%a, %d %b %Y %H:%M:%S +0000")
    for l in [f"Name:             {pods[bad]}", "Namespace:        ml-train", "Priority:         0",
              "Service Account:  default", f"Node:             {h}/{ips[bad]}", f"Start Time:       {fmt(t0 - dt.timedelta(seconds=8))}",
              "Labels:           batch.kubernetes.io/controller-uid=5b3d1f0a-7c2e-4e91-8a6b-2f4d9c1e7a30",
              "                  batch.kubernetes.io/job-completion-index=2",
              "                  batch.kubernetes.io/job-name=llama-sft-8b-node-0",
              "                  jobset.sigs.k8s.io/jobset-name=llama-sft-8b",
              "                  jobset.sigs.k8s.io/replicatedjob-name=node",
              "                  trainer.kubeflow.org/trainjob-ancestor-step=trainer",
              "Annotations:      batch.kubernetes.io/job-completion-index: 2",
              "Status:           Failed", "IP:               10.244.7.19", "IPs:", "  IP:           10.244.7.19",
              "Controlled By:  Job/llama-sft-8b-node-0", "Containers:", "  node:",
              f"    Container ID:  containerd://{cid}", "    Image:         nvcr.io/nvidia/pytorch:24.07-py3",
              "    Image ID:      nvcr.io/nvidia/pytorch@sha256:4e3d1c0b9a8f7e6d5c4b3a291807f6e5d4c3b2a1908f7e6d5c4b3a2918070f6e",
              "    Port:          29400/TCP", "    Host Port:     0/TCP", "    Command:", "      torchrun", "    Args:",
              "      --nnodes=4", "      --nproc_per_node=8", "      sft_train.py", "      --config=configs/llama3-8b-sft.yaml",
              "    State:          Terminated"]:
        pdsc.add(l)
    pdsc.add("      Reason:       OOMKilled", key="reason")
    pdsc.add("      Exit Code:    137", key="exit")
    for l in [f"      Started:      {fmt(t0)}", f"      Finished:     {fmt(t_kill)}", "    Ready:          False",
              "    Restart Count:  0", "    Limits:", "      cpu:             88", "      memory:          480Gi",
              "      nvidia.com/gpu:  8", "      rdma/ib:         8", "    Requests:", "      cpu:             88",
              "      memory:          480Gi", "      nvidia.com/gpu:  8", "      rdma/ib:         8",
              "    Environment:", "      PET_NNODES:          4", "      PET_NPROC_PER_NODE:  8", "      PET_NODE_RANK:        (v1:metadata.annotations['batch.kubernetes.io/job-completion-index'])",
              "      PET_MASTER_ADDR:     llama-sft-8b-node-0-0.llama-sft-8b", "      PET_MASTER_PORT:     29400",
              "    Mounts:", "      /dev/shm from dshm (rw)", "      /mnt/ckpt from ckpt (rw)",
              "Conditions:", "  Type                        Status", "  PodReadyToStartContainers   False",
              "  Initialized                 True", "  Ready                       False", "  ContainersReady             False",
              "  PodScheduled                True", "Volumes:", "  dshm:", "    Type:       EmptyDir (a temporary directory that shares a pod's lifetime)",
              "    Medium:     Memory", "    SizeLimit:  64Gi", "  ckpt:", "    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)",
              "    ClaimName:  ckpt-lustre", "    ReadOnly:   false", "QoS Class:                   Guaranteed",
              "Node-Selectors:              nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
              "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
              "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
              "                             nvidia.com/gpu:NoSchedule op=Exists",
              "Events:", "  Type    Reason     Age   From               Message", "  ----    ------     ----  ----               -------",
              f"  Normal  Scheduled  9m    default-scheduler  Successfully assigned ml-train/{pods[bad]} to {h}",
              "  Normal  Pulled     9m    kubelet            Container image \"nvcr.io/nvidia/pytorch:24.07-py3\" already present on machine",
              "  Normal  Created    9m    kubelet            Created container node", "  Normal  Started    9m    kubelet            Started container node"]:
        pdsc.add(l)
    c.indicate(f"probes/{h}/kubectl-describe-pod.txt", "reason")
    c.indicate(f"probes/{h}/kubectl-describe-pod.txt", "exit")
    nodes = [{"host": h2, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8), "pod": pods[i]} for i, h2 in enumerate(hosts)]
    job = job_yaml("llama-sft-8b", "llama3-8b-sft-longctx", "fsdp", "failed", iso(t0), iso(t_kill + dt.timedelta(seconds=60)), 137, 8,
                   (1, 1, 32, 1), nodes,
                   [("d41c8a9", "2026-11-22T13:00:00Z", "sft: pack sequences to 8k"),
                    ("7e2b6f1", "2026-11-26T10:15:00Z", "dataloader: 12 workers, prefetch_factor 8")],
                   [(1000, "2026-11-27T03:12:40Z", "/mnt/ckpt/llama-sft-8b/step=1000.ckpt", "true"),
                    (1500, "2026-11-27T09:41:02Z", "/mnt/ckpt/llama-sft-8b/step=1500.ckpt", "true")],
                   "scheduler: kubernetes\ntrainjob: ml-train/llama-sft-8b (runtime torch-distributed)\nhistory: [llama-sft-8b-0412]\n")
    c.write(job, {
        "fault": "host_oom_killed", "category": "infrastructure",
        "root_cause": f"the container of pod {pods[bad]} on {hosts[bad]} hit its 480Gi memory limit (host RAM of that pod's DataLoader workers grew every step) and the kernel's memcg OOM killer killed rank {8 * bad + 6} and, via memory.oom.group, the whole container (OOMKilled, exit code 137); the other pods then failed on NCCL remote errors",
        "faulty_nodes": [hosts[bad]], "stage": "training", "iteration": kill_step,
        "actions": [{"kind": "restart", "from_step": 1500}],
    })
    return c


# ==============================================================================================
# 4. metaseq (fairseq-style JSON train_inner) on Slurm, NaN after a data-mixture commit
def case_metaseq_nan():
    random.seed(404)
    c = Case("metaseq-nan-after-datamix-commit")
    hosts = [f"ms-h100-0{i}" for i in range(1, 5)]
    ips = [f"10.60.1.{10 + i}" for i in range(1, 5)]
    t0 = T("2026-11-26T18:05:00")
    upd_t = 2.63
    first_nan = 21631
    t_u = lambda u: t0 + dt.timedelta(seconds=160 + (u - 21000) * upd_t)

    def L(t, lvl, mod, msg):
        return f"{t.strftime('%Y-%m-%d %H:%M:%S')} | {lvl} | {mod} | {msg}"

    tb = [
        "Traceback (most recent call last):",
        '  File "/shared/metaseq/metaseq/cli/train.py", line 798, in <module>',
        "    cli_main()",
        '  File "/shared/metaseq/metaseq/cli/train.py", line 794, in cli_main',
        "    distributed_utils.call_main(cfg, main)",
        '  File "/shared/metaseq/metaseq/distributed/utils.py", line 289, in call_main',
        "    return main(cfg, **kwargs)",
        '  File "/shared/metaseq/metaseq/cli/train.py", line 189, in main',
        "    valid_losses, should_stop = train(cfg, trainer, task, epoch_itr)",
        '  File "/shared/metaseq/metaseq/cli/train.py", line 330, in train',
        "    log_output = train_step(i, samples)",
        '  File "/shared/metaseq/metaseq/cli/train.py", line 258, in train_step',
        "    log_output = trainer.train_step(samples)",
        '  File "/shared/metaseq/metaseq/trainer.py", line 866, in train_step',
        '    raise FloatingPointError("gradients are Nan/Inf")',
    ]
    for n, h in enumerate(hosts):
        f = c.f(f"logs/{h}/opt-13b-pt-5512937.{h}.log")
        for lr in range(8):
            f.add("/shared/metaseq/metaseq/modules/megatron/mpu/layers.py:312: FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.")
            f.add("  def forward(ctx, input, weight, bias, async_grad_allreduce, sequence_parallel):")
        f.add(f"{h}:{71000 + n * 37}:{71000 + n * 37} [0] NCCL INFO Bootstrap : Using ibp26s0:{ips[n]}<0>")
        f.add(f"{h}:{71000 + n * 37}:{71000 + n * 37} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB [4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB ; OOB ibp26s0:{ips[n]}<0>")
        if n == 0:
            f.add(L(t0 + dt.timedelta(seconds=40), "INFO", "metaseq.cli.train", "training on 32 devices (GPUs/TPUs)"))
            f.add(L(t0 + dt.timedelta(seconds=40), "INFO", "metaseq.cli.train", "max tokens per GPU = None and batch size per GPU = 8"))
            f.add(L(t0 + dt.timedelta(seconds=41), "INFO", "metaseq.tasks.streaming_language_modeling", "loading data for split train: mixture v7 (pile_cc 0.31, github 0.18, arxiv 0.09, books 0.12, wiki 0.06, stackexchange 0.12, forum_crawl_v3 0.12)"))
            f.add(L(t0 + dt.timedelta(seconds=150), "INFO", "metaseq.checkpoint_utils", "Done reading from disk"))
            f.add(L(t0 + dt.timedelta(seconds=151), "INFO", "metaseq.trainer", "Loaded checkpoint /checkpoint/opt-13b-pt/checkpoint_21000.pt (epoch 1 @ 21000 updates)"))
            f.add(L(t0 + dt.timedelta(seconds=152), "INFO", "metaseq.trainer", "loading train data for epoch 1"))
            f.add(L(t0 + dt.timedelta(seconds=155), "INFO", "metaseq.trainer", "begin training epoch 1"))
            f.add(L(t0 + dt.timedelta(seconds=155), "INFO", "metaseq.cli.train", "Start iterating over samples"))
            loss, gn = 1.934, 0.27
            for u in range(21010, first_nan, 10):
                if u < 21480:
                    loss += random.uniform(-0.012, 0.011)
                    gn = 0.27 + random.uniform(-0.03, 0.04)
                elif u < 21590:
                    loss += random.uniform(0.004, 0.02)
                    gn *= random.uniform(1.15, 1.35)
                else:
                    loss += random.uniform(0.25, 0.6)
                    gn *= random.uniform(2.2, 3.5)
                rec = {"epoch": 1, "actv_norm": f"{780 + random.uniform(-9, 9) + (u - 21480) * 1.9 * (u > 21480):.3f}",
                       "pos_norm": "0.312", "tok_norm": f"{1.447 + random.uniform(-0.002, 0.002):.3f}", "emb_norm": "0.019",
                       "docsperex": f"{random.uniform(7.1, 9.4):.2f}", "loss": f"{loss:.3f}", "ppl": f"{2 ** loss:.2f}",
                       "wps": f"{random.randint(396000, 402000)}", "ups": f"{1 / upd_t:.2f}", "wpb": "1048576", "bsz": "512",
                       "num_updates": str(u), "lr": f"{1.2e-4 * (1 - u / 140000):.4e}", "gnorm": f"{gn:.3f}",
                       "clip": "100" if gn > 1.0 else "0", "loss_scale": "1", "train_wall": "26",
                       "cuda_gb_allocated": "41.3", "cuda_gb_reserved": "58.1", "cuda_gb_free": "21.1",
                       "wall": str(int((t_u(u) - t0).total_seconds()) + 43210)}
                f.add(L(t_u(u), "INFO", "train_inner", json.dumps(rec)))
                if u == 21200:
                    f.add(L(t_u(u), "WARNING", "metaseq.data.jsonl_dataset", "Retrying read of /data/pretrain/forum_crawl_v3/shard_00119.jsonl after OSError (attempt 1 of 3)"))
        tnan = t_u(first_nan) - dt.timedelta(seconds=1)
        # NanDetector re-run on local rank 0 of every node, then every rank raises
        f.add(L(tnan, "WARNING", "metaseq.nan_detector", "NaN detected in output of decoder.layers.27.self_attn.out_proj, shape: torch.Size([2048, 8, 5120]), forward input max: 611.5, input min: -598.0"),
              key="nan" if n == 0 else None)
        f.add(L(tnan, "WARNING", "metaseq.nan_detector", "NaN detected in output of decoder.layers.27.self_attn, shape: torch.Size([2048, 8, 5120]), forward"))
        f.add(L(tnan, "WARNING", "metaseq.nan_detector", "NaN detected in output of decoder.output_projection, shape: torch.Size([2048, 8, 12576]), forward"))
        for lr in range(8):
            for l in tb:
                f.add(l)
            f.add("FloatingPointError: gradients are Nan/Inf", key=(f"fpe" if lr == 0 and n in (0, 2) else None))
        if n == 0:
            c.indicate(f"logs/{h}/opt-13b-pt-5512937.{h}.log", "nan")
        if n in (0, 2):
            c.indicate(f"logs/{h}/opt-13b-pt-5512937.{h}.log", "fpe")
    f0 = c.files[f"logs/{hosts[0]}/opt-13b-pt-5512937.{hosts[0]}.log"]
    for n, h in enumerate(hosts):
        f0.add(f"srun: error: {h}: tasks {8 * n}-{8 * n + 7}: Exited with exit code 1")
    nodes = [{"host": h, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8)} for i, h in enumerate(hosts)]
    job = job_yaml("5512937", "opt-13b-pt", "other", "failed", iso(t0), iso(t_u(first_nan) + dt.timedelta(seconds=20)), 1, 8,
                   (8, 1, 4, 1), nodes,
                   [("b1e04d7", "2026-11-19T10:20:00Z", "lr schedule: cosine to 10%"),
                    ("3fa9c21", "2026-11-26T17:40:00Z", "data: add forum_crawl_v3 to pretraining mixture (weight 0.12), rebalance stackexchange")],
                   [(20000, "2026-11-26T09:14:00Z", "/checkpoint/opt-13b-pt/checkpoint_20000.pt", "true"),
                    (21000, "2026-11-26T17:58:30Z", "/checkpoint/opt-13b-pt/checkpoint_21000.pt", "true")],
                   "scheduler: slurm\nspares: 0\nhistory: [5511804, 5512266]\n")
    c.write(job, {
        "fault": "nan_loss_divergence", "category": "data",
        "root_cause": "after commit 3fa9c21 added forum_crawl_v3 to the data mixture, the run resumed from update 21000 diverged: gradient norm grew from ~0.3 to >100 and at update 21631 the gradients became NaN on every rank (NanDetector: decoder.layers.27.self_attn.out_proj), so every rank raised FloatingPointError",
        "faulty_nodes": [], "stage": "training", "iteration": first_nan,
        "actions": [{"kind": "restart", "from_step": 21000}],
    })
    return c


# ==============================================================================================
# 5. PaddlePaddle launcher (python -m paddle.distributed.launch), one node with 40 GB A100s
def case_paddle_oom():
    random.seed(505)
    c = Case("paddle-launch-cuda-oom-a100-40g-node")
    hosts = [f"pd-a100-{i}" for i in (11, 12, 13, 14)]
    ips = [f"10.77.2.{i}" for i in (11, 12, 13, 14)]
    bad, bad_local = 2, 3
    t0 = T("2026-11-27T08:01:02")

    ms_state = {}

    def ms(t, stream):
        key = (stream, t.strftime('%Y%m%d%H%M%S'))
        prev = ms_state.get(stream)
        v = (prev[1] + random.randint(0, 3)) if prev and prev[0] == key else random.randint(100, 300)
        ms_state[stream] = (key, min(v, 999))
        return f"{min(v, 999):03d}"

    def LI(t, msg, lvl="INFO"):
        return f"LAUNCH {lvl} {t.strftime('%Y-%m-%d %H:%M:%S')},{ms(t, 'launch')} {msg}"

    def PN(t, msg, lvl="INFO", where=""):
        return f"[{t.strftime('%Y-%m-%d %H:%M:%S')},{ms(t, 'worker')}] [{lvl:>8}] {where}- {msg}"

    t_fail = t0 + dt.timedelta(seconds=251)
    cmd = "['/usr/bin/python', '-u', 'run_pretrain.py', 'llm/config/llama/pretrain-llama2_13b-tp4pp2.json']"
    for n, h in enumerate(hosts):
        lg = c.f(f"logs/{h}/launch.log")
        lg.add(LI(t0, "-----------  Configuration  ----------------------"))
        for k, v in [("auto_parallel_config", "None"), ("auto_tuner_json", "None"), ("devices", "0,1,2,3,4,5,6,7"),
                     ("elastic_level", "-1"), ("elastic_timeout", "30"), ("enable_gpu_log", "True"), ("gloo_port", "6767"),
                     ("host", "None"), ("ips", "None"), ("job_id", "llama13b-pt"), ("legacy", "False"), ("log_dir", "log"),
                     ("log_level", "INFO"), ("log_overwrite", "False"), ("master", f"{ips[0]}:8090"), ("max_restart", "3"),
                     ("nnodes", "4"), ("nproc_per_node", "None"), ("rank", "-1"), ("run_mode", "collective"),
                     ("server_num", "None"), ("servers", ""), ("sort_ip", "False"), ("start_port", "6070"),
                     ("trainer_num", "None"), ("trainers", ""), ("training_script", "run_pretrain.py"),
                     ("training_script_args", "['llm/config/llama/pretrain-llama2_13b-tp4pp2.json']"), ("with_gloo", "1")]:
            lg.add(LI(t0, f"{k}: {v}"))
        lg.add(LI(t0, "--------------------------------------------------"))
        lg.add(LI(t0 + dt.timedelta(seconds=1), "Job: llama13b-pt, mode collective, replicas 4[4:4], elastic False"))
        lg.add(LI(t0 + dt.timedelta(seconds=1), "Waiting peer start..."))
        podid = "".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
        lg.add(LI(t0 + dt.timedelta(seconds=9), f"Run Pod: {podid}, replicas 8, status ready"))
        lg.add(LI(t0 + dt.timedelta(seconds=9), f"Watching Pod: {podid}, replicas 8, status running"))
        wl = [0] + ([bad_local] if n == bad else [])
        for lr in wl:
            w = c.f(f"logs/{h}/workerlog.{lr}")
            gr = 8 * n + lr
            tw = t0 + dt.timedelta(seconds=12)
            w.add(f"/usr/local/lib/python3.10/dist-packages/paddle/utils/cpp_extension/extension_utils.py:686: UserWarning: No ccache found. Please be aware that recompiling all source files may be required. You can download and install ccache from: https://github.com/ccache/ccache/blob/master/doc/INSTALL.md")
            w.add("  warnings.warn(warning_message)")
            w.add("/usr/local/lib/python3.10/dist-packages/_distutils_hack/__init__.py:26: UserWarning: Setuptools is replacing distutils.")
            w.add('  warnings.warn("Setuptools is replacing distutils.")')
            w.add(f"I1127 08:01:{14 + lr:02d}.{random.randint(100000, 999999)} {52000 + gr} tcp_utils.cc:{130 if gr else 181}] " + ("The server starts to listen on IP_ANY:44257" if gr == 0 else f"Successfully connected to {ips[0]}:44257"))
            w.add(f"W1127 08:01:{16 + lr:02d}.{random.randint(100000, 999999)} {52000 + gr} gpu_resources.cc:119] Please NOTE: device: {lr}, GPU Compute Capability: 8.0, Driver API Version: 12.4, Runtime API Version: 12.0")
            w.add(f"W1127 08:01:{16 + lr:02d}.{random.randint(100000, 999999)} {52000 + gr} gpu_resources.cc:164] device: {lr}, cuDNN Version: 8.9.")
            w.add(PN(tw + dt.timedelta(seconds=6), "distributed strategy initialized", where="distributed_strategy.py:214 "))
            w.add(PN(tw + dt.timedelta(seconds=6), f"Hybrid parallel configuration: dp_degree=4, mp_degree=4, pp_degree=2, sharding_degree=1, sep_degree=1", where="topology.py:357 "))
            w.add(PN(tw + dt.timedelta(seconds=8), "The global seed is set to 42, local seed is set to 50 and random seed is set to 142."))
            w.add(PN(tw + dt.timedelta(seconds=9), "Loading configuration file llm/config/llama/pretrain-llama2_13b-tp4pp2.json"))
            w.add(PN(tw + dt.timedelta(seconds=70), "max_steps is given, it will override any value given in num_train_epochs"))
            w.add(PN(tw + dt.timedelta(seconds=71), "Using half precision"))
            w.add(PN(tw + dt.timedelta(seconds=71), "============================================================"))
            w.add(PN(tw + dt.timedelta(seconds=71), "     Training Configuration Arguments      "))
            for k, v in [("per_device_train_batch_size", "1"), ("gradient_accumulation_steps", "32"), ("max_seq_length", "4096"),
                         ("recompute", "False"), ("bf16", "True"), ("tensor_parallel_degree", "4"), ("pipeline_parallel_degree", "2"),
                         ("sharding", "[]"), ("resume_from_checkpoint", "output/llama2-13b/checkpoint-3000")]:
                w.add(PN(tw + dt.timedelta(seconds=71), f"{k:<30}:{v}", where="training_args.py "))
            w.add(PN(tw + dt.timedelta(seconds=150), "Loading model from output/llama2-13b/checkpoint-3000 ."))
            w.add(PN(tw + dt.timedelta(seconds=210), "***** Running training *****"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Num examples = 20,480,000"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Num Epochs = 1"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Instantaneous batch size per device = 1"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Total train batch size (w. parallel, distributed & accumulation) = 128"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Gradient Accumulation steps = 32"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Total optimization steps = 160,000"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Total num train samples = 20,480,000"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Continuing training from checkpoint, will skip to saved global_step"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Continuing training from epoch 0"))
            w.add(PN(tw + dt.timedelta(seconds=210), "  Continuing training from global step 3000"))
            w.add(PN(tw + dt.timedelta(seconds=211), "  Number of trainable parameters = 1,627,520,000 (per device)"))
            if n == bad and lr == bad_local:
                for l in ["Traceback (most recent call last):",
                          '  File "/workspace/PaddleNLP/llm/run_pretrain.py", line 631, in <module>',
                          "    main()",
                          '  File "/workspace/PaddleNLP/llm/run_pretrain.py", line 609, in main',
                          "    train_result = trainer.train(resume_from_checkpoint=checkpoint)",
                          '  File "/workspace/PaddleNLP/paddlenlp/trainer/trainer.py", line 829, in train',
                          "    return self._inner_training_loop(",
                          '  File "/workspace/PaddleNLP/paddlenlp/trainer/trainer.py", line 1048, in _inner_training_loop',
                          "    tr_loss_step = self.training_pipeline_step(model, inputs)",
                          '  File "/workspace/PaddleNLP/paddlenlp/trainer/trainer.py", line 2245, in training_pipeline_step',
                          "    loss = model.forward_backward_pipeline(inputs, self.scaler if self.do_grad_scaling else None)",
                          '  File "/usr/local/lib/python3.10/dist-packages/paddle/distributed/fleet/meta_parallel/pipeline_parallel.py", line 534, in forward_backward_pipeline',
                          "    output_tensor = self._forward_step(input_tensor, micro_dataset)",
                          '  File "/usr/local/lib/python3.10/dist-packages/paddle/distributed/fleet/meta_parallel/pipeline_parallel.py", line 827, in _forward_step',
                          "    output_tensor = self._layers.forward(input_tensor, chunk_id=chunk_id)",
                          '  File "/usr/local/lib/python3.10/dist-packages/paddle/distributed/fleet/meta_parallel/parallel_layers/pp_layers.py", line 764, in forward',
                          "    input = self.forward_function(0, len(self.run_function))(input)",
                          '  File "/usr/local/lib/python3.10/dist-packages/paddle/nn/functional/activation.py", line 1088, in silu',
                          "    return _C_ops.silu(x)",
                          "MemoryError: ",
                          "",
                          "--------------------------------------",
                          "C++ Traceback (most recent call last):",
                          "--------------------------------------",
                          "0   silu_ad_func(paddle::Tensor const&)",
                          "1   paddle::experimental::silu(paddle::Tensor const&)",
                          "2   void phi::ActivationGPUKernel<phi::dtype::bfloat16, phi::GPUContext, phi::funcs::CudaSiluFunctor<phi::dtype::bfloat16> >(phi::GPUContext const&, phi::DenseTensor const&, phi::DenseTensor*, phi::funcs::CudaSiluFunctor<phi::dtype::bfloat16> const&)",
                          "3   phi::DenseTensor::mutable_data(phi::Place const&, phi::DataType, unsigned long)",
                          "4   paddle::memory::allocation::Allocator::Allocate(unsigned long)",
                          "5   paddle::memory::allocation::StatAllocator::AllocateImpl(unsigned long)",
                          "6   paddle::memory::allocation::AutoGrowthBestFitAllocator::AllocateImpl(unsigned long)",
                          "7   paddle::memory::allocation::CUDAAllocator::AllocateImpl(unsigned long)",
                          "8   std::string phi::enforce::GetCompleteTraceBackString<std::string >(std::string&&, char const*, int)",
                          "9   phi::enforce::GetCurrentTraceBackString[abi:cxx11](bool)",
                          "",
                          "----------------------",
                          "Error Message Summary:",
                          "----------------------",
                          "ResourceExhaustedError: ",
                          ""]:
                    w.add(l)
                w.add(f"Out of memory error on GPU {bad_local}. Cannot allocate 270.000000MB memory on GPU {bad_local}, 39.104736GB memory has been allocated and available memory is only 15.812500MB.", key="oom")
                w.add("")
                w.add(f"Please check whether there is any other process using GPU {bad_local}.")
                w.add("1. If yes, please stop them, or start PaddlePaddle on another GPU.")
                w.add("2. If no, please decrease the batch size of your model. ")
                w.add(" (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:86)")
                w.add("")
                c.indicate(f"logs/{h}/workerlog.{lr}", "oom")
        if n == bad:
            gr = 8 * n + bad_local
            lg.add(LI(t_fail, "Pod failed"))
            lg.add(LI(t_fail, "Container failed !!!", lvl="ERROR"))
            lg.add(f"Container rank {bad_local} status failed cmd {cmd} code 1 log log/workerlog.{bad_local} ")
            lg.add(f"env {{'PADDLE_MASTER': '{ips[0]}:8090', 'PADDLE_GLOBAL_SIZE': '32', 'PADDLE_LOCAL_SIZE': '8', 'PADDLE_GLOBAL_RANK': '{gr}', 'PADDLE_LOCAL_RANK': '{bad_local}', 'PADDLE_NNODES': '4', 'PADDLE_TRAINER_ENDPOINTS': '{ips[0]}:6070,{ips[0]}:6071,...,{ips[3]}:6077', 'PADDLE_CURRENT_ENDPOINT': '{ips[n]}:{6070 + bad_local}', 'PADDLE_TRAINER_ID': '{gr}', 'PADDLE_TRAINERS_NUM': '32', 'PADDLE_RANK_IN_NODE': '{bad_local}', 'FLAGS_selected_gpus': '{bad_local}', 'CUDA_VISIBLE_DEVICES': '0,1,2,3,4,5,6,7', 'NCCL_IB_HCA': 'mlx5_0,mlx5_1,mlx5_2,mlx5_3', 'FLAGS_call_stack_level': '2'}}")
            lg.add(LI(t_fail, "------------------------- ERROR LOG DETAIL -------------------------"))
            lg.add("----------------------")
            lg.add("Error Message Summary:")
            lg.add("----------------------")
            lg.add("ResourceExhaustedError: ")
            lg.add("")
            lg.add(f"Out of memory error on GPU {bad_local}. Cannot allocate 270.000000MB memory on GPU {bad_local}, 39.104736GB memory has been allocated and available memory is only 15.812500MB.")
            lg.add("")
            lg.add(f"Please check whether there is any other process using GPU {bad_local}.")
            lg.add("1. If yes, please stop them, or start PaddlePaddle on another GPU.")
            lg.add("2. If no, please decrease the batch size of your model. ")
            lg.add(" (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:86)")
            lg.add("")
            lg.add(LI(t_fail + dt.timedelta(seconds=1), "Exit code 1"))
    # probes: the faulty node and one healthy node, full nvidia-smi -q
    for n in (0, bad):
        h = hosts[n]
        s = c.f(f"probes/{h}/nvidia-smi.txt")
        when = t_fail + dt.timedelta(minutes=3)
        gpus = []
        for i, bus in enumerate(BUSES):
            if n == bad:
                g = smi_gpu(bus, i, product="NVIDIA A100-SXM4-40GB", total=40960, used=4, power=58.3, util=0, sm=210,
                            reasons={"Idle": "Active"})
                gpus.append((g, [("prod", "Product Name"), ("fbtot", "        Total                             : 40960 MiB")] if i == bad_local else []))
            else:
                gpus.append((smi_gpu(bus, i, used=33871, power=88.0, util=0, sm=1410, dram_corr=(1 if i == 6 else 0)), []))
        smi_file(s, when, gpus, driver="550.54.15")
        if n == bad:
            c.indicate(f"probes/{h}/nvidia-smi.txt", "prod")
            c.indicate(f"probes/{h}/nvidia-smi.txt", "fbtot")
    nodes = [{"host": h, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8)} for i, h in enumerate(hosts)]
    job = job_yaml("llama13b-pt-0031", "llama2-13b-pretrain-paddle", "other", "failed", iso(t0), iso(t_fail + dt.timedelta(seconds=75)), 1, 8,
                   (4, 2, 4, 1), nodes,
                   [("c70e5a2", "2026-11-12T08:30:00Z", "pretrain config: tp4 pp2, seq 4096"),
                    ("19bd3f4", "2026-11-21T14:02:00Z", "data: refresh token cache")],
                   [(2000, "2026-11-25T22:10:00Z", "output/llama2-13b/checkpoint-2000", "true"),
                    (3000, "2026-11-26T19:47:00Z", "output/llama2-13b/checkpoint-3000", "true")],
                   "scheduler: slurm\nspares: 1\nhistory: [llama13b-pt-0029, llama13b-pt-0030]\n")
    c.write(job, {
        "fault": "cuda_oom", "category": "user_code",
        "root_cause": f"the resubmitted job was placed on {hosts[bad]}, whose GPUs are A100-SXM4-40GB while the others are 80GB; the tp4/pp2 config without recompute needs ~39 GB per GPU, so GPU {bad_local} of {hosts[bad]} ran out of memory in the first step after resuming from checkpoint-3000",
        "faulty_nodes": [hosts[bad]], "stage": "training", "iteration": 3001,
        "actions": [{"kind": "none"}],
    })
    return c


# ==============================================================================================
# 6. torchx (dist.ddp on Slurm) + torchtitan, hang: one rank stuck in D state on a hung NFS mount
def case_torchx_nfs_hang():
    random.seed(606)
    c = Case("torchx-titan-nfs-dstate-hang")
    hosts = [f"tt-h100-0{i}" for i in (5, 6, 7, 8)]
    ips = [f"10.90.0.{i}" for i in (5, 6, 7, 8)]
    bad, bad_local = 2, 3
    bad_rank = bad * 8 + bad_local
    t0 = T("2026-11-27T09:20:00")
    st = 2.571
    hang_step = 3146
    t_s = lambda s: t0 + dt.timedelta(seconds=175 + (s - 3000) * st)
    t_hang = t_s(hang_step - 1) + dt.timedelta(seconds=0.8)
    pids = [52310 + 401 * n for n in range(4)]

    def P(n, t, r=None):
        r = 8 * n if r is None else r
        return f"trainer/{n} [0]:[rank{r}]:[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{random.randint(0, 999):03d} - root - "

    for n, h in enumerate(hosts):
        f = c.f(f"logs/{h}/trainer-{n}.log")
        r0 = 8 * n
        f.add(f"trainer/{n} [0]:[rank{r0}]:W1127 09:20:04.118000 {pids[n] - 20} torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.")
        f.add(P(n, t0 + dt.timedelta(seconds=9)) + "INFO - Starting job: Llama 3 8B training")
        f.add(f"trainer/{n} [0]:[rank{r0}]:/usr/local/lib/python3.11/dist-packages/torch/distributed/checkpoint/filesystem.py:92: FutureWarning: `torch.distributed._shard.checkpoint` will be deprecated, use `torch.distributed.checkpoint` instead")
        f.add(f"trainer/{n} [0]:[rank{r0}]:  warnings.warn(")
        f.add(P(n, t0 + dt.timedelta(seconds=11)) + "INFO - Building 1-D device mesh with ['dp_shard'], [32]")
        f.add(P(n, t0 + dt.timedelta(seconds=11)) + "INFO - [GC] Initial GC collection. 0.00 seconds.")
        f.add(f"trainer/{n} [0]:[rank{r0}]:{h}:{pids[n]}:{pids[n]} [0] NCCL INFO Bootstrap : Using ibp24s0:{ips[n]}<0>")
        f.add(f"trainer/{n} [0]:[rank{r0}]:{h}:{pids[n]}:{pids[n]} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB [4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB ; OOB ibp24s0:{ips[n]}<0>")
        f.add(P(n, t0 + dt.timedelta(seconds=14)) + "INFO - Loading tokenizer from tokenizer.model")
        f.add(P(n, t0 + dt.timedelta(seconds=15)) + "INFO - Preparing c4_mix dataset from /mnt/datasets/c4_mix")
        f.add(P(n, t0 + dt.timedelta(seconds=31)) + "INFO - Building llama3 8B with TransformerModelArgs(_enforced='This field is used to enforce all fields have defaults.', dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256, multiple_of=1024, ffn_dim_multiplier=1.3, norm_eps=1e-05, rope_theta=500000, max_seq_len=8192, depth_init=True, norm_type='rmsnorm', use_flex_attn=False, attn_mask_type='causal', eos_id=0)")
        f.add(P(n, t0 + dt.timedelta(seconds=33)) + "INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory")
        f.add(P(n, t0 + dt.timedelta(seconds=33)) + "INFO - Model llama3 8B size: 8,030,261,248 total parameters")
        f.add(P(n, t0 + dt.timedelta(seconds=34)) + "INFO - Applied selective activation checkpointing to the model")
        f.add(P(n, t0 + dt.timedelta(seconds=35)) + "INFO - Applied FSDP to the model")
        f.add(P(n, t0 + dt.timedelta(seconds=38)) + "INFO - CUDA memory usage for model: 3.77GiB(4.77%)")
        f.add(P(n, t0 + dt.timedelta(seconds=38)) + "INFO - Checkpointing active. Checkpoints will be loaded from and saved to /lustre/ckpt/llama3-8b-c4mix/checkpoint")
        f.add(P(n, t0 + dt.timedelta(seconds=39)) + "INFO - Loading the checkpoint at step 3000.")
        f.add(P(n, t0 + dt.timedelta(seconds=170)) + "INFO - [GC] GC collection for checkpoint loading. 0.41 seconds.")
        f.add(P(n, t0 + dt.timedelta(seconds=170)) + "INFO - Finished loading the checkpoint in 131.22 seconds.")
        f.add(P(n, t0 + dt.timedelta(seconds=171)) + "INFO - Training starts at step 3001, with local batch size 2, global batch size 64, sequence length 8192, total steps 20000 (warmup 2000)")
        loss = 2.241
        for s in range(3005, hang_step, 5):
            loss = loss - 0.0006 + random.uniform(-0.02, 0.02)
            f.add(P(n, t_s(s)) + f"INFO - step: {s}  loss: {loss:7.4f}  grad_norm: {0.29 + random.uniform(-0.03, 0.05):7.4f}  memory: {58.71 + random.uniform(-0.05, 0.05):5.2f}GiB(74.22%)  tps: {round(6372 + random.uniform(-40, 40)):,}  tflops: {369.0 + random.uniform(-2.5, 2.5):,.2f}  mfu: {37.31 + random.uniform(-0.25, 0.25):.2f}%")
            if s % 50 == 0:
                f.add(P(n, t_s(s)) + "INFO - [GC] Performing periodical GC collection. 0.06 seconds.")
    # stacks: every rank, taken ~40 min into the hang
    t_dump = t_hang + dt.timedelta(minutes=41)
    for r in range(32):
        n = r // 8
        h = hosts[n]
        if n != bad and r % 8 not in (0, 3, 7):
            continue
        pid = pids[n] + (r % 8) * 3
        s = c.f(f"stacks/{h}/rank-{r}.txt")
        s.add(f"Process {pid}: /usr/bin/python3 -u -m torchtitan.train --job.config_file ./torchtitan/models/llama3/train_configs/llama3_8b.toml --training.dataset c4_mix --comm.train_timeout_seconds 10800")
        s.add("Python v3.11.10 (/usr/bin/python3.11)")
        s.add("")
        if r == bad_rank:
            s.add(f"Thread {pid} (idle): \"MainThread\"")
            for fr in ["_read_next_shard (torchtitan/datasets/c4_mix.py:71)", "__iter__ (torchtitan/datasets/c4_mix.py:104)",
                       "__iter__ (torchtitan/datasets/hf_datasets.py:139)",
                       "fetch (torch/utils/data/_utils/fetch.py:33)", "_next_data (torch/utils/data/dataloader.py:757)",
                       "__next__ (torch/utils/data/dataloader.py:701)", "__next__ (torchtitan/components/dataloader.py:48)",
                       "batch_generator (torchtitan/train.py:376)", "train (torchtitan/train.py:521)",
                       "wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
                       "<module> (torchtitan/train.py:612)", "_run_code (<frozen runpy>:88)", "_run_module_as_main (<frozen runpy>:198)"]:
                s.add(f"    {fr}", key=("top" if fr.startswith("_read_next_shard") else None))
        else:
            s.add(f"Thread {pid} (active): \"MainThread\"")
            for fr in ["all_reduce (torch/distributed/distributed_c10d.py:2806)", "wrapper (torch/distributed/c10d_logger.py:83)",
                       "_clip_grad_norm_with_ep (torchtitan/distributed/utils.py:398)", "clip_grad_norm_ (torchtitan/distributed/utils.py:357)",
                       "decorate_context (torch/utils/_contextlib.py:116)", "train_step (torchtitan/train.py:468)",
                       "train (torchtitan/train.py:531)",
                       "wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
                       "<module> (torchtitan/train.py:612)", "_run_code (<frozen runpy>:88)", "_run_module_as_main (<frozen runpy>:198)"]:
                s.add(f"    {fr}")
        s.add(f"Thread {pid + 88} (idle): \"Thread-1 (_pin_memory_loop)\"")
        s.add("    wait (threading.py:331)")
        s.add("    get (queue.py:180)")
        s.add("    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:59)")
        s.add("    run (threading.py:982)")
        s.add("    _bootstrap_inner (threading.py:1045)")
        s.add("    _bootstrap (threading.py:1002)")
    # probes of the stuck node
    h = hosts[bad]
    d = c.f(f"probes/{h}/dmesg.txt")
    boot = t0 - dt.timedelta(days=12)
    d.add(f"{dmesg_ts(boot)} Linux version 5.15.0-119-generic (buildd@lcy02-amd64-075) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 (Ubuntu 5.15.0-119.129-generic 5.15.160)")
    d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=95))} FS-Cache: Netfs 'nfs' registered for caching")
    d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=96))} NFS: Registering the id_resolver key type")
    d.add(f"{dmesg_ts(boot + dt.timedelta(seconds=96))} Key type id_resolver registered")
    d.add(f"{dmesg_ts(t0 - dt.timedelta(hours=7))} nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing")
    tn = t_hang - dt.timedelta(seconds=4)
    d.add(f"{dmesg_ts(tn)} nfs: server nfs-data01 not responding, still trying", key="nfs")
    for k in range(3):
        th = t_hang + dt.timedelta(seconds=121 * (k + 1) + 2)
        d.add(f"{dmesg_ts(th)} INFO: task python3:{pids[bad] + bad_local * 3} blocked for more than {120 * (k + 1) if k < 2 else 362} seconds.", key=("hung" if k == 0 else None))
        d.add(f"{dmesg_ts(th)}       Tainted: P           OE     5.15.0-119-generic #129-Ubuntu")
        d.add(f"{dmesg_ts(th)} \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.")
        d.add(f"{dmesg_ts(th)} task:python3         state:D stack:    0 pid:{pids[bad] + bad_local * 3} ppid:{pids[bad] - 20} flags:0x00004002", key=("stateD" if k == 0 else None))
        d.add(f"{dmesg_ts(th)} Call Trace:")
        d.add(f"{dmesg_ts(th)}  <TASK>")
        for fr in ["__schedule+0x24e/0x590", "schedule+0x69/0x110", "rpc_wait_bit_killable+0x1e/0xa0 [sunrpc]",
                   "__wait_on_bit+0x33/0xa0", "out_of_line_wait_on_bit+0x8d/0xb0", "__rpc_execute+0x11b/0x450 [sunrpc]",
                   "rpc_execute+0xa0/0xe0 [sunrpc]", "rpc_run_task+0x134/0x170 [sunrpc]", "nfs4_do_call_sync+0x6f/0xb0 [nfsv4]",
                   "_nfs4_proc_open+0x75/0x2a0 [nfsv4]", "nfs4_run_open_task+0x14a/0x210 [nfsv4]", "_nfs4_open_and_get_state+0x5c/0x3f0 [nfsv4]",
                   "_nfs4_do_open.isra.0+0x17a/0x4d0 [nfsv4]", "nfs4_do_open+0xcd/0x220 [nfsv4]", "nfs4_atomic_open+0xf1/0x100 [nfsv4]",
                   "nfs_atomic_open+0x1df/0x700 [nfs]", "lookup_open.isra.0+0x23d/0x620", "open_last_lookups+0x150/0x430",
                   "path_openat+0x8e/0x1b0", "do_filp_open+0xb2/0x160", "do_sys_openat2+0x9f/0x160", "__x64_sys_openat+0x55/0x90",
                   "do_syscall_64+0x5c/0xc0", "entry_SYSCALL_64_after_hwframe+0x67/0xd1"]:
            d.add(f"{dmesg_ts(th)}  {fr}")
        d.add(f"{dmesg_ts(th)} RIP: 0033:0x7f5c9d4f2d1b")
        d.add(f"{dmesg_ts(th)}  </TASK>")
    c.indicate(f"probes/{h}/dmesg.txt", "nfs")
    c.indicate(f"probes/{h}/dmesg.txt", "hung")
    c.indicate(f"probes/{h}/dmesg.txt", "stateD")
    ps = c.f(f"probes/{h}/ps-dstate.txt")
    ps.add("$ ps -eo pid,stat,wchan:32,etime,args | awk 'NR==1 || $2 ~ /^D/'")
    ps.add("    PID STAT WCHAN                                ELAPSED COMMAND")
    el = t_dump - t_hang
    mm, ss = divmod(int(el.total_seconds()), 60)
    ps.add(f"{pids[bad] + bad_local * 3:7d} Dl   rpc_wait_bit_killable           {mm // 60:02d}:{mm % 60:02d}:{ss:02d} /usr/bin/python3 -u -m torchtitan.train --job.config_file ./torchtitan/models/llama3/train_configs/llama3_8b.toml --training.dataset c4_mix --comm.train_timeout_seconds 10800", key="ps")
    ps.add(f"  21877 D    rpc_wait_bit_killable           00:{(mm - 5) % 60:02d}:{ss:02d} ls /mnt/datasets/c4_mix")
    c.indicate(f"probes/{h}/ps-dstate.txt", "ps")
    nodes = [{"host": h2, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8)} for i, h2 in enumerate(hosts)]
    job = job_yaml("5563001", "llama3-8b-c4mix", "torchtitan", "hung", iso(t0), None, None, 8,
                   (1, 1, 32, 1), nodes,
                   [("0b7d9e3", "2026-11-18T12:00:00Z", "c4_mix: read jsonl shards from /mnt/datasets"),
                    ("e52a1c8", "2026-11-25T09:30:00Z", "bump train_timeout_seconds to 3h for slow ckpt loads")],
                   [(2500, "2026-11-26T21:40:00Z", "/lustre/ckpt/llama3-8b-c4mix/checkpoint/step-2500", "true"),
                    (3000, "2026-11-27T08:55:00Z", "/lustre/ckpt/llama3-8b-c4mix/checkpoint/step-3000", "true")],
                   "scheduler: slurm\nlauncher: torchx run -s slurm dist.ddp -j 4x8 --script torchtitan/train.py\nspares: 2\n")
    c.write(job, {
        "fault": "filesystem_mount_failure", "category": "infrastructure",
        "root_cause": f"the NFS mount /mnt/datasets on {h} stopped answering (nfs: server nfs-data01 not responding); rank {bad_rank}, opening its next data shard, blocked in uninterruptible sleep (D state, rpc_wait_bit_killable) and every other rank waits in the gradient all-reduce, so the job hangs with no error",
        "faulty_nodes": [h], "stage": "training", "iteration": hang_step,
        "actions": [{"kind": "evict", "nodes": [h]}, {"kind": "restart", "from_step": 3000}],
    })
    return c


# ==============================================================================================
# 7. Hydra-configured Megatron-LM trainer, one .log per rank; resume after changing tp 4 -> 8
def case_hydra_megatron_tp_change():
    random.seed(707)
    c = Case("hydra-megatron-resume-tp4-to-tp8")
    hosts = [f"mg-h100-a0{i}" for i in range(1, 5)]
    ips = [f"10.120.5.{i}" for i in range(1, 5)]
    t0 = T("2026-11-27T09:14:02")
    tp, pp, dp = 8, 2, 2

    def H(t, name, lvl, msg):
        return f"[{t.strftime('%Y-%m-%d %H:%M:%S')},{random.randint(0, 999):03d}][{name}][{lvl}] - {msg}"

    head = [
        "Traceback (most recent call last):",
        '  File "/workspace/trainer/main.py", line 61, in main',
        "    run_pretrain(cfg)",
        '  File "/workspace/trainer/pretrain.py", line 144, in run_pretrain',
        "    pretrain(datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step, args_defaults=defaults)",
        '  File "/workspace/Megatron-LM/megatron/training/training.py", line 289, in pretrain',
        "    model, optimizer, opt_param_scheduler = setup_model_and_optimizer(",
        '  File "/workspace/Megatron-LM/megatron/training/training.py", line 625, in setup_model_and_optimizer',
        "    args.iteration, args.num_floating_point_operations_so_far = load_checkpoint(",
    ]
    for r in range(32):
        n = r // 8
        h = hosts[n]
        tpr, dpr, ppr = r % tp, (r // tp) % dp, r // (tp * dp)
        f = c.f(f"logs/{h}/pretrain_gpt_rank_{r}.log")
        t = t0 + dt.timedelta(seconds=1)
        f.add(H(t, "__main__", "INFO", f"Hydra output dir: /lustre/runs/gpt-13b/outputs/2026-11-27/09-14-02/rank{r}"))
        f.add(H(t, "__main__", "INFO", f"cluster: world_size=32 rank={r} local_rank={r % 8} host={h}"))
        f.add(H(t, "__main__", "INFO", f"parallel: tensor_model_parallel_size={tp} pipeline_model_parallel_size={pp} context_parallel_size=1 sequence_parallel=True -> data_parallel_size={dp}"))
        f.add(H(t, "__main__", "INFO", "checkpoint: load=/lustre/ckpt/gpt-13b save=/lustre/ckpt/gpt-13b ckpt_format=torch save_interval=1000"))
        f.add(H(t + dt.timedelta(seconds=3), "py.warnings", "WARNING", "/usr/local/lib/python3.10/dist-packages/transformer_engine/pytorch/attention.py:5137: DeprecationWarning: Argument \"attn_mask_type\" is deprecated; set it in the constructor of DotProductAttention instead."))
        f.add(H(t + dt.timedelta(seconds=3), "py.warnings", "WARNING", "  warnings.warn("))
        f.add(H(t + dt.timedelta(seconds=20), "megatron.core.parallel_state", "INFO", f"rank {r}: tp_rank={tpr} pp_rank={ppr} dp_rank={dpr}"))
        f.add(H(t + dt.timedelta(seconds=42), "megatron.training", "INFO", f" > number of parameters on (tensor, pipeline) model parallel rank ({tpr}, {ppr}): {807403520 if ppr == 0 else 806356992}"))
        f.add(H(t + dt.timedelta(seconds=44), "megatron.training.checkpointing", "INFO", " loading checkpoint from /lustre/ckpt/gpt-13b at iteration 12000"))
        t_err = t + dt.timedelta(seconds=44 + random.uniform(0.5, 2.5))
        f.add(H(t_err, "__main__", "ERROR", "pretraining failed"))
        for l in head:
            f.add(l)
        if tpr < 4:
            for l in ['  File "/workspace/Megatron-LM/megatron/training/checkpointing.py", line 1119, in load_checkpoint',
                      "    check_checkpoint_args(checkpoint_args)",
                      '  File "/workspace/Megatron-LM/megatron/training/checkpointing.py", line 97, in check_checkpoint_args',
                      "    _compare('tensor_model_parallel_size')",
                      '  File "/workspace/Megatron-LM/megatron/training/checkpointing.py", line 72, in _compare',
                      "    assert checkpoint_value == args_value, error_message"]:
                f.add(l)
            f.add("AssertionError: tensor_model_parallel_size value from checkpoint (4) is not equal to the input argument value (8).", key="assert")
            if r == 0:
                c.indicate(f"logs/{h}/pretrain_gpt_rank_{r}.log", "assert")
        else:
            for l in ['  File "/workspace/Megatron-LM/megatron/training/checkpointing.py", line 1080, in load_checkpoint',
                      "    state_dict, checkpoint_name, release, ckpt_type = _load_base_checkpoint(",
                      '  File "/workspace/Megatron-LM/megatron/training/checkpointing.py", line 872, in _load_base_checkpoint',
                      "    state_dict = torch.load(checkpoint_name, map_location='cpu', weights_only=False)",
                      '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1319, in load',
                      "    with _open_file_like(f, \"rb\") as opened_file:",
                      '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 659, in _open_file_like',
                      "    return _open_file(name_or_buffer, mode)",
                      '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 640, in __init__',
                      "    super().__init__(open(name, mode))"]:
                f.add(l)
            f.add(f"FileNotFoundError: [Errno 2] No such file or directory: '/lustre/ckpt/gpt-13b/iter_0012000/mp_rank_{tpr:02d}_{ppr:03d}/model_optim_rng.pt'", key="fnf")
            if r == 4:
                c.indicate(f"logs/{h}/pretrain_gpt_rank_{r}.log", "fnf")
    nodes = [{"host": h, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8)} for i, h in enumerate(hosts)]
    job = job_yaml("771940", "gpt-13b-16k", "megatron", "failed", iso(t0), iso(t0 + dt.timedelta(seconds=70)), 1, 8,
                   (tp, pp, dp, 1), nodes,
                   [("f3a0d71", "2026-11-21T10:00:00Z", "conf: gpt-13b seq 4k, tp4 pp2 dp4"),
                    ("8d21c6e", "2026-11-27T08:40:00Z", "conf: gpt-13b 16k context, tp 4 -> 8, dp 4 -> 2")],
                   [(11000, "2026-11-26T23:02:00Z", "/lustre/ckpt/gpt-13b/iter_0011000", "true"),
                    (12000, "2026-11-27T06:31:00Z", "/lustre/ckpt/gpt-13b/iter_0012000", "true")],
                   "scheduler: slurm\nhistory: [771655, 771802]\nconfig: hydra (trainer/conf/gpt13b_16k.yaml), ckpt_format torch (legacy, per-tp-rank files)\n")
    c.write(job, {
        "fault": "checkpoint_load_failure", "category": "user_code",
        "root_cause": "the resumed run asks for tensor_model_parallel_size 8 but iter_0012000 was saved in the legacy per-rank format with tp 4: tp ranks 0-3 fail Megatron's checkpoint-args check (tensor_model_parallel_size 4 vs 8) and tp ranks 4-7 find no mp_rank_04..07 files; the checkpoint must be converted (or saved in the distributed format) before resuming with tp 8",
        "faulty_nodes": [], "stage": "init", "iteration": None,
        "actions": [{"kind": "none"}],
    })
    return c


# ==============================================================================================
# 8. HF Trainer via accelerate launch, plain stdout with tqdm (\r), one GPU power-braked: slow job
def smi_perf_file(fb, when, gpus, driver="535.183.06", cuda="12.2", attached=None):
    """`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,ECC` layout; gpus: list of (bus, dict, marks) or (line, key)."""
    fb.add("")
    fb.add("==============NVSMI LOG==============")
    fb.add("")
    fb.add(f"Timestamp                                 : {when.strftime('%a %b %d %H:%M:%S %Y')}")
    fb.add(f"Driver Version                            : {driver}")
    fb.add(f"CUDA Version                              : {cuda}")
    fb.add("")
    fb.add(f"Attached GPUs                             : {attached or len(gpus)}")
    for entry in gpus:
        if len(entry) == 2:
            fb.add(entry[0], key=entry[1])
            continue
        bus, g, marks = entry
        r = {"Idle": "Not Active", "Applications Clocks Setting": "Not Active", "SW Power Cap": "Not Active",
             "HW Slowdown": "Not Active", "HW Thermal Slowdown": "Not Active", "HW Power Brake Slowdown": "Not Active",
             "Sync Boost": "Not Active", "SW Thermal Slowdown": "Not Active", "Display Clock Setting": "Not Active"}
        r.update(g.get("reasons", {}))
        fb.add(f"GPU {bus}")
        fb.add("    Performance State                     : P0")
        fb.add("    Clocks Event Reasons")
        for k in ["Idle", "Applications Clocks Setting", "SW Power Cap", "HW Slowdown"]:
            fb.add(f"        {k:<34}: {r[k]}", key=marks.get(k))
        for k in ["HW Thermal Slowdown", "HW Power Brake Slowdown"]:
            fb.add(f"            {k:<30}: {r[k]}", key=marks.get(k))
        for k in ["Sync Boost", "SW Thermal Slowdown", "Display Clock Setting"]:
            fb.add(f"        {k:<34}: {r[k]}", key=marks.get(k))
        fb.add("    Sparse Operation Mode                 : N/A")
        fb.add("    ECC Mode")
        fb.add("        Current                           : Enabled")
        fb.add("        Pending                           : Enabled")
        fb.add("    ECC Errors")
        for scope in ("Volatile", "Aggregate"):
            fb.add(f"        {scope}")
            fb.add("            SRAM Correctable              : 0")
            fb.add("            SRAM Uncorrectable            : 0")
            fb.add(f"            DRAM Correctable              : {g.get('dram_corr', 0)}")
            fb.add("            DRAM Uncorrectable            : 0")
        fb.add("    GPU Power Readings")
        fb.add(f"        Power Draw                        : {g['power']:.2f} W", key=marks.get("power"))
        fb.add("        Current Power Limit               : 400.00 W")
        fb.add("        Requested Power Limit             : 400.00 W")
        fb.add("        Default Power Limit               : 400.00 W")
        fb.add("        Min Power Limit                   : 100.00 W")
        fb.add("        Max Power Limit                   : 400.00 W")
        fb.add("    Power Samples")
        fb.add("        Duration                          : 2.38 sec")
        fb.add("        Number of Samples                 : 119")
        fb.add(f"        Max                               : {g['power'] + 21.4:.2f} W")
        fb.add(f"        Min                               : {g['power'] - 33.0:.2f} W")
        fb.add(f"        Avg                               : {g['power'] - 2.1:.2f} W")
        fb.add("    Clocks")
        fb.add(f"        Graphics                          : {g['sm']} MHz")
        fb.add(f"        SM                                : {g['sm']} MHz", key=marks.get("sm"))
        fb.add("        Memory                            : 1593 MHz")
        fb.add(f"        Video                             : {min(g['sm'], 1275)} MHz")
        fb.add("    Applications Clocks")
        fb.add("        Graphics                          : 1410 MHz")
        fb.add("        Memory                            : 1593 MHz")
        fb.add("    Default Applications Clocks")
        fb.add("        Graphics                          : 1095 MHz")
        fb.add("        Memory                            : 1593 MHz")
        fb.add("    Deferred Clocks")
        fb.add("        Memory                            : N/A")
        fb.add("    Max Clocks")
        fb.add("        Graphics                          : 1410 MHz")
        fb.add("        SM                                : 1410 MHz")
        fb.add("        Memory                            : 1593 MHz")
        fb.add("        Video                             : 1290 MHz")
        fb.add("    Max Customer Boost Clocks")
        fb.add("        Graphics                          : 1410 MHz")
        fb.add("    SM Clock Samples")
        fb.add("        Duration                          : 2.38 sec")
        fb.add("        Number of Samples                 : 100")
        fb.add(f"        Max                               : {g.get('sm_max', g['sm'])} MHz")
        fb.add(f"        Min                               : {g.get('sm_min', g['sm'])} MHz")
        fb.add(f"        Avg                               : {g['sm']} MHz")
        fb.add("")


def tqdm_bar(n, total, elapsed, rate):
    pct = int(100 * n / total)
    filled = 10 * n / total
    full = int(filled)
    parts = " ▏▎▍▌▋▊▉"
    frac = parts[int((filled - full) * 8)] if full < 10 else ""
    bar = ("█" * full + frac).ljust(10)
    fmt = lambda s: (f"{int(s // 3600)}:{int(s % 3600 // 60):02d}:{int(s % 60):02d}" if s >= 3600 else f"{int(s // 60):02d}:{int(s % 60):02d}")
    remain = (total - n) * rate
    return f"{pct:3d}%|{bar}| {n}/{total} [{fmt(elapsed)}<{fmt(remain)}, {rate:5.2f}s/it]"


def case_hf_straggler():
    random.seed(808)
    c = Case("accelerate-tqdm-power-brake-straggler")
    hosts = [f"hf-a100-{i}" for i in (21, 22, 23, 24)]
    ips = [f"10.55.9.{i}" for i in (21, 22, 23, 24)]
    bad, bad_gpu = 2, 6
    t0 = T("2026-11-27T06:02:00")
    total = 10000
    start_step, slow_from, now_step = 3500, 3641, 3882
    fast, slow = 1.62, 2.71
    for n, h in enumerate(hosts):
        f = c.f(f"logs/{h}/stdout.log")
        for lr in range(8):
            f.add("/usr/local/lib/python3.10/dist-packages/transformers/training_args.py:1568: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead")
            f.add("  warnings.warn(")
        f.add(f"{h}:{40111 + n}:{40111 + n} [0] NCCL INFO Bootstrap : Using bond0:{ips[n]}<0>")
        f.add(f"{h}:{40111 + n}:{40111 + n} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE ; OOB bond0:{ips[n]}<0>")
        f.add(f"{h}:{40111 + n}:{40111 + n} [0] NCCL INFO Using network IB")
        if n == 0:
            f.add("NCCL version 2.20.5+cuda12.4")
            f.add("***** Running training *****")
            f.add("  Num examples = 2,560,000")
            f.add("  Num Epochs = 1")
            f.add("  Instantaneous batch size per device = 8")
            f.add("  Total train batch size (w. parallel, distributed & accumulation) = 256")
            f.add("  Gradient Accumulation steps = 1")
            f.add("  Total optimization steps = 10,000")
            f.add("  Number of trainable parameters = 6,738,415,616")
            f.add("  Continuing training from checkpoint, will skip to saved global_step")
            f.add("  Continuing training from epoch 0")
            f.add(f"  Continuing training from global step {start_step}")
            f.add(f"  Will skip the first 0 epochs then the first {start_step} batches in the first epoch.")
            segs = []
            el = 0.0
            loss = 1.514
            segs.append("\r  0%|          | 0/10000 [00:00<?, ?it/s]")
            segs.append("\r 35%|███▌      | 3500/10000 [00:58<01:47, 60.34it/s]")
            el = 58.0
            lines = []
            for s in range(start_step + 1, now_step + 1):
                stt = (fast if s < slow_from else slow) + random.uniform(-0.03, 0.03)
                el += stt
                rate = fast if s < slow_from + 8 else slow
                segs.append("\r" + tqdm_bar(s, total, el, rate + random.uniform(-0.02, 0.02)))
                if s % 50 == 0:
                    loss -= 0.0012 + random.uniform(-0.01, 0.01)
                    lines.append("".join(segs))
                    segs = []
                    lines.append("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.3e, 'epoch': %.2f}" % (loss, 0.41 + random.uniform(-0.05, 0.06), 2e-5 * (1 - s / total), s / total))
            lines.append("".join(segs))
            for l in lines:
                f.add(l)
    when = t0 + dt.timedelta(seconds=58 + (slow_from - start_step) * fast + (now_step - slow_from) * slow + 40)
    for n, h in enumerate(hosts):
        s = c.f(f"probes/{h}/nvidia-smi.txt")
        gpus = []
        for i, bus in enumerate(BUSES):
            if n == bad and i == bad_gpu:
                gpus.append((bus, {"power": 187.31, "sm": 705, "sm_max": 1005, "sm_min": 645,
                                   "reasons": {"SW Power Cap": "Active", "HW Slowdown": "Active", "HW Power Brake Slowdown": "Active"}},
                             {"SW Power Cap": "swcap", "HW Power Brake Slowdown": "brake", "sm": "sm"}))
            elif n == bad or True:
                gpus.append((bus, {"power": 322.0 + random.uniform(-30, 25), "sm": 1410,
                                   "dram_corr": (4 if (n == 3 and i == 1) else 0)}, {}))
        smi_perf_file(s, when, gpus)
    for k in ("swcap", "brake", "sm"):
        c.indicate(f"probes/{hosts[bad]}/nvidia-smi.txt", k)
    nodes = [{"host": h, "ip": ips[i], "ranks": ranks_str(8 * i, 8 * i + 8)} for i, h in enumerate(hosts)]
    job = job_yaml("hf-ft-7b-0925", "llama2-7b-instruct-ft", "fsdp", "slow", iso(t0), None, None, 8,
                   (1, 1, 32, 1), nodes,
                   [("2ce81f0", "2026-11-23T15:00:00Z", "ft: 7b instruct mix v4"),
                    ("a6d4b19", "2026-11-26T11:20:00Z", "logging_steps 50")],
                   [(3000, "2026-11-27T02:40:00Z", "/data/ckpt/llama2-7b-ift/checkpoint-3000", "true"),
                    (3500, "2026-11-27T05:53:00Z", "/data/ckpt/llama2-7b-ift/checkpoint-3500", "true")],
                   "scheduler: slurm\nlauncher: accelerate launch --multi_gpu --num_machines 4 --num_processes 32 (FSDP)\nspares: 1\nhistory: [hf-ft-7b-0921]\nexpected_step_time_s: 1.6\n")
    c.write(job, {
        "fault": "gpu_straggler", "category": "hardware",
        "root_cause": f"GPU {bad_gpu} of {hosts[bad]} is held at 705 MHz by an external power brake (HW Power Brake Slowdown and SW Power Cap active at 187 W of a 400 W limit); every synchronous FSDP step waits for it, so the job went from 1.62 to 2.71 s/it at step {slow_from} with no error",
        "faulty_nodes": [hosts[bad]], "stage": "training", "iteration": slow_from,
        "actions": [{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 3500}],
    })
    return c


# ==============================================================================================
def main():
    cases = [case_composer_xid79(), case_horovod_ibflap(), case_k8s_oom(), case_metaseq_nan(), case_paddle_oom(),
             case_torchx_nfs_hang(), case_hydra_megatron_tp_change(), case_hf_straggler()]
    ok = True
    for c in cases:
        d = os.path.join(ROOT, c.cid)
        size = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(d) for fn in fns)
        truth = json.load(open(os.path.join(d, "truth.json")))
        print(f"== {c.cid}  ({size / 1024:.1f} KB)  fault={truth['fault']} nodes={truth['faulty_nodes']} iter={truth['iteration']}")
        if size >= 150 * 1024:
            print("   !! bundle too large"); ok = False
        if not 1 <= len(truth["indicating_lines"]) <= 6:
            print("   !! indicating line count"); ok = False
        for il in truth["indicating_lines"]:
            with open(os.path.join(d, il["file"]), encoding="utf-8", newline="") as fh:
                lines = fh.read().split("\n")
            ln = il["line"]
            if not (1 <= ln <= len(lines)) or not lines[ln - 1].strip():
                print(f"   !! {il['file']}:{ln} missing or empty"); ok = False
                continue
            if "\r" in "\n".join(lines[:ln]):
                print(f"   !! {il['file']}:{ln} has a \\r before it (splitlines would shift numbering)"); ok = False
            print(f"   {il['file']}:{ln}: {lines[ln - 1][:230]}")
    print("ALL OK" if ok else "PROBLEMS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
