"""MosaicML Composer (composer launcher, ConsoleLogger `[batch=N/M]:` blocks, composer's python-logging prefix).
On node mml-a100-04 the host runs out of RAM and the kernel OOM killer picks one DataLoader worker of global
rank 11; the trainer raises `DataLoader worker (pid N) is killed by signal: Killed.` and the launcher tears the
run down. dmesg on that node holds the OOM-killer record."""
import random
from datetime import timedelta
from common import Bundle, T, iso, pylog_ts, nccl, nccl_init_lines, dmesg_T, dmesg_boot_noise

IID = "composer-dlworker-oomkilled-2node"
HOSTS = ["mml-a100-03", "mml-a100-04"]
IPS = ["10.8.30.3", "10.8.30.4"]
T0 = T("2026-11-26T08:30:05")
SP = "/usr/lib/python3/dist-packages"
BAD_NODE, BAD_LR = 1, 3
BAD_RANK = 8 * BAD_NODE + BAD_LR
WORKER_PID = 88231
FAIL_BATCH = 4527


def clog(t, rank, pid, mod, msg, lvl="INFO", thread="MainThread"):
    t = t + timedelta(milliseconds=random.randint(0, 999))
    return f"{pylog_ts(t)}: rank{rank}[{pid}][{thread}]: {lvl}: {mod}: {msg}"


def build():
    b = Bundle(IID)
    logs = {h: [] for h in HOSTS}
    pids = {h: 61700 + 2311 * i for i, h in enumerate(HOSTS)}
    for i, h in enumerate(HOSTS):
        L = logs[h]
        L.append(f"Distributed KV store: tcp://{IPS[0]}:7501")
        for lr in range(8):
            L.append(f"Starting distributed environment on local node for global_rank({8 * i + lr}) in a new process")
        L += nccl_init_lines(h, pids[h], 0, IPS[i], iface="bond0", version="2.20.5+cuda12.4")
        L.append(clog(T0 + timedelta(seconds=9), 8 * i, pids[h], "composer.utils.reproducibility", "Setting seed to 17"))
        L.append(f"{SP}/streaming/base/dataset.py:397: UserWarning: Because `predownload` was not specified, it will "
                 f"default to 8*batch_size if batch_size is not None, otherwise 64.")
        L.append(f"{SP}/composer/callbacks/speed_monitor.py:120: UserWarning: gpu_flop count not found for None with "
                 f"precision: amp_bf16 so MFU will not be logged.")
    L0 = logs[HOSTS[0]]
    L0.append(clog(T0 + timedelta(seconds=12), 0, pids[HOSTS[0]], "composer.trainer.trainer", "Run name: mpt7b-ft-code-4h1x"))
    L0.append(clog(T0 + timedelta(seconds=40), 0, pids[HOSTS[0]], "composer.trainer.trainer",
                   "Found latest checkpoint at s3://mml-ckpt/mpt7b-ft-code/ep0-ba4500-rank0.pt, loading from it"))
    L0.append("WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
              "after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='s3.us-east-1.amazonaws.com', "
              "port=443): Read timed out. (read timeout=60)\")': /mml-ckpt/mpt7b-ft-code/ep0-ba4500-rank0.pt")
    L0.append(clog(T0 + timedelta(seconds=131), 0, pids[HOSTS[0]], "composer.trainer.trainer",
                   "Resuming training from timestamp Timestamp(epoch=0, batch=4500, sample=1152000, token=2359296000)"))
    L0.append("******************************")
    L0.append("Config:")
    L0.append("composer_commit_hash: None")
    L0.append("composer_version: 0.26.0")
    L0.append("node_name: unknown because NODENAME environment variable not set")
    L0.append("num_gpus_per_node: 8")
    L0.append("num_nodes: 2")
    L0.append("rank_zero_seed: 17")
    L0.append("")
    L0.append("******************************")
    t = T("2026-11-26T08:33:30")
    for bi in range(4500, FAIL_BATCH):
        t += timedelta(seconds=2.3 + random.random() * 0.3)
        loss = 1.41 - (bi - 4000) * 0.00005 + random.uniform(-0.04, 0.04)
        L0 += [f"[batch={bi}/20000]:",
               f"\t Train time/batch: {bi - 1}",
               f"\t Train time/sample: {(bi - 1) * 256}",
               f"\t Train time/token: {(bi - 1) * 256 * 2048}",
               f"\t Train trainer/device_train_microbatch_size: 4",
               f"\t Train loss/train/total: {loss:.4f}",
               f"\t Train metrics/train/LanguageCrossEntropy: {loss:.4f}",
               f"\t Train throughput/batches_per_sec: {1 / (2.45 + random.uniform(-0.1, 0.1)):.4f}",
               f"\t Train throughput/samples_per_sec: {256 / 2.45 + random.uniform(-3, 3):.4f}",
               f"\t Train lr-DecoupledLionW/group0: {2e-5 * (1 - bi / 20000):.4e}"]
    t_fail = t + timedelta(seconds=6)
    # node 04: the rank whose worker was killed, then the launcher teardown
    h = HOSTS[BAD_NODE]
    L = logs[h]
    L.append(f"ERROR:composer.cli.launcher:Rank {BAD_RANK} crashed with exit code 1.")
    L.append("Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.")
    for lr in range(8):
        if lr != BAD_LR:
            L.append(f"Global rank {8 * BAD_NODE + lr} (PID {pids[h] + lr}) exited with code -15")
    L.append(f"Global rank {BAD_RANK} (PID {pids[h] + BAD_LR}) exited with code 1")
    L.append(f"----------Begin global rank {BAD_RANK} STDOUT----------")
    L.append(f"----------End global rank {BAD_RANK} STDOUT----------")
    L.append(f"----------Begin global rank {BAD_RANK} STDERR----------")
    DL = f"{SP}/torch/utils/data/dataloader.py"
    L += ["Traceback (most recent call last):",
          f'  File "{DL}", line 1243, in _try_get_data',
          "    data = self._data_queue.get(timeout=timeout)",
          '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 113, in get',
          "    if not self._poll(timeout):",
          '  File "/usr/lib/python3.10/multiprocessing/connection.py", line 257, in poll',
          "    return self._poll(timeout)",
          '  File "/usr/lib/python3.10/multiprocessing/connection.py", line 424, in _poll',
          "    r = wait([self], timeout)",
          '  File "/usr/lib/python3.10/multiprocessing/connection.py", line 931, in wait',
          "    ready = selector.select(timeout)",
          '  File "/usr/lib/python3.10/selectors.py", line 416, in select',
          "    fd_event_list = self._selector.poll(timeout)",
          f'  File "{SP}/torch/utils/data/_utils/signal_handling.py", line 73, in handler',
          "    _error_if_any_worker_fails()",
          f"RuntimeError: DataLoader worker (pid {WORKER_PID}) is killed by signal: Killed. ",
          "",
          "The above exception was the direct cause of the following exception:",
          "",
          "Traceback (most recent call last):",
          '  File "/workspace/llm-foundry/scripts/train/train.py", line 786, in <module>',
          "    main(cfg)",
          '  File "/workspace/llm-foundry/scripts/train/train.py", line 767, in main',
          "    trainer.fit()",
          f'  File "{SP}/composer/trainer/trainer.py", line 2436, in fit',
          "    self._train_loop()",
          f'  File "{SP}/composer/trainer/trainer.py", line 2636, in _train_loop',
          "    for batch_idx, self.state.batch in enumerate(self._iter_dataloader(TrainerMode.TRAIN)):",
          f'  File "{SP}/composer/trainer/trainer.py", line 3709, in _iter_dataloader',
          "    batch = next(dataloader_iter)",
          f'  File "{DL}", line 701, in __next__',
          "    data = self._next_data()",
          f'  File "{DL}", line 1448, in _next_data',
          "    idx, data = self._get_data()",
          f'  File "{DL}", line 1402, in _get_data',
          "    success, data = self._try_get_data()",
          f'  File "{DL}", line 1256, in _try_get_data',
          "    raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e",
          f"RuntimeError: DataLoader worker (pid(s) {WORKER_PID}) exited unexpectedly",
          f"----------End global rank {BAD_RANK} STDERR----------",
          "ERROR:composer.cli.launcher:Global rank 0 (PID %d) exited with code -15" % pids[h]]
    # node 03: peers lose the FSDP all-gather partner
    h0 = HOSTS[0]
    for lr in (0, 2, 5):
        r = lr
        L0.append(nccl(h0, pids[h0] + lr, pids[h0] + lr + 88, lr,
                       f"WARN NET/IB : Got completion from peer {IPS[1]}<{52114 + lr}> with status=12 opcode=129 len=0 "
                       f"vendor err 129 (Recv) localGid ::ffff:{IPS[0]} remoteGid ::ffff:{IPS[1]} hca mlx5_{lr}"))
        L0.append(f"[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                  f"ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.20.5")
        L0.append(f"[rank{r}]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
    L0.append("ERROR:composer.cli.launcher:Rank 0 crashed with exit code 1.")
    L0.append("Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.")
    for lr in range(8):
        L0.append(f"Global rank {lr} (PID {pids[h0] + lr}) exited with code {1 if lr in (0, 2, 5) else -15}")
    for hh in HOSTS:
        b.f(f"logs/{hh}/composer-launch.log").extend(logs[hh])
    # dmesg probes
    boot = T("2026-11-19T04:12:00")
    for i, hh in enumerate(HOSTS):
        P = b.f(f"probes/{hh}/dmesg.txt")
        P += dmesg_boot_noise(boot, hh)
        if i == BAD_NODE:
            tk = t_fail - timedelta(seconds=2)
            d = dmesg_T(tk)
            P += [f"{d} pt_data_worker invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0",
                  f"{d} CPU: 77 PID: 88236 Comm: pt_data_worker Tainted: P           OE     5.15.0-105-generic #115-Ubuntu",
                  f"{d} Hardware name: Supermicro SYS-420GP-TNAR/X12DPG-OA6-GD2, BIOS 1.4a 09/14/2023",
                  f"{d} Mem-Info:",
                  f"{d} active_anon:249871204 inactive_anon:2150328 isolated_anon:0",
                  f"{d} Tasks state (memory values in pages):",
                  f"{d} oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
                  f"task_memcg=/system.slice/slurmstepd.scope/job_30417,task=pt_data_worker,pid={WORKER_PID},uid=1411",
                  f"{d} Out of memory: Killed process {WORKER_PID} (pt_data_worker) total-vm:98315244kB, anon-rss:71603180kB, "
                  f"file-rss:94012kB, shmem-rss:2201600kB, UID:1411 pgtables:141376kB oom_score_adj:0",
                  f"{dmesg_T(tk + timedelta(seconds=1))} oom_reaper: reaped process {WORKER_PID} (pt_data_worker), now "
                  f"anon-rss:0kB, file-rss:0kB, shmem-rss:2201600kB"]
    b.mark(f"logs/{h}/composer-launch.log", f"RuntimeError: DataLoader worker (pid {WORKER_PID}) is killed by signal: Killed.")
    b.mark(f"probes/{h}/dmesg.txt", "invoked oom-killer")
    b.mark(f"probes/{h}/dmesg.txt", f"Out of memory: Killed process {WORKER_PID}")

    job = f"""
job_id: "30417"
name: mpt7b-ft-code
framework: other
trainer: composer (llm-foundry, FSDP)
scheduler: slurm
status: failed
started_at: {iso(T0)}
ended_at: {iso(t_fail + timedelta(seconds=35))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {hh}, ip: {IPS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n"
              for i, hh in enumerate(HOSTS)) + f"""code:
  - {{commit: 91ce02f, at: 2026-11-18T15:00:00Z, message: "yaml: code-mix finetune, num_workers 8"}}
checkpoints:
  - {{step: 3500, at: 2026-11-26T03:10:00Z, path: s3://mml-ckpt/mpt7b-ft-code/ep0-ba3500-rank0.pt, valid: true}}
  - {{step: 4000, at: 2026-11-26T08:12:00Z, path: s3://mml-ckpt/mpt7b-ft-code/ep0-ba4000-rank0.pt, valid: true}}
  - {{step: 4500, at: 2026-11-26T08:27:40Z, path: s3://mml-ckpt/mpt7b-ft-code/ep0-ba4500-rank0.pt, valid: true}}
spares: 1
"""
    truth = {
        "fault": "dataloader_worker_killed",
        "category": "infrastructure",
        "root_cause": f"host RAM on {h} ran out and the kernel OOM killer killed DataLoader worker pid {WORKER_PID} "
                      f"(pt_data_worker, 71 GB anon RSS) of global rank {BAD_RANK}; the trainer raised 'DataLoader worker "
                      f"is killed by signal: Killed' and the composer launcher tore the run down, node mml-a100-03 only "
                      f"saw its NCCL peers vanish",
        "faulty_nodes": [h],
        "stage": "training",
        "iteration": FAIL_BATCH,
        "actions": [{"kind": "restart", "from_step": 4500}],
        "note": "the previous allocation was preempted after ba4500; restart from 4500 with fewer DataLoader workers "
                "or a smaller shuffle buffer; the node itself is healthy",
    }
    b.write(job, truth)
