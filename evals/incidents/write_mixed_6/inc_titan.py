"""torchtitan (torchrun --tee 3 --role rank: `[rankN]:[titan] ... - root - INFO - ...`). Rank 19 on h100-r2-n13
tokenises a pathological 600 MB document inline in its data iterator (torchtitan's pure-Python whitespace
splitter): CPU-bound for minutes, so it never joins the next FSDP all-gather. py-spy dumps taken during the hang
show it; 100 s later every other rank's watchdog fires (comm.train_timeout_seconds=100)."""
import random
from datetime import timedelta
from common import Bundle, T, iso, pylog_ts, nccl_init_lines, watchdog_timeout

IID = "torchtitan-watchdog-cpubound-tokenize-4node"
HOSTS = ["h100-r2-n11", "h100-r2-n12", "h100-r2-n13", "h100-r2-n14"]
IPS = ["10.77.2.11", "10.77.2.12", "10.77.2.13", "10.77.2.14"]
T0 = T("2026-11-26T19:04:12")
BAD_NODE, BAD_LR = 2, 3
BAD = 8 * BAD_NODE + BAD_LR
LAST_STEP = 4217
SEQ = 61873
TT = "/workspace/torchtitan/torchtitan"


def titan(rank, t, msg, lvl="INFO"):
    t = t + timedelta(milliseconds=random.randint(0, 999))
    return f"[rank{rank}]:[titan] {pylog_ts(t)} - root - {lvl} - {msg}"


def pyspy(pid, rank, frames, state="idle", extra_threads=True):
    out = [f"Process {pid}: /usr/bin/python3 -u -m torchtitan.train --job.config_file ./torchtitan/models/llama3/train_configs/llama3_70b.toml",
           "Python v3.11.10 (/usr/bin/python3.11)", "",
           f'Thread {pid} ({state}): "MainThread"']
    out += [f"    {f}" for f in frames]
    if extra_threads:
        out += [f'Thread {pid + 57} (idle): "Thread-1 (_pin_memory_loop)"',
                "    select (selectors.py:415)",
                "    wait (multiprocessing/connection.py:947)",
                "    _poll (multiprocessing/connection.py:440)",
                "    poll (multiprocessing/connection.py:257)",
                "    get (multiprocessing/queues.py:113)",
                "    do_one_step (torch/utils/data/_utils/pin_memory.py:31)",
                "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:58)",
                "    run (threading.py:982)",
                "    _bootstrap_inner (threading.py:1045)",
                "    _bootstrap (threading.py:1002)"]
    out.append("")
    return out


def build():
    b = Bundle(IID)
    logs = {h: [] for h in HOSTS}
    pids = {h: 40512 + 1409 * i for i, h in enumerate(HOSTS)}
    for i, h in enumerate(HOSTS):
        L = logs[h]
        L.append(f"W1126 19:04:12.{random.randint(100000, 999999)} {pids[h] - 31} torch/distributed/run.py:793] *****************************************")
        for lr in range(8):
            r = 8 * i + lr
            L.append(titan(r, T0 + timedelta(seconds=6), "Starting job: Llama 3 70B training"))
        for lr in (0, 4):
            L += [f"[rank{8 * i + lr}]:{x}" for x in nccl_init_lines(h, pids[h] + lr, lr, IPS[i], iface="enp27s0np0")]
        for lr in range(8):
            r = 8 * i + lr
            L.append(titan(r, T0 + timedelta(seconds=7), "Building 2-D device mesh with ['dp_shard', 'tp'], [4, 8]"))
        L.append(titan(8 * i, T0 + timedelta(seconds=8), "Loading tokenizer from tokenizer.model"))
        L.append(titan(8 * i, T0 + timedelta(seconds=9), "Preparing webcorpus_v3 dataset from /lustre/data/webcorpus_v3"))
        L.append(titan(8 * i, T0 + timedelta(seconds=31), "Applied Tensor Parallelism to the model"))
        L.append(titan(8 * i, T0 + timedelta(seconds=31), "Applied selective activation checkpointing to the model"))
        L.append(titan(8 * i, T0 + timedelta(seconds=32), "Applied FSDP to the model"))
        L.append(titan(8 * i, T0 + timedelta(seconds=40), "Loading the checkpoint at step 4000."))
        L.append(titan(8 * i, T0 + timedelta(seconds=97), "Finished loading the checkpoint in 56.81 seconds."))
        L.append(titan(8 * i, T0 + timedelta(seconds=98), "Training starts at step 4001."))
    # step lines: torchtitan logs on every rank; keep ranks 8*i and 8*i+3 per node to stay small
    t = T0 + timedelta(seconds=100)
    for step in range(4001, LAST_STEP + 1):
        t += timedelta(seconds=5.2 + random.random() * 0.2)
        if step % 10 and step != LAST_STEP and step > 4005:
            continue
        loss = 2.31 - (step - 4000) * 0.0002 + random.uniform(-0.05, 0.05)
        gn = random.uniform(0.21, 0.33)
        for i, h in enumerate(HOSTS):
            for lr in (0, 3):
                r = 8 * i + lr
                logs[h].append(titan(r, t, f"step: {step:>4}  loss: {loss:8.4f}  grad_norm: {gn:7.4f}  memory: 61.33GiB(77.44%)  "
                                          f"tps: {3380 + random.randint(0, 60):,}  tflops: {196 + random.random():.2f}  mfu: 19.8{random.randint(0, 9)}%"))
        if step % 50 == 0:
            for i, h in enumerate(HOSTS):
                logs[h].append(titan(8 * i, t, f"[GC] Peforming periodical GC collection. 0.0{random.randint(5, 8)} seconds."))
        if step == 4100:
            logs[HOSTS[1]].append(titan(8, t, "Dataset webcorpus_v3 is being re-looped", lvl="WARNING"))
    t_hang = t + timedelta(seconds=5)
    t_dump = t_hang + timedelta(seconds=70)
    tw = t_hang + timedelta(seconds=100)
    for i, h in enumerate(HOSTS):
        for lr in range(8):
            r = 8 * i + lr
            if r == BAD:
                continue
            if lr in (0, 1, 5) or i == BAD_NODE:
                logs[h] += watchdog_timeout(r, tw, SEQ, "_ALLGATHER_BASE", 58720256, timeout_ms=100000)
        logs[h].append(f"W1126 {tw.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} {pids[h] - 31} "
                       f"torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[h] + 7} closing signal SIGTERM")
        logs[h].append(f"E1126 {tw.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} {pids[h] - 31} "
                       f"torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 "
                       f"(pid: {pids[h]}) of binary: /usr/bin/python3")
    for h in HOSTS:
        b.f(f"logs/{h}/torchrun.log").extend(logs[h])
    # py-spy dumps taken at t_dump (70 s into the hang, 30 s before the watchdog)
    healthy = ["dist_max (torchtitan/distributed/utils.py:61)",
               "train_step (torchtitan/train.py:468)",
               "train (torchtitan/train.py:541)",
               "wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
               "<module> (torchtitan/train.py:642)",
               "_run_code (<frozen runpy>:88)",
               "_run_module_as_main (<frozen runpy>:198)"]
    bad = ["_split_whitespaces_or_nonwhitespaces (torchtitan/components/tokenizer.py:214)",
           "encode (torchtitan/components/tokenizer.py:152)",
           "__iter__ (torchtitan/datasets/hf_datasets.py:121)",
           "__next__ (torchdata/stateful_dataloader/stateful_dataloader.py:1493)",
           "_next_data (torchdata/stateful_dataloader/stateful_dataloader.py:1029)",
           "__next__ (torch/utils/data/dataloader.py:708)",
           "next_batch (torchtitan/train.py:386)",
           "train (torchtitan/train.py:532)",
           "wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
           "<module> (torchtitan/train.py:642)",
           "_run_code (<frozen runpy>:88)",
           "_run_module_as_main (<frozen runpy>:198)"]
    for i, h in enumerate(HOSTS):
        for lr in ((0, 2, 3, 6) if i == BAD_NODE else (0, 5)):
            r = 8 * i + lr
            pid = pids[h] + lr
            if r == BAD:
                txt = pyspy(pid, r, bad, state="active+gil", extra_threads=False)
                txt += pyspy(pid, r, bad[:1] + ["encode (torchtitan/components/tokenizer.py:152)"] + bad[2:],
                                                            state="active+gil", extra_threads=False)
            else:
                txt = pyspy(pid, r, healthy)
            b.f(f"stacks/{h}/rank-{r}.txt").extend(txt)
    bad_rel = f"stacks/{HOSTS[BAD_NODE]}/rank-{BAD}.txt"
    b.mark(bad_rel, "_split_whitespaces_or_nonwhitespaces", 1)
    b.mark(bad_rel, "__iter__ (torchtitan/datasets/hf_datasets.py:121)", 1)
    b.mark(bad_rel, '(active+gil): "MainThread"', 1)

    job = f"""
job_id: "tt-70b-5519"
name: llama3-70b-titan-webcorpus
framework: torchtitan
status: failed
started_at: {iso(T0)}
ended_at: {iso(tw + timedelta(seconds=4))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 1, dp: 4, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + f"""code:
  - {{commit: 5fd0e21, at: 2026-11-14T11:00:00Z, message: "train config: webcorpus_v3, comm.train_timeout_seconds=100"}}
checkpoints:
  - {{step: 3500, at: 2026-11-26T10:40:00Z, path: /lustre/ckpt/tt-70b/step-3500, valid: true}}
  - {{step: 4000, at: 2026-11-26T18:51:00Z, path: /lustre/ckpt/tt-70b/step-4000, valid: true}}
spares: 2
stacks_taken_at: {iso(t_dump)}
"""
    truth = {
        "fault": "nccl_watchdog_timeout",
        "category": "infrastructure",
        "root_cause": f"rank {BAD} on {HOSTS[BAD_NODE]} was CPU-bound in the data iterator, tokenising an oversized "
                      f"document with torchtitan's pure-Python whitespace splitter, and never joined the all-gather of "
                      f"step {LAST_STEP + 1}; after 100 s every other rank's NCCL watchdog timed out on SeqNum {SEQ}",
        "faulty_nodes": [HOSTS[BAD_NODE]],
        "stage": "training",
        "iteration": LAST_STEP + 1,
        "actions": [{"kind": "none"}],
        "note": "nothing on the machines is broken: drop or cap oversized documents (or move tokenisation into DataLoader "
                "workers) and raise comm.train_timeout_seconds; then resume from step 4000",
    }
    b.write(job, truth)
