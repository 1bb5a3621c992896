#!/usr/bin/env python3
"""Build hand-made incident bundles under this directory (stdlib only).

Every truth line number is computed from the text written, then checked.
"""
import json
import os
import random
import shutil
import sys
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc


def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


class Bundle:
    def __init__(self, iid):
        self.iid = iid
        self.dir = os.path.join(ROOT, iid)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.files = {}
        self.marks = []  # (file, substring, nth)

    def write(self, rel, lines):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = "\n".join(lines) + "\n"
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        self.files[rel] = text

    def write_raw(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        self.files[rel] = text

    def mark(self, rel, needle, nth=0):
        self.marks.append((rel, needle, nth))

    def line_of(self, rel, needle, nth=0):
        lines = self.files[rel].split("\n")
        hits = [i + 1 for i, l in enumerate(lines) if needle in l]
        if len(hits) <= nth:
            raise SystemExit(f"{self.iid}: marker not found in {rel}: {needle!r}")
        return hits[nth]

    def job(self, text):
        self.write_raw("job.yaml", text.lstrip("\n"))

    def truth(self, **kw):
        ind = []
        for rel, needle, nth in self.marks:
            ind.append({"file": rel, "line": self.line_of(rel, needle, nth)})
        t = dict(kw)
        t["indicating_lines"] = ind
        order = ["fault", "category", "root_cause", "faulty_nodes", "stage", "iteration",
                 "indicating_lines", "actions"]
        out = {k: t[k] for k in order if k in t}
        out.update({k: v for k, v in t.items() if k not in out})
        self.write_raw("truth.json", json.dumps(out, indent=2) + "\n")
        self.check(out)

    def check(self, t):
        print(f"== {self.iid}  ({t['fault']}, faulty={t['faulty_nodes']}, iter={t['iteration']})")
        for il in t["indicating_lines"]:
            path = os.path.join(self.dir, il["file"])
            with open(path, "r", encoding="utf-8", newline="") as f:
                lines = f.read().split("\n")
            text = lines[il["line"] - 1]
            assert text.strip(), (self.iid, il)
            assert "\r" not in text, (self.iid, il, "indicating line holds a carriage return")
            print(f"   {il['file']}:{il['line']}: {text[:200]}")
        size = 0
        for dp, _, fns in os.walk(self.dir):
            for fn in fns:
                size += os.path.getsize(os.path.join(dp, fn))
        assert size < 150 * 1024, (self.iid, size)
        print(f"   size {size/1024:.1f} KB")


# ---------------------------------------------------------------- shared probe text

def nvsmi_header(when, driver="550.90.07", cuda="12.4", n=8):
    return ["", "==============NVSMI LOG==============", "",
            f"Timestamp                                 : {when.strftime('%a %b %d %H:%M:%S %Y')}",
            f"Driver Version                            : {driver}",
            f"CUDA Version                              : {cuda}", "",
            f"Attached GPUs                             : {n}"]


def nvsmi_gpu(bus, sections, ecc=None, remap=None, perf=None, temp=None, clocks=None):
    """One GPU block of `nvidia-smi -q -d <sections>` (H100 SXM, driver 5xx layout)."""
    L = [f"GPU {bus}"]
    if "ECC" in sections:
        e = {"vsc": 0, "vsup": 0, "vssd": 0, "vdc": 0, "vdu": 0,
             "asc": 0, "asup": 0, "assd": 0, "adc": 0, "adu": 0}
        e.update(ecc or {})
        L += ["    ECC Mode",
              "        Current                           : Enabled",
              "        Pending                           : Enabled",
              "    ECC Errors",
              "        Volatile",
              f"            SRAM Correctable              : {e['vsc']}",
              f"            SRAM Uncorrectable Parity     : {e['vsup']}",
              f"            SRAM Uncorrectable SEC-DED    : {e['vssd']}",
              f"            DRAM Correctable              : {e['vdc']}",
              f"            DRAM Uncorrectable            : {e['vdu']}",
              "        Aggregate",
              f"            SRAM Correctable              : {e['asc']}",
              f"            SRAM Uncorrectable Parity     : {e['asup']}",
              f"            SRAM Uncorrectable SEC-DED    : {e['assd']}",
              f"            DRAM Correctable              : {e['adc']}",
              f"            DRAM Uncorrectable            : {e['adu']}",
              "            SRAM Threshold Exceeded       : No",
              "        Aggregate Uncorrectable SRAM Sources",
              "            SRAM L2                       : 0",
              "            SRAM SM                       : 0",
              "            SRAM Microcontroller          : 0",
              "            SRAM PCIE                     : 0",
              "            SRAM Other                    : 0"]
    if "ROW_REMAPPER" in sections:
        r = {"c": 0, "u": 0, "p": "No", "f": "No", "high": 0, "max": 640}
        r.update(remap or {})
        L += ["    Remapped Rows",
              f"        Correctable Error                 : {r['c']}",
              f"        Uncorrectable Error               : {r['u']}",
              f"        Pending                           : {r['p']}",
              f"        Remapping Failure Occurred        : {r['f']}",
              "        Bank Remap Availability Histogram",
              f"            Max                           : {r['max']} bank(s)",
              f"            High                          : {r['high']} bank(s)",
              "            Partial                       : 0 bank(s)",
              "            Low                           : 0 bank(s)",
              "            None                          : 0 bank(s)"]
    if "PERFORMANCE" in sections:
        p = {"idle": "Not Active", "swpc": "Not Active", "hws": "Not Active", "hwts": "Not Active",
             "hwpb": "Not Active", "swts": "Not Active", "pstate": "P0"}
        p.update(perf or {})
        L += [f"    Performance State                     : {p['pstate']}",
              "    Clocks Event Reasons",
              f"        Idle                              : {p['idle']}",
              "        Applications Clocks Setting       : Not Active",
              f"        SW Power Cap                      : {p['swpc']}",
              f"        HW Slowdown                       : {p['hws']}",
              f"            HW Thermal Slowdown           : {p['hwts']}",
              f"            HW Power Brake Slowdown       : {p['hwpb']}",
              "        Sync Boost                        : Not Active",
              f"        SW Thermal Slowdown               : {p['swts']}",
              "        Display Clock Setting             : Not Active"]
    if "TEMPERATURE" in sections:
        t = {"gpu": 44, "mem": 52}
        t.update(temp or {})
        L += ["    Temperature",
              f"        GPU Current Temp                  : {t['gpu']} C",
              "        GPU T.Limit Temp                  : N/A",
              "        GPU Shutdown Temp                 : 92 C",
              "        GPU Slowdown Temp                 : 89 C",
              "        GPU Max Operating Temp            : 87 C",
              "        GPU Target Temperature            : N/A",
              f"        Memory Current Temp               : {t['mem']} C",
              "        Memory Max Operating Temp         : 95 C"]
    if "CLOCK" in sections:
        c = {"gr": 1980, "sm": 1980, "mem": 2619}
        c.update(clocks or {})
        L += ["    Clocks",
              f"        Graphics                          : {c['gr']} MHz",
              f"        SM                                : {c['sm']} MHz",
              f"        Memory                            : {c['mem']} MHz",
              "        Video                             : 1755 MHz",
              "    Max Clocks",
              "        Graphics                          : 1980 MHz",
              "        SM                                : 1980 MHz",
              "        Memory                            : 2619 MHz",
              "        Video                             : 1965 MHz"]
    L.append("")
    return L


H100_BUS = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
            "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0"]


def ibstat(n_ca, guid_base, lid_base, down=None, link="InfiniBand", rate=400, fw="28.39.2048"):
    L = []
    for i in range(n_ca):
        state, phys, r, lid, sm = "Active", "LinkUp", rate, lid_base + i, 1
        if down and i in down:
            state, phys, r, lid, sm = down[i][0], down[i][1], 10, 65535, 0
        g = f"0x{guid_base + i:016x}"
        L += [f"CA 'mlx5_{i}'", "\tCA type: MT4129", "\tNumber of ports: 1",
              f"\tFirmware version: {fw}", "\tHardware version: 0",
              f"\tNode GUID: {g}", f"\tSystem image GUID: {g}", "\tPort 1:",
              f"\t\tState: {state}", f"\t\tPhysical state: {phys}", f"\t\tRate: {r}",
              f"\t\tBase lid: {lid}", "\t\tLMC: 0", f"\t\tSM lid: {sm}",
              "\t\tCapability mask: 0xa651e848", f"\t\tPort GUID: {g}", f"\t\tLink layer: {link}"]
    return L


def perfquery(lid, port=1, **kw):
    c = {"SymbolErrorCounter": 0, "LinkErrorRecoveryCounter": 0, "LinkDownedCounter": 0,
         "PortRcvErrors": 0, "PortRcvRemotePhysicalErrors": 0, "PortRcvSwitchRelayErrors": 0,
         "PortXmitDiscards": 0, "PortXmitConstraintErrors": 0, "PortRcvConstraintErrors": 0,
         "LocalLinkIntegrityErrors": 0, "ExcessiveBufferOverrunErrors": 0, "VL15Dropped": 0,
         "PortXmitWait": 0, "QP1Dropped": 0,
         "PortXmitData": 0, "PortRcvData": 0, "PortXmitPkts": 0, "PortRcvPkts": 0,
         "PortUnicastXmitPkts": 0, "PortUnicastRcvPkts": 0,
         "PortMulticastXmitPkts": 0, "PortMulticastRcvPkts": 0}
    c.update(kw)
    order = ["PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts",
             "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"]
    L = [f"# Port extended counters: Lid {lid} port {port} (CapMask: 0x5A00 CapMask2: 0x0000000)",
         f"PortSelect:......................{port}",
         "CounterSelect:...................0x0000"]
    for k in order:
        L.append(f"{k + ':':.<33}{c[k]}")
    L.append("CounterSelect2:..................0x00000000")
    for k in ["SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
              "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
              "PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
              "ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait", "QP1Dropped"]:
        L.append(f"{k + ':':.<33}{c[k]}")
    return L


def dmesg_t(d):
    return d.strftime("[%a %b %d %H:%M:%S %Y]").replace(" 0", "  ", 1) if d.day < 10 else d.strftime("[%a %b %d %H:%M:%S %Y]")


def boot_noise(boot, host, nics=8):
    b = boot
    L = [f"{dmesg_t(b)} Linux version 5.15.0-119-generic (buildd@lcy02-amd64-047) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 (Ubuntu 5.15.0-119.129-generic 5.15.160)",
         f"{dmesg_t(b)} Command line: BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=3b1c6f0e-52a9-4c1e-9d2c-0b7f5a8a1e44 ro iommu=pt pci=realloc=off",
         f"{dmesg_t(b + timedelta(seconds=3))} mlx5_core 0000:0c:00.0: firmware version: 28.39.2048"]
    for i in range(nics):
        L.append(f"{dmesg_t(b + timedelta(seconds=41))} mlx5_core 0000:{0x0c + 0x10 * i:02x}:00.0 mlx5_{i}: Port: 1 Link ACTIVE")
    L += [f"{dmesg_t(b + timedelta(seconds=44))} nvidia: loading out-of-tree module taints kernel.",
          f"{dmesg_t(b + timedelta(seconds=44))} NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024",
          f"{dmesg_t(b + timedelta(seconds=47))} nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, Class = 0x068000",
          f"{dmesg_t(b + timedelta(seconds=52))} nvidia-peermem nv_mem_client_init:205 enter",
          f"{dmesg_t(b + timedelta(seconds=60))} IPv6: ADDRCONF(NETDEV_CHANGE): ibp12s0: link becomes ready"]
    return L


# ================================================================= incidents
# ---------------------------------------------------------------- A: Megatron under mpirun, Xid 94
def build_a():
    B = Bundle("mpirun-megatron-xid94-ecc-4node")
    rnd = random.Random(11)
    hosts = ["gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04"]
    ips = ["10.20.0.11", "10.20.0.12", "10.20.0.13", "10.20.0.14"]
    start = ts("2026-11-20T07:54:10")
    t_fail = ts("2026-11-20T08:14:09")
    last_done, it_fail = 3617, 3618
    pids = {h: 48200 + 1000 * i for i, h in enumerate(hosts)}
    logs = {h: [] for h in hosts}

    def tag(r, stream="stdout"):
        return f"[1,{r}]<{stream}>:"

    # init noise on every node
    for ni, h in enumerate(hosts):
        L = logs[h]
        for lr in range(8):
            r = ni * 8 + lr
            L.append(f"{tag(r,'stderr')}/usr/local/lib/python3.10/dist-packages/torch/amp/autocast_mode.py:265: FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.")
        if ni == 0:
            L += [f"{tag(0)}using world size: 32, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 2 ",
                  f"{tag(0)}> initializing torch distributed ...",
                  f"{tag(0)}> initialized tensor model parallel with size 8",
                  f"{tag(0)}> initialized pipeline model parallel with size 2",
                  f"{tag(0)}{h}:{pids[h]}:{pids[h]} [0] NCCL INFO NCCL version 2.21.5+cuda12.4"]
        for lr in range(8):
            r = ni * 8 + lr
            p = pids[h] + lr
            L.append(f"{tag(r)}{h}:{p}:{p} [{lr}] NCCL INFO Bootstrap : Using ibp12s0:{ips[ni]}<0>")
            if lr == 0:
                L.append(f"{tag(r)}{h}:{p}:{p} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB ; OOB ibp12s0:{ips[ni]}<0>")
                L.append(f"{tag(r)}{h}:{p}:{p+180} [0] NCCL INFO comm 0x5581d2a0 rank {r} nRanks 32 nNodes 4 localRanks 8 localRank 0 MNNVL 0")
        if ni == 0:
            L += [f"{tag(0)} > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 2147483648",
                  f"{tag(0)} loading checkpoint from /lustre/ckpt/gpt-70b/ at iteration 3500",
                  f"{tag(0)}  successfully loaded checkpoint from /lustre/ckpt/gpt-70b/ [ t 0/8, p 0/2 ] at iteration 3500",
                  f"{tag(0)}[after model, optimizer, and learning rate scheduler are built] datetime: 2026-11-20 08:02:41 ",
                  f"{tag(0)}> building train, validation, and test datasets ...",
                  f"{tag(0)}[after dataloaders are built] datetime: 2026-11-20 08:03:52 ",
                  f"{tag(0)}training ...",
                  f"{tag(0)}[before the start of training step] datetime: 2026-11-20 08:03:52 "]
    # iteration lines: last pipeline stage, rank 31 on gpu-a04
    t = ts("2026-11-20T08:04:12")
    for it in range(3501, last_done + 1):
        dt = rnd.uniform(5.0, 5.15)
        t += timedelta(seconds=dt)
        if it % 2 == 0 or it > last_done - 20:
            loss = 2.31 - (it - 3500) * 0.0004 + rnd.uniform(-0.02, 0.02)
            logs["gpu-a04"].append(
                f"{tag(31)} [{t.strftime('%Y-%m-%d %H:%M:%S')}] iteration     {it}/  200000 | consumed samples:      {it*512} | elapsed time per iteration (ms): {dt*1000:.1f} | throughput per GPU (TFLOP/s/GPU): {412.0*5.1/dt:.1f} | learning rate: {2.9e-4 - it*1e-9:.6E} | global batch size:   512 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {rnd.uniform(0.35,0.48):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
        if it == 3520:
            logs["gpu-a04"].append(f"{tag(31)}[Rank 31] (after 3520 iterations) memory (MB) | allocated: 41245.2 | max allocated: 61872.9 | reserved: 66012.0 | max reserved: 66012.0")
    # the fault on gpu-a03, GPU 5 = rank 21
    a3 = logs["gpu-a03"]
    r = 21
    st = tag(r, "stderr")
    a3 += [f"{st}[rank21]: Traceback (most recent call last):",
           f"{st}[rank21]:   File \"/opt/megatron-lm/pretrain_gpt.py\", line 288, in <module>",
           f"{st}[rank21]:     pretrain(",
           f"{st}[rank21]:   File \"/opt/megatron-lm/megatron/training/training.py\", line 386, in pretrain",
           f"{st}[rank21]:     iteration, num_floating_point_operations_so_far = train(",
           f"{st}[rank21]:   File \"/opt/megatron-lm/megatron/training/training.py\", line 1421, in train",
           f"{st}[rank21]:     train_step(forward_step_func,",
           f"{st}[rank21]:   File \"/opt/megatron-lm/megatron/training/training.py\", line 754, in train_step",
           f"{st}[rank21]:     losses_reduced = forward_backward_func(",
           f"{st}[rank21]:   File \"/opt/megatron-lm/megatron/core/pipeline_parallel/schedules.py\", line 1486, in forward_backward_pipelining_without_interleaving",
           f"{st}[rank21]:     output_tensor, num_tokens = forward_step(",
           f"{st}[rank21]:   File \"/opt/megatron-lm/megatron/core/pipeline_parallel/schedules.py\", line 275, in forward_step",
           f"{st}[rank21]:     output_tensor, loss_func = forward_step_func(data_iterator, model)",
           f"{st}[rank21]:   File \"/opt/megatron-lm/pretrain_gpt.py\", line 206, in forward_step",
           f"{st}[rank21]:     output_tensor = model(tokens, position_ids, attention_mask,",
           f"{st}[rank21]:   File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py\", line 1553, in _wrapped_call_impl",
           f"{st}[rank21]:     return self._call_impl(*args, **kwargs)",
           f"{st}[rank21]:   File \"/opt/megatron-lm/megatron/core/transformer/mlp.py\", line 117, in forward",
           f"{st}[rank21]:     intermediate_parallel, bias_parallel = self.linear_fc1(hidden_states)",
           f"{st}[rank21]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
           f"{st}[rank21]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
           f"{st}[rank21]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
           f"{st}[rank21]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
           f"{st}"]
    B.mark("logs/gpu-a03/mpirun-551902.log", "RuntimeError: CUDA error: uncorrectable ECC error encountered")
    # cascade: watchdog timeouts 10 minutes later everywhere else
    tw = t_fail + timedelta(seconds=600)
    seq = 215903
    for ni, h in enumerate(hosts):
        for lr in range(8):
            rr = ni * 8 + lr
            if rr == 21:
                continue
            stamp = (tw + timedelta(milliseconds=rnd.randint(10, 900))).strftime("%m%d %H:%M:%S.%f") + f"{rnd.randint(100,999)}"
            op, numel, pg = ("ALLREDUCE", 8388608, "PG 2") if ni == 2 else ("RECV", 16777216, "PG 6")
            logs[h].append(f"{tag(rr,'stderr')}[rank{rr}]:[E{stamp} ProcessGroupNCCL.cpp:616] [Rank {lr if ni==2 else (0 if ni in (0,1) else 1)}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for {600000+rnd.randint(8,95)} milliseconds before timing out.")
            logs[h].append(f"{tag(rr,'stderr')}[rank{rr}]:[E{stamp} ProcessGroupNCCL.cpp:1785] [{pg} PG GUID {pg[3:]} Rank {lr if ni==2 else 0}] Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq+1}, last completed NCCL work: {seq-1}.")
        if ni != 2:
            rr = ni * 8 + 5
            logs[h].append(f"{tag(rr,'stderr')}[rank{rr}]:[E{stamp} ProcessGroupNCCL.cpp:630] [Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
            logs[h].append(f"{tag(rr,'stderr')}[rank{rr}]:[E{stamp} ProcessGroupNCCL.cpp:636] [Rank 0] To avoid data inconsistency, we are taking the entire process down.")
    a1 = logs["gpu-a01"]
    a1 += ["--------------------------------------------------------------------------",
           "Primary job  terminated normally, but 1 process returned",
           "a non-zero exit code. Per user-direction, the job has been aborted.",
           "--------------------------------------------------------------------------",
           "--------------------------------------------------------------------------",
           "mpirun noticed that process rank 5 with PID 48205 on node gpu-a01 exited on signal 6 (Aborted).",
           "--------------------------------------------------------------------------"]
    for h in hosts:
        B.write(f"logs/{h}/mpirun-551902.log", logs[h])
    # probes
    boot = ts("2026-11-12T22:41:07")
    dm = boot_noise(boot, "gpu-a03")
    dm += [f"{dmesg_t(ts('2026-11-19T14:02:51'))} perf: interrupt took too long (2506 > 2500), lowering kernel.perf_event_max_sample_rate to 79750",
           f"{dmesg_t(t_fail)} NVRM: Xid (PCI:0000:ab:00): 94, pid=51873, name=pt_main_thread, Contained ECC error",
           f"{dmesg_t(t_fail)} NVRM: Xid (PCI:0000:ab:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x00000000000a5f20) marked for remapping, reset gpu to activate.",
           f"{dmesg_t(t_fail + timedelta(seconds=611))} NVRM: Xid (PCI:0000:ab:00): 45, pid=51873, name=pt_main_thread, Ch 00000008"]
    B.write("probes/gpu-a03/dmesg.txt", dm)
    B.mark("probes/gpu-a03/dmesg.txt", "94, pid=51873")
    when = t_fail + timedelta(minutes=16)
    ns = nvsmi_header(when)
    for i, bus in enumerate(H100_BUS):
        if i == 5:
            ns += nvsmi_gpu(bus, ("ECC", "ROW_REMAPPER"), ecc={"vdu": 1, "adu": 1, "vdc": 3, "adc": 14},
                            remap={"u": 1, "p": "Yes", "high": 1, "max": 639})
        else:
            ns += nvsmi_gpu(bus, ("ECC", "ROW_REMAPPER"), ecc={"adc": rnd.choice([0, 0, 1, 2])})
    B.write("probes/gpu-a03/nvidia-smi.txt", ns)
    # the Volatile DRAM Uncorrectable of GPU 5 is the first "DRAM Uncorrectable            : 1"
    B.mark("probes/gpu-a03/nvidia-smi.txt", "DRAM Uncorrectable            : 1", 0)
    B.mark("probes/gpu-a03/nvidia-smi.txt", "Pending                           : Yes", 0)
    ns = nvsmi_header(when)
    for bus in H100_BUS:
        ns += nvsmi_gpu(bus, ("ECC", "ROW_REMAPPER"), ecc={"adc": rnd.choice([0, 0, 3])})
    B.write("probes/gpu-a01/nvidia-smi.txt", ns)
    B.write("probes/gpu-a01/dmesg.txt", boot_noise(ts("2026-11-12T22:40:55"), "gpu-a01"))
    B.job(f"""
job_id: "551902"
name: gpt-70b-pretrain-phase2
framework: megatron
launcher: mpirun
status: failed
started_at: {iso(start)}
ended_at: {iso(tw + timedelta(seconds=4))}
exit_code: 134
gpus_per_node: 8
parallelism: {{tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + f"""code:
  - {{commit: 4e1d0a7, at: 2026-11-02T16:20:00Z, message: "switch to torch_dist checkpoint format"}}
  - {{commit: b83f9c2, at: 2026-11-14T09:05:00Z, message: "data: add code-mix shard 7"}}
checkpoints:
  - {{step: 3000, at: 2026-11-19T20:41:00Z, path: /lustre/ckpt/gpt-70b/iter_0003000, valid: true}}
  - {{step: 3500, at: 2026-11-20T02:55:00Z, path: /lustre/ckpt/gpt-70b/iter_0003500, valid: true}}
spares: 2
scheduler: mpirun
history: [job-551877]
""")
    B.truth(fault="gpu_ecc_uncorrectable", category="hardware",
            root_cause="uncorrectable (double-bit) DRAM ECC error on GPU 5 (PCI 0000:ab:00) of gpu-a03: Xid 94 contained ECC error killed rank 21's kernel, nvidia-smi shows a volatile DRAM uncorrectable error and a pending row remap; every other rank then hit the NCCL watchdog",
            faulty_nodes=["gpu-a03"], stage="training", iteration=it_fail,
            actions=[{"kind": "evict", "nodes": ["gpu-a03"]}, {"kind": "restart", "from_step": 3500}])

# ---------------------------------------------------------------- B: DeepSpeed via pdsh, Xid 79
def build_b():
    B = Bundle("pdsh-deepspeed-xid79-offbus-4node")
    rnd = random.Random(22)
    hosts = ["dgx-06", "dgx-07", "dgx-08", "dgx-09"]
    ips = ["10.31.4.6", "10.31.4.7", "10.31.4.8", "10.31.4.9"]
    start = ts("2026-11-18T09:12:40")
    t0 = ts("2026-11-18T09:21:05")   # first step of this run (resumed from global_step2000)
    step_s = 4.35
    last_done, it_fail = 2147, 2148
    t_fail = t0 + timedelta(seconds=step_s * (it_fail - 2001) + 2.1)
    logs = {h: [] for h in hosts}

    def dstime(d):
        return d.strftime("%Y-%m-%d %H:%M:%S,") + f"{d.microsecond//1000:03d}"

    t = start
    launcher = logs["dgx-06"]
    launcher += [f"[{dstime(t)}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
                 f"[{dstime(t)}] [INFO] [runner.py:463:main] Using IP address of 10.31.4.6 for node dgx-06",
                 f"[{dstime(t)}] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: dgx-06,dgx-07,dgx-08,dgx-09",
                 f"[{dstime(t)}] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w dgx-06,dgx-07,dgx-08,dgx-09 export PYTHONPATH=/workspace/llm;  cd /workspace/llm; /usr/bin/python -u -m deepspeed.launcher.launch --world_info=eyJkZ3gtMDYiOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgN10sICJkZ3gtMDciOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgN119 --node_rank=%n --master_addr=10.31.4.6 --master_port=29500 train_sft.py --deepspeed configs/zero3_bf16.json --resume_from_checkpoint /mnt/ckpt/mistral-sft/global_step2000"]
    for ni, h in enumerate(hosts):
        L = logs[h]
        p = lambda s: f"{h}: {s}"
        tt = start + timedelta(seconds=4 + ni * 0.2)
        L += [p(f"[{dstime(tt)}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)"),
              p(f"[{dstime(tt)}] [INFO] [launch.py:146:main] WORLD INFO DICT: {{'dgx-06': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-07': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-08': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-09': [0, 1, 2, 3, 4, 5, 6, 7]}}"),
              p(f"[{dstime(tt)}] [INFO] [launch.py:152:main] nnodes=4, num_local_procs=8, node_rank={ni}"),
              p(f"[{dstime(tt)}] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {{'dgx-06': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-07': [8, 9, 10, 11, 12, 13, 14, 15], 'dgx-08': [16, 17, 18, 19, 20, 21, 22, 23], 'dgx-09': [24, 25, 26, 27, 28, 29, 30, 31]}})"),
              p(f"[{dstime(tt)}] [INFO] [launch.py:164:main] dist_world_size=32")]
        for lr in range(8):
            L.append(p(f"[{dstime(tt)}] [INFO] [launch.py:256:main] process {61200 + ni*100 + lr} spawned with command: ['/usr/bin/python', '-u', 'train_sft.py', '--local_rank={lr}', '--deepspeed', 'configs/zero3_bf16.json', '--resume_from_checkpoint', '/mnt/ckpt/mistral-sft/global_step2000']"))
        for lr in range(0, 8, 3):
            L.append(p("/usr/local/lib/python3.10/dist-packages/transformers/training_args.py:1568: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead"))
        pid = 61200 + ni * 100
        L.append(p(f"{h}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using ibp12s0:{ips[ni]}<0>"))
        L.append(p(f"{h}:{pid}:{pid+312} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB ; OOB ibp12s0:{ips[ni]}<0>"))
        L.append(p(f"{h}:{pid}:{pid+312} [0] NCCL INFO Using network IB"))
    r0 = logs["dgx-06"]
    p0 = lambda s: f"dgx-06: {s}"
    tt = start + timedelta(seconds=95)
    r0 += [p0(f"[{dstime(tt)}] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: version=0.15.4, git-hash=unknown, git-branch=unknown"),
           p0(f"[{dstime(tt)}] [INFO] [config.py:733:__init__] Config mesh_device None world_size = 32"),
           p0(f"[{dstime(tt)}] [INFO] [logging.py:128:log_dist] [Rank 0] Creating ZeRO stage 3 optimizer"),
           p0(f"[{dstime(tt + timedelta(seconds=40))}] [INFO] [torch_checkpoint_engine.py:27:load] [Torch] Loading checkpoint from /mnt/ckpt/mistral-sft/global_step2000/zero_pp_rank_0_mp_rank_00_model_states.pt..."),
           p0(f"[{dstime(tt + timedelta(seconds=301))}] [INFO] [engine.py:3095:_get_all_zero_checkpoint_state_dicts] successfully read 32 ZeRO state_dicts for rank 0"),
           p0(f"[{dstime(tt + timedelta(seconds=303))}] [INFO] [engine.py:3045:_load_zero_checkpoint] loading 32 zero partition checkpoints for rank 0")]
    t = t0
    for it in range(2001, last_done + 1):
        t += timedelta(seconds=step_s + rnd.uniform(-0.08, 0.08))
        sps = 512 / step_s / 2 + rnd.uniform(-0.4, 0.4)
        if it % 10 == 0:
            r0.append(p0(f"[{dstime(t)}] [INFO] [logging.py:128:log_dist] [Rank 0] step={it}, skipped=0, lr=[{1.8e-05 - it*1e-9:.6e}], mom=[(0.9, 0.95)]"))
        r0.append(p0(f"[{dstime(t)}] [INFO] [timer.py:264:stop] epoch=0/micro_step={it*2}/global_step={it}, RunningAvgSamplesPerSec={58.9 + rnd.uniform(-0.2,0.2):.6f}, CurrSamplesPerSec={sps:.6f}, MemAllocated=18.42GB, MaxMemAllocated=31.07GB"))
        if it % 50 == 0:
            r0.append(p0(f"{{'loss': {1.21 - (it-2000)*0.0006 + rnd.uniform(-0.03,0.03):.4f}, 'grad_norm': {rnd.uniform(0.6,0.9):.4f}, 'learning_rate': {1.8e-05 - it*1e-9:.4e}, 'epoch': {it/4200:.2f}}}"))
    # fault on dgx-09 GPU 2 (PCI 3a) -> global rank 26
    L = logs["dgx-09"]
    p9 = lambda s: f"dgx-09: {s}"
    stamp = t_fail.strftime("%m%d %H:%M:%S") + ".512031722"
    L += [p9(f"[rank26]:[E{stamp} ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 26] Process group watchdog thread terminated with exception: CUDA error: unknown error"),
          p9("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."),
          p9("For debugging consider passing CUDA_LAUNCH_BLOCKING=1"),
          p9("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."),
          p9(""),
          p9("Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):"),
          p9("frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3b6d41df86 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)"),
          p9("frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64 (0x7f3b6d3ccd10 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)"),
          p9("frame #2: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x118 (0x7f3b6d4f8f08 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10_cuda.so)"),
          p9("frame #3: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x56 (0x7f3b6e7173e6 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)"),
          p9(""),
          p9("terminate called after throwing an instance of 'c10::DistBackendError'"),
          p9(f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank 26] Process group watchdog thread terminated with exception: CUDA error: unknown error"),
          p9(f"[{dstime(t_fail + timedelta(seconds=3))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 61500"),
          p9(f"[{dstime(t_fail + timedelta(seconds=3))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 61501"),
          p9(f"[{dstime(t_fail + timedelta(seconds=3))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 61502"),
          p9(f"[{dstime(t_fail + timedelta(seconds=4))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 61503"),
          p9(f"[{dstime(t_fail + timedelta(seconds=9))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train_sft.py', '--local_rank=2', '--deepspeed', 'configs/zero3_bf16.json', '--resume_from_checkpoint', '/mnt/ckpt/mistral-sft/global_step2000'] exits with return code = -6")]
    B.mark("logs/dgx-09/pdsh-deepspeed.log", "Process group watchdog thread terminated with exception: CUDA error: unknown error", 0)
    # healthy nodes: watchdog timeout (DeepSpeed default 30 min) naming peers
    tw = t_fail + timedelta(seconds=1800)
    seq = 2148 * 96 + 17
    for ni, h in enumerate(hosts[:3]):
        p = lambda s, h=h: f"{h}: {s}"
        for lr in (0, 3, 6):
            rr = ni * 8 + lr
            st = (tw + timedelta(milliseconds=rnd.randint(5, 800))).strftime("%m%d %H:%M:%S") + f".{rnd.randint(100000000,999999999)}"
            logs[h].append(p(f"[rank{rr}]:[E{st} ProcessGroupNCCL.cpp:616] [Rank {rr}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=_ALLGATHER_BASE, NumelIn=4718592, NumelOut=150994944, Timeout(ms)=1800000) ran for {1800000+rnd.randint(10,90)} milliseconds before timing out."))
        pid = 61200 + ni * 100 + 1
        logs[h].append(p(f"{h}:{pid}:{pid+344} [1] NCCL INFO [Service thread] Connection closed by localRank 1"))
        logs[h].append(p(f"[{dstime(tw + timedelta(seconds=2))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train_sft.py', '--local_rank=0', '--deepspeed', 'configs/zero3_bf16.json', '--resume_from_checkpoint', '/mnt/ckpt/mistral-sft/global_step2000'] exits with return code = -6"))
    launcher += ["pdsh@dgx-06: dgx-09: ssh exited with exit code 1",
                 "pdsh@dgx-06: dgx-07: ssh exited with exit code 1",
                 "pdsh@dgx-06: dgx-06: ssh exited with exit code 1",
                 "pdsh@dgx-06: dgx-08: ssh exited with exit code 1"]
    for h in hosts:
        B.write(f"logs/{h}/pdsh-deepspeed.log", logs[h])
    # probes
    dm = boot_noise(ts("2026-11-03T18:22:31"), "dgx-09")
    dm += [f"{dmesg_t(ts('2026-11-17T02:10:44'))} EXT4-fs (nvme1n1): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none.",
           f"{dmesg_t(t_fail - timedelta(seconds=1))} pcieport 0000:37:01.0: AER: Uncorrected (Fatal) error received: 0000:37:01.0",
           f"{dmesg_t(t_fail - timedelta(seconds=1))} pcieport 0000:37:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)",
           f"{dmesg_t(t_fail)} NVRM: Xid (PCI:0000:3a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
           f"{dmesg_t(t_fail)} NVRM: GPU 0000:3a:00.0: GPU has fallen off the bus.",
           f"{dmesg_t(t_fail)} NVRM: A GPU crash dump has been created. If possible, please run",
           "               NVRM: nvidia-bug-report.sh as root to collect this data before",
           "               NVRM: the NVIDIA kernel module is unloaded.",
           f"{dmesg_t(t_fail + timedelta(seconds=2))} NVRM: Xid (PCI:0000:3a:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"]
    B.write("probes/dgx-09/dmesg.txt", dm)
    B.mark("probes/dgx-09/dmesg.txt", "79, pid='<unknown>'")
    B.write("probes/dgx-09/nvidia-smi.txt", ["Unable to determine the device handle for GPU0000:3A:00.0: Unknown Error"])
    B.mark("probes/dgx-09/nvidia-smi.txt", "Unable to determine the device handle")
    when = t_fail + timedelta(minutes=41)
    ns = nvsmi_header(when)
    for bus in H100_BUS:
        ns += nvsmi_gpu(bus, ("ECC",), ecc={"adc": rnd.choice([0, 0, 2])})
    B.write("probes/dgx-07/nvidia-smi.txt", ns)
    B.job(f"""
job_id: "ds-20481"
name: mistral-7b-sft-zero3
framework: deepspeed
launcher: pdsh
status: failed
started_at: {iso(start)}
ended_at: {iso(tw + timedelta(seconds=5))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + f"""code:
  - {{commit: 71c0e2b, at: 2026-11-10T11:32:00Z, message: "sft: packing + flash-attn 2"}}
checkpoints:
  - {{step: 1800, at: 2026-11-17T23:58:00Z, path: /mnt/ckpt/mistral-sft/global_step1800, valid: true}}
  - {{step: 2000, at: 2026-11-18T04:31:00Z, path: /mnt/ckpt/mistral-sft/global_step2000, valid: true}}
  - {{step: 2100, at: 2026-11-18T09:28:34Z, path: /mnt/ckpt/mistral-sft/global_step2100, valid: false}}
spares: 1
scheduler: none
""")
    B.truth(fault="gpu_fell_off_bus", category="hardware",
            root_cause="GPU 2 (PCI 0000:3a:00) of dgx-09 fell off the bus (PCIe fatal AER, then Xid 79); rank 26's NCCL watchdog died with 'CUDA error: unknown error' and nvidia-smi can no longer open the device; the other nodes timed out in the ZeRO-3 all-gather",
            faulty_nodes=["dgx-09"], stage="training", iteration=it_fail,
            actions=[{"kind": "evict", "nodes": ["dgx-09"]}, {"kind": "restart", "from_step": 2000}])

# ---------------------------------------------------------------- C: NeMo on Kubernetes, Xid 74
def build_c():
    B = Bundle("k8s-nemo-xid74-nvlink-2node")
    rnd = random.Random(33)
    nodes = ["gke-a3mega-pool-7f2c", "gke-a3mega-pool-9d1e"]
    pods = ["llama31-8b-sft-worker-0", "llama31-8b-sft-worker-1"]
    ips = ["10.88.1.14", "10.88.3.22"]
    start = ts("2026-11-21T14:00:03")
    t0 = ts("2026-11-21T14:09:40")
    step_s = 3.03
    first, last_done, it_fail = 1200, 1230, 1231
    logs = {n: [] for n in nodes}

    def k(d):
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond*1000 + rnd.randint(0,999):09d}Z "

    for ni, n in enumerate(nodes):
        L = logs[n]
        tt = start + timedelta(seconds=2)
        L += [k(tt) + "W1121 14:00:05.118000 1 torch/distributed/run.py:793] ",
              k(tt) + "W1121 14:00:05.118000 1 torch/distributed/run.py:793] *****************************************",
              k(tt) + "W1121 14:00:05.118000 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
              k(tt) + "W1121 14:00:05.118000 1 torch/distributed/run.py:793] *****************************************"]
        tt += timedelta(seconds=30)
        for lr in range(8):
            L.append(k(tt) + f"[NeMo W 2026-11-21 14:00:35 nemo_logging:361] /usr/local/lib/python3.10/dist-packages/pyannote/core/notebook.py:134: MatplotlibDeprecationWarning: The get_cmap function was deprecated in Matplotlib 3.7 and will be removed two minor releases later. Use ``matplotlib.colormaps[name]`` or ``matplotlib.colormaps.get_cmap(obj)`` or ``pyplot.get_cmap(obj)`` instead.")
        L.append(k(tt) + f"{pods[ni]}:{180+ni}:{180+ni} [0] NCCL INFO Bootstrap : Using eth0:{ips[ni]}<0>")
        L.append(k(tt) + f"{pods[ni]}:{180+ni}:{180+ni} [0] NCCL INFO NET/Plugin: Loaded net plugin FasTrak (v8)")
        L.append(k(tt) + f"{pods[ni]}:{180+ni}:{905+ni} [0] NCCL INFO Channel 00/24 :    0   1   2   3   4   5   6   7")
        L.append(k(tt) + f"{pods[ni]}:{180+ni}:{905+ni} [0] NCCL INFO Connected all rings")
        if ni == 0:
            L += [k(tt) + "[NeMo I 2026-11-21 14:00:41 nemo_logging:393] Rank 0 has data parallel group : [0, 8]",
                  k(tt) + "[NeMo I 2026-11-21 14:00:41 nemo_logging:393] Rank 0 has tensor model parallel group: [0, 1, 2, 3, 4, 5, 6, 7]",
                  k(tt) + "[NeMo I 2026-11-21 14:00:41 nemo_logging:393] Rank 0 has pipeline model parallel group: [0]",
                  k(tt + timedelta(seconds=60)) + "[NeMo I 2026-11-21 14:01:41 nemo_logging:393] Loading distributed checkpoint with TensorStoreLoadShardedStrategy",
                  k(tt + timedelta(seconds=500)) + "Restoring states from the checkpoint path at /mnt/ckpt/llama31-8b-sft/checkpoints/model--step=1199-consumed_samples=153600.0",
                  k(tt + timedelta(seconds=540)) + "[NeMo I 2026-11-21 14:09:38 nemo_logging:393] Restored all states from the checkpoint at /mnt/ckpt/llama31-8b-sft/checkpoints/model--step=1199-consumed_samples=153600.0"]
    # progress printer lines on worker-0 (rank 0)
    t = t0
    L = logs[nodes[0]]
    for it in range(first, last_done + 1):
        t += timedelta(seconds=step_s + rnd.uniform(-0.05, 0.05))
        L.append(k(t) + f"Training epoch 0, iteration {it}/2999 | lr: {1e-05:.3g} | global_batch_size: 128 | global_step: {it} | reduced_train_loss: {1.94 - (it-1200)*0.002 + rnd.uniform(-0.03,0.03):.4f} | train_step_timing in s: {step_s + rnd.uniform(-0.04,0.04):.2f} | consumed_samples: {(it+1)*128}")
    t_fail = t + timedelta(seconds=1.7)
    # worker-1 (node 9d1e), GPU 3 = global rank 11
    W = logs[nodes[1]]
    tf = t_fail + timedelta(milliseconds=120)
    W += [k(tf) + "[rank11]: Traceback (most recent call last):",
          k(tf) + "[rank11]:   File \"/opt/NeMo/examples/llm/finetune/llama31_sft.py\", line 96, in <module>",
          k(tf) + "[rank11]:     llm.finetune(",
          k(tf) + "[rank11]:   File \"/opt/NeMo/nemo/collections/llm/api.py\", line 221, in finetune",
          k(tf) + "[rank11]:     return train(",
          k(tf) + "[rank11]:   File \"/opt/NeMo/nemo/collections/llm/api.py\", line 107, in train",
          k(tf) + "[rank11]:     trainer.fit(model, data)",
          k(tf) + "[rank11]:   File \"/usr/local/lib/python3.10/dist-packages/lightning/pytorch/trainer/trainer.py\", line 538, in fit",
          k(tf) + "[rank11]:     call._call_and_handle_interrupt(",
          k(tf) + "[rank11]:   File \"/opt/megatron-lm/megatron/core/tensor_parallel/mappings.py\", line 24, in _reduce",
          k(tf) + "[rank11]:     torch.distributed.all_reduce(input_, group=get_tensor_model_parallel_group())",
          k(tf) + "[rank11]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 2501, in all_reduce",
          k(tf) + "[rank11]:     work.wait()",
          k(tf) + "[rank11]: RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
          k(tf) + "[rank11]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
          k(tf) + "[rank11]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
          k(tf) + "[rank11]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]
    B.mark(f"logs/{nodes[1]}/{pods[1]}.log", "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution")
    for lr in (1, 2, 4, 6):
        rr = 8 + lr
        W.append(k(tf + timedelta(seconds=1)) + f"{pods[1]}:{181}:{912+lr} [{lr}] NCCL INFO [Service thread] Connection closed by localRank 3")
    for lr in (0, 5, 7):
        rr = 8 + lr
        st = (tf + timedelta(seconds=2)).strftime("%m%d %H:%M:%S") + f".{rnd.randint(100000000,999999999)}"
        W.append(k(tf + timedelta(seconds=2)) + f"[rank{rr}]:[E{st} ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 6 Rank {lr}] Process group watchdog thread terminated with exception: CUDA error: uncorrectable NVLink error detected during the execution")
    te = tf + timedelta(seconds=9)
    W += [k(te) + f"W1121 {te.strftime('%H:%M:%S')}.402000 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 188 closing signal SIGTERM",
          k(te) + f"W1121 {te.strftime('%H:%M:%S')}.402000 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 189 closing signal SIGTERM",
          k(te) + f"E1121 {te.strftime('%H:%M:%S')}.973000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 3 (pid: 191) of binary: /usr/bin/python",
          k(te) + "Traceback (most recent call last):",
          k(te) + "  File \"/usr/local/bin/torchrun\", line 33, in <module>",
          k(te) + "    sys.exit(load_entry_point('torch==2.5.1', 'console_scripts', 'torchrun')())",
          k(te) + "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py\", line 919, in main",
          k(te) + "    run(args)",
          k(te) + "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 355, in wrapper",
          k(te) + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
          k(te) + "============================================================",
          k(te) + "/opt/NeMo/examples/llm/finetune/llama31_sft.py FAILED",
          k(te) + "------------------------------------------------------------",
          k(te) + "Failures:",
          k(te) + "[1]:",
          k(te) + f"  time      : {te.strftime('%Y-%m-%d_%H:%M:%S')}",
          k(te) + f"  host      : {pods[1]}",
          k(te) + "  rank      : 8 (local_rank: 0)",
          k(te) + "  exitcode  : -6 (pid: 188)",
          k(te) + "  error_file: <N/A>",
          k(te) + "  traceback : Signal 6 (SIGABRT) received by PID 188",
          k(te) + "------------------------------------------------------------",
          k(te) + "Root Cause (first observed failure):",
          k(te) + "[0]:",
          k(te) + f"  time      : {tf.strftime('%Y-%m-%d_%H:%M:%S')}",
          k(te) + f"  host      : {pods[1]}",
          k(te) + "  rank      : 11 (local_rank: 3)",
          k(te) + "  exitcode  : 1 (pid: 191)",
          k(te) + "  error_file: <N/A>",
          k(te) + "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
          k(te) + "============================================================"]
    # worker-0: DP peers (data-parallel all-reduce over the network) time out
    tw = tf + timedelta(seconds=1800)
    L = logs[nodes[0]]
    for lr in (0, 3, 5):
        st = (tw + timedelta(milliseconds=rnd.randint(5, 700))).strftime("%m%d %H:%M:%S") + f".{rnd.randint(100000000,999999999)}"
        L.append(k(tw) + f"[rank{lr}]:[E{st} ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=24617, OpType=_REDUCE_SCATTER_BASE, NumelIn=1003520000, NumelOut=501760000, Timeout(ms)=1800000) ran for {1800000+rnd.randint(10,99)} milliseconds before timing out.")
    L.append(k(tw + timedelta(seconds=1)) + f"{pods[0]}:180:907 [0] NCCL INFO comm 0x55d0c8a21e40 rank 0 nranks 16 cudaDev 0 busId 18000 - Abort COMPLETE")
    L.append(k(tw + timedelta(seconds=3)) + f"E1121 {(tw + timedelta(seconds=3)).strftime('%H:%M:%S')}.114000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: 180) of binary: /usr/bin/python")
    for ni, n in enumerate(nodes):
        B.write(f"logs/{n}/{pods[ni]}.log", logs[n])
    # probes: the kernel log of the node that holds worker-1
    dm = boot_noise(ts("2026-11-19T06:14:50"), nodes[1])
    dm += [f"{dmesg_t(ts('2026-11-21T13:59:58'))} IPv4: martian source 10.88.3.22 from 169.254.169.254, on dev eth0",
           f"{dmesg_t(t_fail)} NVRM: Xid (PCI:0000:5d:00): 74, pid=191, name=pt_main_thread, NVLink: fatal error detected on link 4(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)",
           f"{dmesg_t(t_fail)} NVRM: Xid (PCI:0000:5d:00): 45, pid=191, name=pt_main_thread, Ch 00000010",
           f"{dmesg_t(t_fail + timedelta(seconds=1))} NVRM: Xid (PCI:0000:3a:00): 45, pid=190, name=pt_main_thread, Ch 00000010",
           f"{dmesg_t(t_fail + timedelta(seconds=1))} NVRM: Xid (PCI:0000:9a:00): 45, pid=192, name=pt_main_thread, Ch 00000010"]
    B.write(f"probes/{nodes[1]}/dmesg.txt", dm)
    B.mark(f"probes/{nodes[1]}/dmesg.txt", "74, pid=191")
    ev = {"probe": "kubectl-events", "status": "warn",
          "detail": f"Warning  BackOff  pod/{pods[1]}  Back-off restarting failed container pytorch in pod {pods[1]}_training(0c8e1d42-5b7a-4f3e-9a61-1d2e7b3c9f10)",
          "metrics": {"restarts": 1, "node": nodes[1]}}
    B.write_raw(f"probes/{nodes[1]}/kubectl-events.json", json.dumps(ev, indent=2) + "\n")
    B.job(f"""
job_id: "pytorchjob/llama31-8b-sft"
name: llama31-8b-sft
framework: nemo
launcher: torchrun
scheduler: kubernetes
status: failed
started_at: {iso(start)}
ended_at: {iso(tw + timedelta(seconds=6))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 1, dp: 2, cp: 1, ep: 1}}
nodes:
  - {{host: {nodes[0]}, ip: {ips[0]}, pod: {pods[0]}, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: {nodes[1]}, ip: {ips[1]}, pod: {pods[1]}, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
code:
  - {{commit: 2d9e4f1, at: 2026-11-12T08:00:00Z, message: "sft recipe: seq 8192, packed"}}
  - {{commit: c51a7b0, at: 2026-11-19T17:45:00Z, message: "bump nemo to 24.12 container"}}
checkpoints:
  - {{step: 999, at: 2026-11-21T04:12:00Z, path: /mnt/ckpt/llama31-8b-sft/checkpoints/model--step=999-consumed_samples=128000.0, valid: true}}
  - {{step: 1199, at: 2026-11-21T11:58:00Z, path: /mnt/ckpt/llama31-8b-sft/checkpoints/model--step=1199-consumed_samples=153600.0, valid: true}}
spares: 3
history: [pytorchjob/llama31-8b-sft-r2]
""")
    B.truth(fault="nvlink_error", category="hardware",
            root_cause=f"fatal NVLink error (Xid 74) on link 4 of GPU 3 (PCI 0000:5d:00) of node {nodes[1]}: rank 11 died with 'uncorrectable NVLink error detected during the execution', its tensor-parallel peers on the node aborted, the DP peers on the other node hit the watchdog",
            faulty_nodes=[nodes[1]], stage="training", iteration=it_fail,
            actions=[{"kind": "evict", "nodes": [nodes[1]]}, {"kind": "restart", "from_step": 1199}])

# ---------------------------------------------------------------- D: torchtitan under srun -l, IB link flapping
def build_d():
    B = Bundle("srun-torchtitan-ib-flap-8node")
    rnd = random.Random(44)
    hosts = [f"h100-r2-{i:02d}" for i in range(1, 9)]
    ips = [f"10.60.2.{i}" for i in range(1, 9)]
    bad = 4  # h100-r2-05 (task 4)
    start = ts("2026-11-22T01:30:11")
    t0 = ts("2026-11-22T01:36:40")
    step_s = 6.62
    first, last_done, it_fail = 7001, 7311, 7312
    logs = {h: [] for h in hosts}

    def tt_(d):
        return d.strftime("%Y-%m-%d %H:%M:%S,") + f"{d.microsecond//1000:03d}"

    for ni, h in enumerate(hosts):
        L = logs[h]
        pre = f"{ni}: "
        L += [pre + "W1122 01:30:14.551000 2211 torch/distributed/run.py:793] ",
              pre + "W1122 01:30:14.551000 2211 torch/distributed/run.py:793] *****************************************",
              pre + "W1122 01:30:14.551000 2211 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
              pre + "W1122 01:30:14.551000 2211 torch/distributed/run.py:793] *****************************************"]
        r0 = ni * 8
        L.append(pre + f"[rank{r0}]:[titan] 2026-11-22 01:30:31,204 - root - INFO - Starting job: Llama 3 70B training")
        L.append(pre + f"[rank{r0}]:[titan] 2026-11-22 01:30:33,871 - root - INFO - Building 2-D device mesh with ['dp_shard', 'tp'], [8, 8]")
        L.append(pre + f"[rank{r0}]:[titan] 2026-11-22 01:30:34,012 - root - WARNING - ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden to 3 based on job config")
        pid = 2230 + ni
        L.append(pre + f"[rank{r0}]:{h}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB ibp12s0:{ips[ni]}<0>")
        L.append(pre + f"[rank{r0}]:[titan] 2026-11-22 01:36:20,420 - root - INFO - Loading the checkpoint at step 7000.")
        L.append(pre + f"[rank{r0}]:[titan] 2026-11-22 01:36:39,978 - root - INFO - Finished loading the checkpoint in 19.56 seconds.")
        L.append(pre + f"[rank{r0}]:/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_loader.py:105: FutureWarning: `load_state_dict` is deprecated and will be removed in future versions. Please use `load` instead.")
    # per-step lines (torchtitan logs on every rank's process; we keep local rank 0 of each node)
    t = t0
    for it in range(first, last_done + 1):
        t += timedelta(seconds=step_s + rnd.uniform(-0.06, 0.06))
        if it % 5 != 0 and it < last_done - 4:
            continue
        loss = 2.02 - (it - 7000) * 0.0003 + rnd.uniform(-0.02, 0.02)
        for ni, h in enumerate(hosts):
            if ni not in (0, bad, 7):
                if it % 25 != 0:
                    continue
            logs[h].append(f"{ni}: [rank{ni*8}]:[titan] {tt_(t)} - root - INFO - step: {it}  loss: {loss:7.4f}  memory: 61.37GiB(77.49%)  tps: {int(1238 + rnd.uniform(-9,9)):,}  tflops: {578 + rnd.uniform(-4,4):.2f}  mfu: {58.4 + rnd.uniform(-0.4,0.4):.2f}%")
        if it == 7100:
            for ni, h in enumerate(hosts):
                logs[h].append(f"{ni}: [rank{ni*8}]:[titan] {tt_(t)} - root - INFO - [GC] Peforming periodical GC collection. 0.07 seconds.")
    # flap events on h100-r2-05 mlx5_4 (NCCL logs the async events)
    Lb = logs[hosts[bad]]
    pre = f"{bad}: "
    pidb = 2230 + bad
    flap_t = [t0 + timedelta(seconds=step_s * (7190 - first)), t0 + timedelta(seconds=step_s * (7265 - first)),
              t + timedelta(seconds=2.4)]
    # NCCL async events for the earlier flaps: we insert them at the right place (approximate, by iteration)
    ins = []
    for k_, ft in enumerate(flap_t[:2]):
        ins.append((7190 if k_ == 0 else 7265, [
            pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+611} [4] NCCL WARN NET/IB : mlx5_4:1 Got async event : port error",
            pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+611} [4] NCCL WARN NET/IB : mlx5_4:1 Got async event : port active"]))
    out = []
    for line in Lb:
        out.append(line)
        for itx, lines in ins:
            if f"step: {itx} " in line:
                out.extend(lines)
    Lb[:] = out
    tf = flap_t[2]
    Lb += [pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+611} [4] NCCL WARN NET/IB : mlx5_4:1 Got async event : port error",
           pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+650} [4] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.60.2.6<52114> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.60.2.5 remoteGids::ffff:10.60.2.6 hca mlx5_4",
           pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+650} [4] NCCL INFO transport/net.cc:1298 -> 6",
           pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+650} [4] NCCL INFO proxy.cc:694 -> 6",
           pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+650} [4] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]",
           pre + f"[rank{bad*8+4}]:{hosts[bad]}:{pidb+4}:{pidb+611} [4] NCCL WARN NET/IB : mlx5_4:1 Got async event : port active",
           pre + f"[rank{bad*8+4}]:[E1122 {(tf+timedelta(seconds=1)).strftime('%H:%M:%S')}.208114526 ProcessGroupNCCL.cpp:1595] [PG ID 1 PG GUID 1 Rank 4] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
           pre + f"[rank{bad*8+4}]:ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
           pre + f"[rank{bad*8+4}]:Last error:",
           pre + f"[rank{bad*8+4}]:NET/IB : Got completion from peer 10.60.2.6<52114> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.60.2.5 remoteGids::ffff:10.60.2.6 hca mlx5_4"]
    B.mark(f"logs/{hosts[bad]}/slurm-88123.out", "Got async event : port error", 2)
    # peers on h100-r2-06 (the other end of the dp_shard ring) and the rest: remote error / watchdog
    for ni, h in enumerate(hosts):
        if ni == bad:
            continue
        pre = f"{ni}: "
        rr = ni * 8 + 4
        pid = 2230 + ni
        if ni in (3, 5):
            peer = "10.60.2.5"
            logs[h] += [pre + f"[rank{rr}]:{h}:{pid+4}:{pid+650} [4] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer}<41873> with status=12 opcode=129 len=0 vendor err 129 (Recv) localGid ::ffff:{ips[ni]} remoteGids::ffff:{peer} hca mlx5_4",
                        pre + f"[rank{rr}]:[E1122 {(tf+timedelta(seconds=2)).strftime('%H:%M:%S')}.771402215 ProcessGroupNCCL.cpp:1595] [PG ID 1 PG GUID 1 Rank {ni}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5"]
        else:
            st = (tf + timedelta(seconds=600)).strftime("%H:%M:%S") + f".{rnd.randint(100000000,999999999)}"
            logs[h] += [pre + f"[rank{rr}]:[E1122 {st} ProcessGroupNCCL.cpp:616] [Rank {ni}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1180233, OpType=_REDUCE_SCATTER_BASE, NumelIn=1174405120, NumelOut=146800640, Timeout(ms)=600000) ran for {600000+rnd.randint(10,99)} milliseconds before timing out."]
    L0 = logs[hosts[0]]
    te = tf + timedelta(seconds=604)
    L0 += [f"srun: error: {hosts[bad]}: task {bad}: Exited with exit code 1",
           "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
           f"slurmstepd: error: *** STEP 88123.0 ON {hosts[0]} CANCELLED AT {te.strftime('%Y-%m-%dT%H:%M:%S')} ***",
           f"srun: error: {hosts[3]}: task 3: Exited with exit code 1",
           f"srun: error: {hosts[5]}: task 5: Exited with exit code 1",
           f"srun: error: {hosts[0]}: task 0: Killed",
           f"srun: error: {hosts[7]}: task 7: Killed"]
    for h in hosts:
        B.write(f"logs/{h}/slurm-88123.out", logs[h])
    # probes on the flapping node
    dm = boot_noise(ts("2026-11-08T11:02:10"), hosts[bad])
    for k_, ft in enumerate(flap_t):
        dm += [f"{dmesg_t(ft)} mlx5_core 0000:4c:00.0 mlx5_4: Port: 1 Link DOWN",
               f"{dmesg_t(ft + timedelta(seconds=6))} mlx5_core 0000:4c:00.0 mlx5_4: Port: 1 Link INIT",
               f"{dmesg_t(ft + timedelta(seconds=7))} mlx5_core 0000:4c:00.0 mlx5_4: Port: 1 Link ACTIVE"]
    B.write(f"probes/{hosts[bad]}/dmesg.txt", dm)
    B.mark(f"probes/{hosts[bad]}/dmesg.txt", "mlx5_4: Port: 1 Link DOWN", 0)
    B.mark(f"probes/{hosts[bad]}/dmesg.txt", "mlx5_4: Port: 1 Link DOWN", 2)
    B.write(f"probes/{hosts[bad]}/ibstat.txt", ibstat(8, 0x946dae03008a1c40, 1301))
    pq = []
    for i in range(8):
        if i == 4:
            pq += perfquery(1305, SymbolErrorCounter=41877, LinkErrorRecoveryCounter=19, LinkDownedCounter=3,
                            PortRcvErrors=2210, PortXmitDiscards=96, PortXmitWait=1884213,
                            PortXmitData=88315530114, PortRcvData=88107743662, PortXmitPkts=402231911,
                            PortRcvPkts=401177024, PortUnicastXmitPkts=402231911, PortUnicastRcvPkts=401177020,
                            PortMulticastRcvPkts=4)
        else:
            pq += perfquery(1301 + i, PortXmitWait=rnd.randint(20000, 90000), PortXmitData=91000000000 + rnd.randint(0, 9**9),
                            PortRcvData=91000000000 + rnd.randint(0, 9**9), PortXmitPkts=410000000 + rnd.randint(0, 9**6),
                            PortRcvPkts=410000000 + rnd.randint(0, 9**6), PortUnicastXmitPkts=410000000, PortUnicastRcvPkts=410000000,
                            PortMulticastRcvPkts=4)
    B.write(f"probes/{hosts[bad]}/ib-counters.txt", pq)
    B.mark(f"probes/{hosts[bad]}/ib-counters.txt", "LinkDownedCounter:...............3")
    B.mark(f"probes/{hosts[bad]}/ib-counters.txt", "SymbolErrorCounter:..............41877")
    pq = []
    for i in range(8):
        pq += perfquery(1401 + i, PortXmitWait=rnd.randint(20000, 90000), PortXmitData=91000000000 + rnd.randint(0, 9**9),
                        PortRcvData=91000000000 + rnd.randint(0, 9**9), PortXmitPkts=410000000, PortRcvPkts=410000000,
                        PortUnicastXmitPkts=410000000, PortUnicastRcvPkts=410000000, PortMulticastRcvPkts=4)
    B.write(f"probes/{hosts[5]}/ib-counters.txt", pq)
    B.write(f"probes/{hosts[5]}/ibstat.txt", ibstat(8, 0x946dae03008a2e80, 1401))
    B.job(f"""
job_id: "88123"
name: llama3-70b-torchtitan
framework: torchtitan
launcher: srun -l torchrun
scheduler: slurm
status: failed
started_at: {iso(start)}
ended_at: {iso(te + timedelta(seconds=32))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 1, dp: 8, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + f"""code:
  - {{commit: 9a04c3e, at: 2026-11-01T10:00:00Z, message: "titan: float8 rowwise for ffn"}}
  - {{commit: e61f2d8, at: 2026-11-15T19:20:00Z, message: "data: refresh web shard list"}}
checkpoints:
  - {{step: 6500, at: 2026-11-21T19:03:00Z, path: /weka/ckpt/l3-70b/step-6500, valid: true}}
  - {{step: 7000, at: 2026-11-22T00:58:00Z, path: /weka/ckpt/l3-70b/step-7000, valid: true}}
spares: 4
""")
    B.truth(fault="ib_link_flap", category="network",
            root_cause=f"InfiniBand port mlx5_4 of {hosts[bad]} flapped three times (link DOWN/INIT/ACTIVE in dmesg, LinkDownedCounter 3, tens of thousands of symbol errors on that port only); the third flap broke rank {bad*8+4}'s NCCL connections (retry-exceeded completions) and the job failed",
            faulty_nodes=[hosts[bad]], stage="training", iteration=it_fail,
            actions=[{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 7000}])

# ---------------------------------------------------------------- E: Horovod (gloo launcher), RoCE retry exceeded
def build_e():
    B = Bundle("horovod-roce-retry-exceeded-4node")
    rnd = random.Random(55)
    hosts = ["roce-n12", "roce-n13", "roce-n14", "roce-n15"]
    ips = ["10.40.2.12", "10.40.2.13", "10.40.2.14", "10.40.2.15"]
    bad = 2
    start = ts("2026-11-23T16:40:02")
    t0 = ts("2026-11-23T16:44:30")
    step_s = 0.412
    first, last_done, it_fail = 14001, 14210, 14211
    logs = {h: [] for h in hosts}
    for ni, h in enumerate(hosts):
        L = logs[h]
        for lr in range(4):
            r = ni * 4 + lr
            L.append(f"[{r}]<stderr>:/opt/conda/lib/python3.10/site-packages/horovod/torch/__init__.py:63: UserWarning: torch.distributed.reduce_op is deprecated, please use torch.distributed.ReduceOp instead")
        for lr in range(4):
            r = ni * 4 + lr
            pid = 31000 + ni * 10 + lr
            L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+160} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_bond_0:1/RoCE [RO]; OOB bond0:{ips[ni]}<0>")
        if ni == 0:
            L += ["[0]<stdout>:NCCL version 2.19.3+cuda12.3",
                  "[0]<stdout>:loaded checkpoint /nfs/ckpt/gpt-neo-1b3/step_14000.pt (step 14000)",
                  "[0]<stdout>:Broadcasting initial variable states from rank 0 to all other processes..."]
        L.append(f"[{ni*4}]<stderr>:[W1123 16:44:21.337118 31000 torch/csrc/distributed/c10d/socket.cpp:752] [c10d] The client socket has failed to connect to [{hosts[0]}]:29510 (errno: 111 - Connection refused). Retrying")
    t = t0
    for it in range(first, last_done + 1):
        t += timedelta(seconds=step_s + rnd.uniform(-0.01, 0.01))
        if it % 10 == 0:
            logs[hosts[0]].append(f"[0]<stdout>:step {it} | loss {3.08 - (it-14000)*0.0002 + rnd.uniform(-0.02,0.02):.4f} | {step_s + rnd.uniform(-0.008,0.008):.3f} s/step | {318.4 + rnd.uniform(-1.5,1.5):.1f}k tok/s | lr {2.4e-4:.2e}")
    tf = t + timedelta(seconds=9.8)
    # faulty node: its own sends die first (it cannot get packets through its port)
    for ni, h in enumerate(hosts):
        L = logs[h]
        for lr in range(4):
            r = ni * 4 + lr
            pid = 31000 + ni * 10 + lr
            if ni == bad:
                peer = ips[3] if lr % 2 == 0 else ips[1]
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+171} [{lr}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer}<{44000+lr*7}> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{ips[ni]} remoteGids::ffff:{peer} hca mlx5_bond_0")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+171} [{lr}] NCCL INFO transport/net.cc:1298 -> 6")
            elif ni in (1, 3):
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+171} [{lr}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {ips[bad]}<{40100+lr*13}> with status=12 opcode=129 len=0 vendor err 129 (Recv) localGid ::ffff:{ips[ni]} remoteGids::ffff:{ips[bad]} hca mlx5_bond_0")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+171} [{lr}] NCCL INFO transport/net.cc:1298 -> 6")
        for lr in range(4):
            r = ni * 4 + lr
            if ni == 0 and lr > 0:
                continue
            L += [f"[{r}]<stderr>:Traceback (most recent call last):",
                  f"[{r}]<stderr>:  File \"/workspace/train_lm.py\", line 212, in <module>",
                  f"[{r}]<stderr>:    main()",
                  f"[{r}]<stderr>:  File \"/workspace/train_lm.py\", line 188, in main",
                  f"[{r}]<stderr>:    optimizer.step()",
                  f"[{r}]<stderr>:  File \"/opt/conda/lib/python3.10/site-packages/horovod/torch/optimizer.py\", line 305, in step",
                  f"[{r}]<stderr>:    self.synchronize()",
                  f"[{r}]<stderr>:  File \"/opt/conda/lib/python3.10/site-packages/horovod/torch/optimizer.py\", line 253, in synchronize",
                  f"[{r}]<stderr>:    output = synchronize(handle)",
                  f"[{r}]<stderr>:  File \"/opt/conda/lib/python3.10/site-packages/horovod/torch/mpi_ops.py\", line 1290, in synchronize",
                  f"[{r}]<stderr>:    raise HorovodInternalError(e)",
                  f"[{r}]<stderr>:horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: remote process exited or there was a network error"]
    B.mark(f"logs/{hosts[bad]}/horovodrun.log", "NCCL WARN NET/IB : Got completion from peer", 0)
    B.mark(f"logs/{hosts[3]}/horovodrun.log", "NCCL WARN NET/IB : Got completion from peer", 0)
    logs[hosts[0]] += ["Process 9 exit with status code 1.",
                       "Terminating remaining workers after failure of Process 9.",
                       "Process 0 exit with status code 143.",
                       "Traceback (most recent call last):",
                       "  File \"/opt/conda/bin/horovodrun\", line 8, in <module>",
                       "    sys.exit(run_commandline())",
                       "  File \"/opt/conda/lib/python3.10/site-packages/horovod/runner/launch.py\", line 837, in run_commandline",
                       "    _run(args)",
                       "  File \"/opt/conda/lib/python3.10/site-packages/horovod/runner/gloo_run.py\", line 298, in launch_gloo",
                       "    raise RuntimeError('Horovod detected that one or more processes exited with non-zero '",
                       "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job to be terminated. The first process to do so was:",
                       "Process name: 9",
                       "Exit code: 1"]
    for h in hosts:
        B.write(f"logs/{h}/horovodrun.log", logs[h])

    def ethtool(bad_port):
        c = [("rx_packets", 912233410421), ("tx_packets", 908812077356), ("rx_bytes", 3311029101882211),
             ("tx_bytes", 3298810477201334), ("rx_out_of_buffer", 0), ("rx_vport_rdma_unicast_packets", 887213099121),
             ("tx_vport_rdma_unicast_packets", 884100233871),
             ("rx_crc_errors_phy", 1823344 if bad_port else 0), ("rx_symbol_err_phy", 92211 if bad_port else 0),
             ("rx_discards_phy", 45120 if bad_port else 12), ("rx_corrected_bits_phy", 9912200311 if bad_port else 1102),
             ("link_down_events_phy", 0), ("rx_pause_ctrl_phy", 12011), ("tx_pause_ctrl_phy", 9381),
             ("rx_prio3_packets", 887213099121), ("rx_prio3_pause", 12011), ("np_cnp_sent", 3381 if bad_port else 1210),
             ("rp_cnp_handled", 2981)]
        return ["NIC statistics:"] + [f"     {k}: {v}" for k, v in c]
    for ni, h in enumerate(hosts):
        if ni in (bad, 1):
            pe = ethtool(ni == bad)
            B.write(f"probes/{h}/ethtool-S-bond0.txt", pe)
    B.mark(f"probes/{hosts[bad]}/ethtool-S-bond0.txt", "rx_crc_errors_phy")
    B.mark(f"probes/{hosts[bad]}/ethtool-S-bond0.txt", "rx_symbol_err_phy")
    # an all_reduce_perf from the node check afterwards shows the drop only with n14 included
    nt = ["# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
          "#",
          "# Using devices",
          "#  Rank  0 Group  0 Pid  88120 on   roce-n13 device  0 [0x17] NVIDIA A100-SXM4-80GB",
          "#  Rank  1 Group  0 Pid  88121 on   roce-n14 device  0 [0x17] NVIDIA A100-SXM4-80GB",
          "#",
          "#                                                              out-of-place                       in-place          ",
          "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
          "  1073741824     268435456     float     sum      -1   481203    2.23    2.23      0   479877    2.24    2.24      0",
          "  2147483648     536870912     float     sum      -1   969830    2.21    2.21      0   962114    2.23    2.23      0",
          "  4294967296    1073741824     float     sum      -1  1931455    2.22    2.22      0  1922017    2.23    2.23      0",
          "# Out of bounds values : 0 OK",
          "# Avg bus bandwidth    : 2.22628 ",
          "#"]
    B.write(f"probes/{hosts[bad]}/nccl-tests.txt", nt)
    B.job(f"""
job_id: "hvd-7731"
name: gpt-neo-1b3-horovod
framework: other
launcher: horovodrun --gloo
status: failed
started_at: {iso(start)}
ended_at: {iso(tf + timedelta(seconds=14))}
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*4+k) for k in range(4))}]}}\n" for i, h in enumerate(hosts)) + f"""network: RoCEv2 (mlx5_bond_0, 2x100GbE LACP)
code:
  - {{commit: 0f3a9d2, at: 2026-10-30T09:00:00Z, message: "horovod: fp16 compression for allreduce"}}
checkpoints:
  - {{step: 13000, at: 2026-11-23T13:41:00Z, path: /nfs/ckpt/gpt-neo-1b3/step_13000.pt, valid: true}}
  - {{step: 14000, at: 2026-11-23T16:29:00Z, path: /nfs/ckpt/gpt-neo-1b3/step_14000.pt, valid: true}}
spares: 0
""")
    B.truth(fault="ib_transport_retry_exceeded", category="network",
            root_cause=f"the RoCE port (mlx5_bond_0) of {hosts[bad]} corrupts frames (1.8M CRC and 92k symbol errors on its PHY, no link-down): RDMA sends from and to 10.40.2.14 exhausted their retries (completion status=12, vendor err 129, transport retry counter exceeded) and Horovod's allreduce failed on every rank",
            faulty_nodes=[hosts[bad]], stage="training", iteration=it_fail,
            actions=[{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 14000}])


# ---------------------------------------------------------------- F: JAX (MaxText) thermally throttled straggler, no timestamps
def build_f():
    B = Bundle("jax-maxtext-thermal-straggler-4node")
    rnd = random.Random(66)
    hosts = [f"a3-gpu-{i:02d}" for i in range(1, 5)]
    ips = [f"10.128.0.{40+i}" for i in range(1, 5)]
    bad, bad_gpu = 2, 4  # a3-gpu-03, GPU 4
    start = ts("2026-11-24T02:00:00")
    first, first_slow, last = 5151, 5210, 5262
    logs = {h: [] for h in hosts}
    for ni, h in enumerate(hosts):
        L = logs[h]
        L += ["System Information: Jax Version: 0.4.35",
              "System Information: Jaxlib Version: 0.4.35",
              "System Information: Jax Backend: PJRT C API",
              f"Jax distributed system initialized on process {ni} of 4, coordinator 10.128.0.41:8476",
              "Num_devices: 32, shape (1, 32, 1, 1, 1, 1, 1, 1, 1, 1, 1)",
              "Setting up checkpoint logger...",
              "Creating checkpoint manager with ocdbt=True and zarr3=True",
              "checkpoint manager exists so trying to load this run's existing checkpoint",
              "restoring from this run's directory step 5150",
              "Memstats: After params initialized:",
              f"\tUsing (GB) 21.3 / 79.1 (26.927939%) on cuda:{ni*8}",
              "/usr/local/lib/python3.10/dist-packages/jax/_src/interpreters/mlir.py:1074: UserWarning: Some donated buffers were not usable: ShapedArray(int32[]).",
              "See an explanation at https://jax.readthedocs.io/en/latest/faq.html#buffer-donation.",
              "  warnings.warn(\"Some donated buffers were not usable:\""]
    for it in range(first, last + 1):
        sec = (2.41 if it < first_slow else 3.96) + rnd.uniform(-0.02, 0.02)
        tfl = 418.6 * 2.41 / sec
        tok = 6798.3 * 2.41 / sec
        loss = 2.61 - (it - 5000) * 0.00021 + rnd.uniform(-0.015, 0.015)
        for ni, h in enumerate(hosts):
            logs[h].append(f"completed step: {it}, seconds: {sec:.3f}, TFLOP/s/device: {tfl:.3f}, Tokens/s/device: {tok:.3f}, total_weights: 524288, loss: {loss:.3f}")
        if it == 5200:
            for h in hosts:
                logs[h].append("To see full metrics 'tensorboard --logdir=gs://maxtext-runs/llama2-70b-a3/tensorboard/'")
    for h in hosts:
        B.write(f"logs/{h}/maxtext-train.log", logs[h])
    when = ts("2026-11-24T06:02:40")
    for ni in (bad, 1):
        ns = nvsmi_header(when)
        for g, bus in enumerate(H100_BUS):
            if ni == bad and g == bad_gpu:
                ns += nvsmi_gpu(bus, ("PERFORMANCE", "TEMPERATURE", "CLOCK"),
                                perf={"hws": "Active", "hwts": "Active", "swts": "Active"},
                                temp={"gpu": 91, "mem": 96}, clocks={"gr": 1095, "sm": 1095})
            else:
                ns += nvsmi_gpu(bus, ("PERFORMANCE", "TEMPERATURE", "CLOCK"),
                                perf={"swpc": rnd.choice(["Not Active", "Not Active", "Active"])},
                                temp={"gpu": rnd.randint(58, 66), "mem": rnd.randint(66, 74)},
                                clocks={"gr": rnd.choice([1980, 1965, 1950]), "sm": rnd.choice([1980, 1965, 1950])})
        B.write(f"probes/{hosts[ni]}/nvidia-smi.txt", ns)
    f = f"probes/{hosts[bad]}/nvidia-smi.txt"
    B.mark(f, "HW Thermal Slowdown           : Active")
    B.mark(f, "GPU Current Temp                  : 91 C")
    B.mark(f, "SM                                : 1095 MHz")
    dm = boot_noise(ts("2026-11-20T09:14:02"), hosts[bad])
    dm += [f"{dmesg_t(ts('2026-11-24T04:47:12'))} ipmi_si IPI0001:00: IPMI message handler: BMC returned 0xc0, which is Node Busy" ]
    B.write(f"probes/{hosts[bad]}/dmesg.txt", dm)
    fan = {"probe": "ipmitool-sdr-fan", "status": "warn",
           "detail": "Fan6 0x3d: 0 RPM, status cr (lower critical); Fan5 0x3c: 16800 RPM ok; Fan7 0x3e: 16920 RPM ok",
           "metrics": {"fan6_rpm": 0, "fan5_rpm": 16800, "fan7_rpm": 16920}}
    B.write_raw(f"probes/{hosts[bad]}/ipmi-fans.json", json.dumps(fan, indent=2) + "\n")
    B.job(f"""
job_id: "maxtext-l2-70b-a3-r4"
name: llama2-70b-maxtext
framework: other
launcher: jax.distributed (one process per host)
status: slow
started_at: {iso(start)}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + f"""code:
  - {{commit: 5b7e1f0, at: 2026-11-13T15:00:00Z, message: "maxtext: cudnn flash attention on gpu"}}
checkpoints:
  - {{step: 4650, at: 2026-11-23T22:40:00Z, path: gs://maxtext-runs/llama2-70b-a3/checkpoints/4650, valid: true}}
  - {{step: 5150, at: 2026-11-24T01:51:00Z, path: gs://maxtext-runs/llama2-70b-a3/checkpoints/5150, valid: true}}
spares: 2
""")
    B.truth(fault="gpu_straggler", category="hardware",
            root_cause=f"GPU 4 of {hosts[bad]} is thermally throttled (HW Thermal Slowdown active, 91 C, SM clock 1095 MHz against 1980; a chassis fan reads 0 RPM): from step 5210 every synchronous step waits on it and the job runs ~64% slower, with no error",
            faulty_nodes=[hosts[bad]], stage="training", iteration=first_slow,
            actions=[{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 5150}])

# ---------------------------------------------------------------- G: Ray Train, node gone (kernel panic on MCE)
def build_g():
    B = Bundle("raytrain-node-crash-mce-4node")
    rnd = random.Random(77)
    hosts = ["gpu-w1", "gpu-w2", "gpu-w3", "gpu-w4"]
    ips = ["10.0.3.11", "10.0.3.12", "10.0.3.13", "10.0.3.14"]
    node_ids = ["6f1c0e8a3d2b4f5e9a7c1b0d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b",
                "a41d9b2c7e8f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d",
                "d38e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a",
                "0b9a8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d"]
    bad = 2
    start = ts("2026-11-25T09:58:40")
    t0 = ts("2026-11-25T10:07:15")
    step_s = 1.92
    first, last_done, it_fail = 801, 902, 903
    wpid = {r: 20400 + r * 7 for r in range(32)}

    def rl(d):
        return d.strftime("%Y-%m-%d %H:%M:%S,") + f"{d.microsecond//1000:03d}"

    def W(r):
        return f"(RayTrainWorker pid={wpid[r]}, ip={ips[r // 8]})"
    D = []
    D += [f"{rl(start)}\tINFO worker.py:1642 -- Connecting to existing Ray cluster at address: 10.0.3.11:6379...",
          f"{rl(start)}\tINFO worker.py:1818 -- Connected to Ray cluster. View the dashboard at \x1b[1m\x1b[32mhttp://10.0.3.11:8265 \x1b[39m\x1b[22m",
          f"{rl(start + timedelta(seconds=2))}\tINFO tune.py:616 -- [output] This uses the legacy output and progress reporter, as Jupyter notebooks are not supported by the new engine, yet. For more information, please see https://github.com/ray-project/ray/issues/36949",
          "(TorchTrainer pid=19877, ip=10.0.3.11) Started distributed worker processes: "]
    for r in range(0, 32, 1):
        D.append(f"(TorchTrainer pid=19877, ip=10.0.3.11) - (node_id={node_ids[r//8]}, ip={ips[r//8]}, pid={wpid[r]}) world_rank={r}, local_rank={r%8}, node_rank={r//8}")
    D += [f"{W(0)} Setting up process group for: env:// [rank=0, world_size=32]",
          f"{W(0)} /usr/local/lib/python3.11/site-packages/torch/distributed/fsdp/_init_utils.py:444: UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.SHARD_GRAD_OP since the world size is 1." if False else f"{W(0)} Moving model to device: cuda:0",
          f"{W(0)} Wrapping provided model in FSDP.",
          f"{W(16)} Wrapping provided model in FSDP.",
          f"{W(0)} Restored from checkpoint /mnt/shared/ray_results/TorchTrainer_2026-11-24_22-03-11/TorchTrainer_6c1f0_00000_0/checkpoint_000003 (step 800)"]
    for r in (0, 8, 16, 24):
        pid = wpid[r]
        D.append(f"{W(r)} {hosts[r//8]}:{pid}:{pid+240} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB ibs8:{ips[r//8]}<0>")
    t = t0
    worker_logs = {h: [] for h in hosts}
    for it in range(first, last_done + 1):
        t += timedelta(seconds=step_s + rnd.uniform(-0.03, 0.03))
        loss = 2.21 - (it - 800) * 0.0009 + rnd.uniform(-0.02, 0.02)
        if it % 10 == 0:
            D.append(f"{W(0)} step {it} | loss {loss:.4f} | {step_s + rnd.uniform(-0.02,0.02):.2f} s/it | grad_norm {rnd.uniform(0.8,1.1):.3f}")
        if it % 50 == 0:
            for h in hosts:
                worker_logs[h].append(f"[{t.strftime('%Y-%m-%d %H:%M:%S')}] step {it} heartbeat ok, gpu mem 71.2 GiB")
    # crash: the node's own worker log simply ends mid-line
    tc = t + timedelta(seconds=1.1)
    worker_logs[hosts[bad]].append(f"[{tc.strftime('%Y-%m-%d %H:%M:%S')}] step 903 fwd micr")
    # peers' NCCL: retry exceeded toward the dead node, then Ray marks it dead
    tn = tc + timedelta(seconds=7)
    for r in (9, 12, 25, 30):
        pid = wpid[r]
        D.append(f"{W(r)} {hosts[r//8]}:{pid}:{pid+251} [{r%8}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {ips[bad]}<{50200 + r}> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{ips[r//8]} remoteGids::ffff:{ips[bad]} hca mlx5_{r%8}")
    tdead = tc + timedelta(seconds=30)
    D += [f"{rl(tdead)}\tWARNING worker.py:2034 -- The node with node id: {node_ids[bad]} and address: {ips[bad]} and node name: {ips[bad]} has been marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) raylet crashes unexpectedly (OOM, etc.) ",
          "\t(2) raylet has lagging heartbeats due to slow network or busy workload."]
    B.mark("logs/gpu-w1/ray-job-driver.log", "has been marked dead because the detector")
    D += [f"{W(0)} [rank0]:[E1125 {(tn).strftime('%H:%M:%S')}.311902817 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
          f"{W(0)} ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
          f"{W(0)} Last error:",
          f"{W(0)} NET/IB : Got completion from peer {ips[bad]}<50216> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{ips[0]} remoteGids::ffff:{ips[bad]} hca mlx5_0",
          "2026-11-25 10:10:53,402\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_6c1f0_00000",
          "Traceback (most recent call last):",
          "  File \"/usr/local/lib/python3.11/site-packages/ray/air/execution/_internal/event_manager.py\", line 110, in resolve_future",
          "    result = ray.get(future)",
          "  File \"/usr/local/lib/python3.11/site-packages/ray/_private/worker.py\", line 2745, in get",
          "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
          "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
          "\tclass_name: RayTrainWorker",
          "\tactor_id: 3c8e1f2a9b7d6c5e4f3a2b1c01000000",
          f"\tpid: {wpid[19]}",
          "\tnamespace: 8d2f41c7-0a9e-4b3d-8c1f-5e6a7b8c9d0e",
          f"\tip: {ips[bad]}",
          f"The actor died because its node has died. Node Id: {node_ids[bad]}",
          "\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats",
          "",
          "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause. After fixing the issue (assuming that the error is not caused by your own application logic, but rather an error such as OOM), you can restart the run from scratch or continue this run.",
          "To continue this run, you can use: `trainer = TorchTrainer.restore(\"/mnt/shared/ray_results/TorchTrainer_2026-11-24_22-03-11\")`.",
          "To start a new run that will retry on training failures, set `train.RunConfig(failure_config=train.FailureConfig(max_failures))` in the Trainer's `run_config` with `max_failures > 0`, or `max_failures = -1` for unlimited retries."]
    D = [l.replace("2026-11-25 10:10:53,402", rl(tdead + timedelta(seconds=2))) for l in D]
    B.write("logs/gpu-w1/ray-job-driver.log", D)
    for i, h in enumerate(hosts):
        txt = "\n".join(worker_logs[h])
        if i == bad:
            B.write_raw(f"logs/{h}/worker-train.out", txt)  # cut off, no final newline
        else:
            B.write(f"logs/{h}/worker-train.out", worker_logs[h])
    # probes: crash-kernel dmesg saved by kdump, and the reachability check right after
    up = 612245.118812
    mono = lambda s: f"[{s:12.6f}]"
    tcs = up + (tc - ts("2026-11-25T10:00:00")).total_seconds() - 600
    dm = [f"{mono(tcs-8000.2)} perf: interrupt took too long (3941 > 3930), lowering kernel.perf_event_max_sample_rate to 50750",
          f"{mono(tcs-3121.7)} mce: [Hardware Error]: Machine check events logged",
          f"{mono(tcs-3121.7)} EDAC skx MC2: HANDLING MCE MEMORY ERROR",
          f"{mono(tcs-3121.7)} EDAC MC2: 1 CE memory read error on CPU_SrcID#1_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x2f3a1c8 offset:0x640 grain:32 syndrome:0x0 -  err_code:0x0000:0x009f  SystemAddress:0x2f3a1c8640 ProcessorSocketId:0x1 MemoryControllerId:0x0 ChannelAddress:0x179d0e440 ChannelId:0x1 RankAddress:0xbce8720 PhysicalRankId:0x0 DimmSlotId:0x0 Row:0x5e74 Column:0x390 Bank:0x2 BankGroup:0x1 ChipSelect:0x0 ChipId:0x0)",
          f"{mono(tcs)} mce: [Hardware Error]: CPU 37: Machine Check Exception: 5 Bank 13: be00000001010092",
          f"{mono(tcs)} mce: [Hardware Error]: RIP 10:<ffffffff8a2f1c34> {{native_queued_spin_lock_slowpath+0x164/0x2a0}}",
          f"{mono(tcs)} mce: [Hardware Error]: TSC 2b3c1a8f5e21 ADDR 2f3a1c8640 MISC 200401c00090a086 ",
          f"{mono(tcs)} mce: [Hardware Error]: PROCESSOR 0:806f8 TIME {int(tc.timestamp())} SOCKET 1 APIC 4b microcode 2b000590",
          f"{mono(tcs)} mce: [Hardware Error]: Run the above through 'mcelog --ascii'",
          f"{mono(tcs)} mce: [Hardware Error]: Machine check: Processor context corrupt",
          f"{mono(tcs)} Kernel panic - not syncing: Fatal machine check",
          f"{mono(tcs)} Kernel Offset: 0x9200000 from 0xffffffff81000000 (relocation range: 0xffffffff80000000-0xffffffffbfffffff)"]
    B.write(f"probes/{hosts[bad]}/dmesg.txt", dm)
    B.mark(f"probes/{hosts[bad]}/dmesg.txt", "Machine Check Exception: 5 Bank 13")
    B.mark(f"probes/{hosts[bad]}/dmesg.txt", "Kernel panic - not syncing: Fatal machine check")
    reach = {"probe": "ssh-reachability", "status": "fail",
             "detail": f"ssh: connect to host {ips[bad]} port 22: No route to host (checked {iso(tdead + timedelta(minutes=3))}); BMC reports the host rebooted at {iso(tc + timedelta(minutes=6))}",
             "metrics": {"reachable": 0}}
    B.write_raw(f"probes/{hosts[bad]}/reachability.json", json.dumps(reach, indent=2) + "\n")
    B.write(f"probes/{hosts[1]}/dmesg.txt", boot_noise(ts("2026-11-18T07:02:44"), hosts[1]))
    B.job(f"""
job_id: "raysubmit_Wq3xT9fLk2Bv7N"
name: qwen2-7b-cpt-raytrain
framework: fsdp
launcher: ray job submit (TorchTrainer)
scheduler: ray
status: failed
started_at: {iso(start)}
ended_at: {iso(tdead + timedelta(seconds=3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + f"""code:
  - {{commit: 8c2e7d4, at: 2026-11-16T13:10:00Z, message: "cpt: 32k context, ring attention off"}}
checkpoints:
  - {{step: 600, at: 2026-11-25T03:12:00Z, path: /mnt/shared/ray_results/TorchTrainer_2026-11-24_22-03-11/TorchTrainer_6c1f0_00000_0/checkpoint_000002, valid: true}}
  - {{step: 800, at: 2026-11-25T09:41:00Z, path: /mnt/shared/ray_results/TorchTrainer_2026-11-24_22-03-11/TorchTrainer_6c1f0_00000_0/checkpoint_000003, valid: true}}
spares: 1
""")
    B.truth(fault="node_crash", category="hardware",
            root_cause=f"{hosts[bad]} ({ips[bad]}) took a fatal machine check (uncorrected CPU/memory error, 'Kernel panic - not syncing: Fatal machine check') and went down mid-step: its worker log stops mid-line, peers' RDMA sends to it exhausted their retries and Ray marked the node dead",
            faulty_nodes=[hosts[bad]], stage="training", iteration=it_fail,
            actions=[{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 800}])

# ---------------------------------------------------------------- H: HF accelerate in journald, tqdm bars, congested port (flows)
def build_h():
    B = Bundle("journald-accelerate-slow-link-flows-4node")
    rnd = random.Random(88)
    hosts = ["hpc-c01", "hpc-c02", "hpc-c03", "hpc-c04"]
    ips = ["10.70.0.1", "10.70.0.2", "10.70.0.3", "10.70.0.4"]
    bad = 3
    start = ts("2026-11-26T09:00:05")
    t0 = ts("2026-11-26T09:06:30")
    first, first_slow, last = 7001, 7400, 7440
    fast, slow = 1.92, 3.41
    total = 20000
    pids = [40112, 38877, 39120, 41006]
    J = {h: [] for h in hosts}

    def jl(d, i, msg, ident="accelerate"):
        return f"{d.strftime('%Y-%m-%dT%H:%M:%S')}+0000 {hosts[i]} {ident}[{pids[i]}]: {msg}"

    for i, h in enumerate(hosts):
        d = start
        J[h] += [f"{d.strftime('%Y-%m-%dT%H:%M:%S')}+0000 {h} systemd[1]: Started llm-train@cpt-r5.service - LLM training (cpt-r5).",
                 jl(d, i, "The following values were not passed to `accelerate launch` and had defaults used instead:"),
                 jl(d, i, "\t`--dynamo_backend` was set to a value of `'no'`"),
                 jl(d, i, "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`."),
                 jl(d + timedelta(seconds=21), i, "/opt/venv/lib/python3.11/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:690: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict(), which can support different parallelisms, FSDP1, FSDP2, DDP. API doc: https://pytorch.org/docs/stable/distributed.checkpoint.html#torch.distributed.checkpoint.state_dict.get_state_dict .Tutorial: https://pytorch.org/tutorials/recipes/distributed_checkpoint_recipe.html ."),
                 jl(d + timedelta(seconds=22), i, f"{h}:{pids[i]+1}:{pids[i]+1} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ibp65s0:{ips[i]}<0>")]
    d = start + timedelta(seconds=30)
    J["hpc-c01"] += [jl(d, 0, f"{d.strftime('%m/%d/%Y %H:%M:%S')} - INFO - __main__ - Distributed environment: FSDP  Backend: nccl"),
                     jl(d, 0, "Num processes: 32"),
                     jl(d, 0, "Process index: 0"),
                     jl(d, 0, "Local process index: 0"),
                     jl(d, 0, "Device: cuda:0"),
                     jl(d, 0, ""),
                     jl(d, 0, "Mixed precision type: bf16"),
                     jl(d + timedelta(seconds=300), 0, f"{(d + timedelta(seconds=300)).strftime('%m/%d/%Y %H:%M:%S')} - INFO - accelerate.accelerator - Loading states from /scratch/ckpt/cpt-r5/checkpoint-7000"),
                     jl(d + timedelta(seconds=350), 0, f"{(d + timedelta(seconds=350)).strftime('%m/%d/%Y %H:%M:%S')} - INFO - accelerate.checkpointing - All model weights loaded successfully"),
                     jl(d + timedelta(seconds=352), 0, f"{(d + timedelta(seconds=352)).strftime('%m/%d/%Y %H:%M:%S')} - INFO - __main__ - ***** Resuming training from step 7000 *****")]
    # step times and iteration timeline
    t = t0
    timeline = []
    bar = []
    for it in range(first, last + 1):
        dt = (fast if it < first_slow else slow) + rnd.uniform(-0.04, 0.04)
        s = t
        t = t + timedelta(seconds=dt)
        timeline.append({"iteration": it, "start": round(s.timestamp(), 3), "end": round(t.timestamp(), 3)})
        el = (t - t0).total_seconds() + 7000 * fast
        rate = dt
        rem = (total - it) * rate
        pct = int(100 * it / total)
        barw = int(pct / 10)
        fmt = lambda x: f"{int(x//3600)}:{int(x%3600//60):02d}:{int(x%60):02d}"
        bar.append(f"Steps:  {pct}%|{'█'*barw}{'▍' if pct%10>=5 else ' '}{' '*(9-barw)}| {it}/{total} [{fmt(el)}<{fmt(rem)}, {rate:.2f}s/it, loss={1.91 - (it-7000)*0.00005 + rnd.uniform(-0.03,0.03):.3f}, lr=0.000118]")
        if it % 10 == 0:
            J["hpc-c01"].append(jl(t, 0, "\r" + "\r".join(bar)))
            bar = []
        if it % 50 == 0:
            J["hpc-c01"].append(jl(t, 0, f"{t.strftime('%m/%d/%Y %H:%M:%S')} - INFO - __main__ - step {it}: loss={1.91 - (it-7000)*0.00005:.4f} step_time={dt:.2f}s data_time={0.031 + rnd.uniform(-0.005,0.005):.3f}s tokens/s/gpu={int(8192*4/dt)}"))
    if bar:
        J["hpc-c01"].append(jl(t, 0, "\r" + "\r".join(bar)))
    for i, h in enumerate(hosts):
        if i:
            J[h].append(jl(t0 + timedelta(seconds=400), i, f"{h}:{pids[i]+3}:{pids[i]+301} [3] NCCL INFO NET/IB: NCCL Dev 3 IbDev 3 Port 1 qpn 1123 mtu 5 LID 21 subnet-prefix 0 FLID 0 fwdId 0 ctx 0 gid 0x0000000000000000"))
        J[h].append(f"{(t + timedelta(seconds=2)).strftime('%Y-%m-%dT%H:%M:%S')}+0000 {h} systemd-journald[812]: Suppressed 4871 messages from llm-train@cpt-r5.service")
    for h in hosts:
        B.write(f"logs/{h}/journal-llm-train.txt", J[h])
    # flows: ring reduce-scatter/all-gather between neighbours, one record per iteration and direction;
    # everything to or from hpc-c04's port crawls once the port is congested.
    rows = ["start,end,src_ip,dst_ip,src_port,dst_port,bytes,packets"]
    fwin = [x for x in timeline if x["iteration"] >= 7380 and x["iteration"] <= 7420]
    per_flow = 1_476_395_008
    for x in fwin:
        s, e = x["start"], x["end"]
        for k in range(4):
            for (a, b) in ((k, (k + 1) % 4), ((k + 1) % 4, k)):
                involves = bad in (a, b)
                if x["iteration"] < first_slow:
                    dur = 1.31 + rnd.uniform(-0.03, 0.03)
                else:
                    dur = (2.80 if involves else 1.33) + rnd.uniform(-0.04, 0.04)
                fs = s + 0.35 + rnd.uniform(0, 0.05)
                rows.append(f"{fs:.3f},{fs+dur:.3f},{ips[a]},{ips[b]},{rnd.randint(40000,60999)},4791,{per_flow + rnd.randint(-4096,4096)},{per_flow//4096 + 40}")
        if x["iteration"] % 3 == 0:  # another tenant's traffic on the same fabric
            fs = s + rnd.uniform(0, 1)
            rows.append(f"{fs:.3f},{fs+rnd.uniform(0.5,2.5):.3f},10.70.1.{rnd.randint(10,40)},10.70.1.{rnd.randint(41,80)},{rnd.randint(40000,60999)},4791,{rnd.randint(10**8,9*10**8)},{rnd.randint(20000,200000)}")
            rows.append(f"{fs:.3f},{fs+rnd.uniform(1.5,3.5):.3f},10.70.1.{rnd.randint(10,40)},{ips[bad]},{rnd.randint(40000,60999)},4791,{rnd.randint(2*10**9,4*10**9)},{rnd.randint(500000,900000)}" if x["iteration"] >= first_slow else
                        f"{fs:.3f},{fs+rnd.uniform(0.5,1.5):.3f},10.70.1.{rnd.randint(10,40)},10.70.1.{rnd.randint(41,80)},{rnd.randint(40000,60999)},4791,{rnd.randint(10**8,9*10**8)},{rnd.randint(20000,200000)}")
    B.write("flows/sflow-collector.csv", rows)
    # probes: port counters of hpc-c04 (mlx5_2 is behind the congested leaf port) vs a healthy node
    pq = []
    for i in range(4):
        if i == 2:
            pq += perfquery(2103, PortXmitWait=9412880311, PortXmitData=61200341188, PortRcvData=60877120431,
                            PortXmitPkts=299812003, PortRcvPkts=298210551, PortUnicastXmitPkts=299812003,
                            PortUnicastRcvPkts=298210551, PortMulticastRcvPkts=3)
        else:
            pq += perfquery(2101 + i, PortXmitWait=rnd.randint(50000, 180000), PortXmitData=61900000000 + rnd.randint(0, 9**9),
                            PortRcvData=61900000000 + rnd.randint(0, 9**9), PortXmitPkts=300100000, PortRcvPkts=300100000,
                            PortUnicastXmitPkts=300100000, PortUnicastRcvPkts=300100000, PortMulticastRcvPkts=3)
    B.write(f"probes/{hosts[bad]}/ib-counters.txt", pq)
    B.mark(f"probes/{hosts[bad]}/ib-counters.txt", "PortXmitWait:....................9412880311")
    B.write(f"probes/{hosts[bad]}/ibstat.txt", ibstat(4, 0x0c42a1030079e100, 2101))
    pq = []
    for i in range(4):
        pq += perfquery(2001 + i, PortXmitWait=rnd.randint(50000, 180000), PortXmitData=61900000000 + rnd.randint(0, 9**9),
                        PortRcvData=61900000000 + rnd.randint(0, 9**9), PortXmitPkts=300100000, PortRcvPkts=300100000,
                        PortUnicastXmitPkts=300100000, PortUnicastRcvPkts=300100000, PortMulticastRcvPkts=3)
    B.write(f"probes/{hosts[1]}/ib-counters.txt", pq)
    B.job(f"""
job_id: "41877"
name: phi3-mini-cpt-accelerate
framework: fsdp
launcher: accelerate launch (systemd unit per node)
scheduler: systemd
status: slow
started_at: {iso(start)}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + f"""code:
  - {{commit: 3f8a1c9, at: 2026-11-20T10:00:00Z, message: "cpt: bump seq to 4096"}}
checkpoints:
  - {{step: 6500, at: 2026-11-26T05:31:00Z, path: /scratch/ckpt/cpt-r5/checkpoint-6500, valid: true}}
  - {{step: 7000, at: 2026-11-26T08:52:00Z, path: /scratch/ckpt/cpt-r5/checkpoint-7000, valid: true}}
spares: 1
""")
    B.truth(fault="slow_link", category="network",
            root_cause=f"the InfiniBand port mlx5_2 of {hosts[bad]} sits behind a congested leaf port (PortXmitWait ~9.4e9 ticks against ~1e5 on its other ports and on other nodes; another tenant's traffic converges on it): from step 7400 every ring flow to or from 10.70.0.4 takes about twice as long and the step time rises from 1.92 s to 3.41 s, with no error and data time unchanged",
            faulty_nodes=[hosts[bad]], stage="training", iteration=first_slow,
            actions=[{"kind": "evict", "nodes": [hosts[bad]]}, {"kind": "restart", "from_step": 7000}],
            timeline=fwin)



if __name__ == "__main__":
    for fn in [f for n, f in sorted(globals().items()) if n.startswith('build_')]:
        fn()
