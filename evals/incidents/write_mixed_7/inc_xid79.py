"""torchtitan under torchrun --tee 3 --local-ranks-filter 0 --log-dir, 4 nodes x 4 A100 PCIe.

GPU 2 of pcie-a09 (rank 10) falls off the bus: its process hangs silently, so its node's logs hold nothing
decisive; only that node's dmesg (and nvidia-smi) show it. The peers' watchdogs fire after 100 s and the
ChildFailedError summaries are printed by the agents of the healthy nodes.
"""
import random
from datetime import timedelta

from common import (Bundle, T, iso, dmesg_T, dmesg_boot, pyts, torchrun_ts, jitter, nccl, nccl_init,
                    nccl_comm_done, watchdog, child_failed, nvsmi_q, gpu_list)

ID = "torchrun-logdir-titan-xid79-offbus-4node"
JOB = "5531"
HOSTS = ["pcie-a07", "pcie-a08", "pcie-a09", "pcie-a10"]
IPS = ["10.31.4.7", "10.31.4.8", "10.31.4.9", "10.31.4.10"]
BUS = ["00000000:17:00.0", "00000000:65:00.0", "00000000:CA:00.0", "00000000:E3:00.0"]
BUSID = ["17000", "65000", "ca000", "e3000"]
BAD_NODE, BAD_LR = 2, 2
BAD_RANK = BAD_NODE * 4 + BAD_LR
RUNDIR = "torchelastic/5531_r4k2xq9m/attempt_0"
COL = {"r": "\x1b[31m", "g": "\x1b[32m", "y": "\x1b[33m", "b": "\x1b[34m", "c": "\x1b[36m", "m": "\x1b[35m", "0": "\x1b[39m"}


def titan(t, lvl, msg):
    return f"[titan] {pyts(t)} - root - {lvl} - {msg}"


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    t_start = T("2026-11-28T03:02:11")
    t_train = T("2026-11-28T03:06:02")
    step0, last_ok = 12301, 12307          # rank 10 never finishes step 12318
    step_s = 6.2
    t_fault = t_train + timedelta(seconds=(last_ok - step0 + 1) * step_s + 2.7)
    t_wd = t_fault + timedelta(seconds=100.4)
    seq_fault = 9 + (last_ok - step0 + 1) * 197 + 88

    pids = {h: 2180 + 31 * i for i, h in enumerate(HOSTS)}
    summaries = {}
    for n, host in enumerate(HOSTS):
        con = f"logs/{host}/{host}-{JOB}.out"
        agent = pids[host]
        ap = lambda t, lvl="W", src="torch/distributed/run.py:793": f"{lvl}{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d} {agent} {src}]"
        t = t_start + timedelta(seconds=n * 0.4)
        b.add(con, [f"+ torchrun --nnodes 4 --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint pcie-a07:29500 "
                    f"--rdzv-id {JOB} --tee 3 --local-ranks-filter 0 --log-dir /scratch/torchelastic/{JOB} "
                    f"-m torchtitan.train --job.config_file ./train_configs/llama3_8b.toml",
                    ap(t), ap(t) + " *****************************************",
                    ap(t) + " Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid "
                            "your system being overloaded, please further tune the variable for optimal performance in "
                            "your application as needed. ",
                    ap(t) + " *****************************************"])
        for lr in range(4):
            rank = n * 4 + lr
            pid = agent + 8 + lr
            out_f = f"logs/{host}/{RUNDIR}/{lr}/stdout.log"
            err_f = f"logs/{host}/{RUNDIR}/{lr}/stderr.log"
            tee = lambda lines, stream: b.add(con, [f"[default{lr}]:{l}" for l in lines]) if lr == 0 else None
            ti = t_start + timedelta(seconds=21 + random.uniform(0, 2))
            err = [titan(ti, "INFO", "Starting job: Llama 3 8B training"),
                   titan(ti, "WARNING", "ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden to 3 based on job config"),
                   titan(jitter(ti, 1, 2), "INFO", "Building 1-D device mesh with ['dp_shard'], [16]"),
                   titan(jitter(ti, 2, 3), "INFO", "[GC] Initial GC collection. 0.00 seconds."),
                   titan(jitter(ti, 3, 4), "INFO", "Loading tokenizer from tokenizer.model"),
                   titan(jitter(ti, 4, 5), "INFO", "Preparing c4 dataset from allenai/c4"),
                   titan(jitter(ti, 9, 10), "INFO", "Building llama3 8B with TransformerModelArgs(_enforced='This field is "
                         "used to enforce all fields have defaults.', dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, "
                         "vocab_size=128256, multiple_of=1024, ffn_dim_multiplier=1.3, norm_eps=1e-05, rope_theta=500000, "
                         "max_seq_len=8192, depth_init=True, use_flex_attn=False, attn_mask_type='causal', eos_id=0)"),
                   titan(jitter(ti, 10, 11), "INFO", f"CUDA capacity: NVIDIA A100 80GB PCIe with 79.25GiB memory"),
                   titan(jitter(ti, 11, 12), "INFO", "Model llama3 8B size: 8,030,261,248 total parameters"),
                   titan(jitter(ti, 12, 13), "INFO", "Applied selective activation checkpointing to the model"),
                   titan(jitter(ti, 13, 14), "INFO", "Applied FSDP to the model"),
                   titan(jitter(ti, 14, 15), "INFO", "CUDA memory usage for model: 3.77GiB(4.75%)"),
                   titan(jitter(ti, 15, 16), "INFO", "Checkpointing active. Checkpoints will be loaded from and saved to "
                                                     "/lustre/ckpt/titan-l3-8b/checkpoint"),
                   titan(jitter(ti, 16, 17), "INFO", "Loading the checkpoint at step 12300."),
                   "/usr/local/lib/python3.10/dist-packages/torch/distributed/checkpoint/filesystem.py:657: FutureWarning: "
                   "You are using `torch.load` with `weights_only=False` (the current default value), which uses the "
                   "default pickle module implicitly. It is possible to construct malicious pickle data which will "
                   "execute arbitrary code during unpickling. In a future release, the default value for `weights_only` "
                   "will be flipped to `True`.",
                   "  torch.load(cast(IO[bytes], file_slice), map_location=\"cpu\"),",
                   titan(t_train - timedelta(seconds=3), "INFO", "Finished loading the checkpoint in 163.72 seconds."),
                   titan(t_train - timedelta(seconds=2), "INFO", "Training starts at step 12301, with local batch size 2, "
                         "global batch size 32, sequence length 8192, total steps 30000 (warmup 2000)")]
            out, tid = nccl_init(host, pid, lr, IPS[n], iface="ens5f0np0", hcas=2, plugin=False)
            out = [l.replace("/IB", "/RoCE") for l in out]
            out.append(nccl(host, pid, tid, lr, f"INFO Channel 00/02 :    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15"))
            out.append(nccl_comm_done(host, pid, tid, lr, rank, 16, BUSID[lr]))
            tee(out, "o")
            tee(err, "e")
            b.add(out_f, out)
            b.add(err_f, err)
            # step lines
            stop = last_ok if rank != BAD_RANK else last_ok
            for s in range(step0, stop + 1):
                ts = t_train + timedelta(seconds=(s - step0 + 1) * step_s + random.uniform(-0.2, 0.2))
                loss = 2.21 - (s - 12000) * 0.00004 + random.uniform(-0.04, 0.04)
                tps = random.randint(1296, 1334)
                line = titan(ts, "INFO", f"{COL['r']}step: {s}  {COL['g']}loss:  {loss:.4f}  {COL['y']}memory: "
                                          f"{61.2 + random.uniform(-0.1, 0.1):.2f}GiB({77.4 + random.uniform(-0.1, 0.1):.2f}%)  "
                                          f"{COL['b']}tps: {tps:,}  {COL['c']}tflops: {tps * 0.04685:.2f}  "
                                          f"{COL['m']}mfu: {tps * 0.04685 / 3.12:.2f}%{COL['0']}")
                b.add(err_f, [line])
                tee([line], "e")
                if s == 12305:
                    gc = titan(ts + timedelta(seconds=0.1), "INFO", "[GC] Peforming periodical GC collection. 0.07 seconds.")
                    b.add(err_f, [gc])
                    tee([gc], "e")
            if rank == BAD_RANK:
                continue      # hung in a CUDA call on the dead GPU: nothing more is written
            wd = watchdog(rank, jitter(t_wd, 0, 0.3), seq_fault, "_REDUCE_SCATTER_BASE", 50135040, 100000)
            wd += ["Exception raised from checkTimeout at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):"]
            b.add(err_f, wd)
            tee(wd, "e")
        # the agent's view
        t_fail = t_wd + timedelta(seconds=1.6 + n * 0.2)
        if n != BAD_NODE:
            b.add(con, [ap(t_fail, "W", "torch/distributed/elastic/multiprocessing/api.py:897") +
                        f" Sending process {agent + 8 + lr} closing signal SIGTERM" for lr in (1, 2, 3)])
            b.add(con, [ap(t_fail + timedelta(seconds=1), "E", "torch/distributed/elastic/multiprocessing/api.py:869") +
                        f" failed (exitcode: -6) local_rank: 0 (pid: {agent + 8}) of binary: /usr/bin/python"])
            summ = child_failed(t_wd + timedelta(seconds=0.3), "torchtitan.train", host,
                                [(n * 4, 0, -6, agent + 8)] + [(n * 4 + lr, lr, -15, agent + 8 + lr) for lr in (1, 2, 3)])
            b.add(con, summ)
        else:
            b.add(con, [ap(t_fail, "W", "torch/distributed/elastic/multiprocessing/api.py:897") +
                        f" Sending process {agent + 8 + lr} closing signal SIGTERM" for lr in (1, 2, 3)])
            b.add(con, [ap(t_fail + timedelta(seconds=30), "W", "torch/distributed/elastic/multiprocessing/api.py:915") +
                        f" Unable to shutdown process {agent + 8 + BAD_LR} via Signals.SIGTERM, forcefully exiting via "
                        f"Signals.SIGKILL"])
            b.add(con, [f"slurmstepd: error: *** STEP {JOB}.0 ON {host} CANCELLED AT "
                        f"{(t_fail + timedelta(seconds=62)).strftime('%Y-%m-%dT%H:%M:%S')} ***"])
    # the batch script's own output on the first node
    t_end = t_wd + timedelta(seconds=64)
    b.add(f"logs/pcie-a07/slurm-{JOB}.out", [
        f"Job {JOB} on pcie-a[07-10]: torchtitan llama3_8b resume",
        "MASTER_ADDR=pcie-a07 MASTER_PORT=29500",
        f"srun: error: pcie-a07: task 0: Exited with exit code 1",
        f"srun: error: pcie-a08: task 1: Exited with exit code 1",
        f"srun: error: pcie-a10: task 3: Exited with exit code 1",
        "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
        f"slurmstepd: error: *** STEP {JOB}.0 ON pcie-a07 CANCELLED AT {t_end.strftime('%Y-%m-%dT%H:%M:%S')} ***",
        "srun: error: pcie-a09: task 2: Killed"])

    # probes: dmesg everywhere, nvidia-smi on the node whose GPU is gone
    for n, host in enumerate(HOSTS):
        d = dmesg_boot(host, T("2026-11-21T18:40:02"))
        d.append(f"{dmesg_T(T('2026-11-27T22:14:51'))} NFS: server lustre-mds01 OK")
        if n == BAD_NODE:
            tf = t_fault
            d += [f"{dmesg_T(tf)} NVRM: GPU at PCI:0000:ca:00: GPU-7d1c02a4-5be1-30f6-9cb1-1e3f6a0d9b12",
                  f"{dmesg_T(tf)} NVRM: GPU Board Serial Number: 1322321047618",
                  f"{dmesg_T(tf)} NVRM: Xid (PCI:0000:ca:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                  f"{dmesg_T(tf)} NVRM: GPU 0000:ca:00.0: GPU has fallen off the bus.",
                  f"{dmesg_T(tf)} NVRM: A GPU crash dump has been created. If possible, please run",
                  "               NVRM: nvidia-bug-report.sh as root to collect this data before",
                  "               NVRM: the NVIDIA kernel module is unloaded.",
                  f"{dmesg_T(tf + timedelta(seconds=242))} INFO: task python:{pids[host] + 8 + BAD_LR} blocked for more than 120 seconds.",
                  f"{dmesg_T(tf + timedelta(seconds=242))}       Tainted: P           OE     5.15.0-122-generic #132-Ubuntu",
                  f"{dmesg_T(tf + timedelta(seconds=242))} \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message."]
            b.mark(f"probes/{host}/dmesg.txt", "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
            b.mark(f"probes/{host}/dmesg.txt", "NVRM: GPU 0000:ca:00.0: GPU has fallen off the bus.")
            gl = gpu_list(host, buses=BUS, n=4)
            good = [g for i, g in enumerate(gl) if i != BAD_LR]
            smi = nvsmi_q(t_end + timedelta(minutes=4), good, sections=("perf", "temp", "power", "clock"),
                          product="NVIDIA A100 80GB PCIe", arch="Ampere", max_sm=1410, mem_clock=1512, plimit=300,
                          driver="550.90.07")
            smi.insert(0, "Unable to determine the device handle for GPU0000:CA:00.0: Unknown Error")
            b.add(f"probes/{host}/nvidia-smi.txt", smi)
            b.mark(f"probes/{host}/nvidia-smi.txt", "Unable to determine the device handle for GPU0000:CA:00.0")
        b.add(f"probes/{host}/dmesg.txt", d)

    job = f"""
job_id: "{JOB}"
name: titan-llama3-8b-c4
framework: torchtitan
status: failed
started_at: {iso(t_start)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
scheduler: slurm
launcher: "torchrun --tee 3 --local-ranks-filter 0 --log-dir /scratch/torchelastic/{JOB}"
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 4 + k) for k in range(4))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: 3e91c0d, at: 2026-11-10T16:22:00Z, message: "titan: bump to torch 2.5.1 image"}
  - {commit: a1f07b2, at: 2026-11-19T09:05:00Z, message: "config: c4 mix, warmup 2000"}
checkpoints:
  - {step: 12000, at: 2026-11-27T20:41:10Z, path: /lustre/ckpt/titan-l3-8b/checkpoint/step-12000, valid: true}
  - {step: 12300, at: 2026-11-28T01:12:44Z, path: /lustre/ckpt/titan-l3-8b/checkpoint/step-12300, valid: true}
spares: 1
history: ["5488", "5502"]
"""
    truth = {
        "fault": "gpu_fell_off_bus",
        "category": "hardware",
        "root_cause": "GPU 2 of pcie-a09 (PCI 0000:ca:00, rank 10) fell off the bus (Xid 79); rank 10 hung without "
                      "a message and the other ranks' FSDP collectives hit the 100 s watchdog; the torchrun failure "
                      "summaries were printed by the agents of the healthy nodes",
        "faulty_nodes": ["pcie-a09"],
        "stage": "training",
        "iteration": last_ok + 1,
        "actions": [{"kind": "evict", "nodes": ["pcie-a09"]}, {"kind": "restart", "from_step": 12300}],
    }
    return b.write(job, truth)
