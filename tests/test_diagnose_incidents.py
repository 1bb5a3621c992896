"""The whole diagnosis on hand-written multi-node incidents in launchers' own phrasing (OpenMPI --tag-output, srun -l,
kubectl timestamps), no timestamps at all, device state in the probes, and a new commit before the job."""

from __future__ import annotations

import textwrap
from pathlib import Path

from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.telemetry import Bundle
from tests import test_logs_fixtures as fx

WATCHDOG = ("[E ProcessGroupNCCL.cpp:828] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL("
            "SeqNum=3411, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
IBSTAT = "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 200\n"


def _diagnose(root: Path):
    with Bundle.open(root) as bundle:
        return diagnose(bundle, Settings())


def _job(hosts: list[str], gpus: int, extra: str = "") -> str:
    nodes = "".join(f"  - {{host: {h}, ranks: [{', '.join(str(i * gpus + g) for g in range(gpus))}]}}\n"
                    for i, h in enumerate(hosts))
    return f'job_id: "7"\nframework: other\nstatus: failed\ngpus_per_node: {gpus}\nnodes:\n{nodes}{extra}'


def test_an_ib_port_down_in_ibstat_decides_over_watchdog_timeouts_and_a_benign_warning_elsewhere(tmp_path: Path) -> None:
    # Horovod under mpirun --tag-output ("[1,5]<stderr>:"), no timestamps; ibstat's documented port block
    hosts = ["gpu-a", "gpu-b", "gpu-c"]
    files = {}
    for i, h in enumerate(hosts):
        lines = [f"[1,{4 * i}]<stdout>:Step #{s}\tImg/sec per GPU: 231.4 +-2.1\tLoss: {2.5 - s / 1000:.4f}"
                 for s in range(300, 341, 10)]
        if h == "gpu-c":
            lines.append("[1,9]<stderr>:gpu-c:4009:4109 [1] NCCL WARN NET/IB : Got async event : GID table change")
        if h == "gpu-b":
            lines.append("[1,5]<stderr>:gpu-b:4005:4120 [1] transport/net_ib.cc:112 NCCL WARN NET/IB : Got async "
                         "event : port error")
        lines += [f"[1,{r}]<stderr>:" + WATCHDOG.format(r=r) for r in range(4 * i, 4 * i + 4)]
        files[f"logs/{h}/mpirun.log"] = "\n".join(lines) + "\n"
        down = h == "gpu-b"
        files[f"probes/{h}/ibstat.txt"] = IBSTAT.format(state="Down" if down else "Active",
                                                        phys="Disabled" if down else "LinkUp")
    d = _diagnose(fx.write(tmp_path / "mpi", files, _job(hosts, 4)))
    assert (d.category, d.fault) == ("network", "nic_down")
    assert d.faulty_hosts[:1] == ["gpu-b"]
    assert d.evidence[0].file == "probes/gpu-b/ibstat.txt" and "Down" in d.evidence[0].text
    assert d.stage == "training"
    assert [p.kind for p in d.proposals][:1] == ["evict"] and d.proposals[0].nodes == ["gpu-b"]


def test_a_fatal_xid_in_dmesg_decides_over_the_generic_cuda_error_every_rank_prints(tmp_path: Path) -> None:
    # one Slurm output file with `srun -l` rank prefixes, no timestamps; the driver's documented Xid 79 line
    lines = [f"5:  iteration     {it}/  100000 | consumed samples: {it * 256} | elapsed time per iteration (ms): "
             f"812.3 | lm loss: 2.31E+00 |" for it in range(1500, 1531, 10)]
    lines += [f"{r}: RuntimeError: CUDA error: unspecified launch failure" if r in (2, 3)
              else f"{r}: " + WATCHDOG.format(r=r) for r in range(6)]
    lines.append("srun: error: node-2: task 2: Exited with exit code 1")
    files = {"logs/slurm-901.out": "\n".join(lines) + "\n",
             "probes/node-2/dmesg.txt": "[1834201.223] NVRM: Xid (PCI:0000:b1:00): 79, pid=90112, GPU has fallen "
                                        "off the bus.\n",
             "probes/node-1/dmesg.txt": "[1834100.001] mlx5_core 0000:3b:00.0: mlx5_pcie_event: Detected "
                                        "insufficient power on the PCIe slot (27W).\n"}
    d = _diagnose(fx.write(tmp_path / "srun", files, _job(["node-1", "node-2", "node-3"], 2)))
    assert (d.category, d.fault) == ("hardware", "gpu_fell_off_bus")
    assert d.faulty_hosts[:1] == ["node-2"]
    assert (d.stage, d.iteration) == ("training", 1531)
    assert d.proposals[0].kind == "evict" and d.proposals[0].nodes == ["node-2"]


def _oom_job(tmp_path: Path, on_hosts: list[str]) -> Path:
    # kubectl logs --timestamps (RFC 3339 with nanoseconds), torchrun's [rankN]: prefix
    code = textwrap.dedent("""\
        started_at: 2026-11-20T10:00:00Z
        code:
          - {commit: 1a2b3c4, at: 2026-11-10T09:00:00Z, message: "baseline"}
          - {commit: 9f9e8d7, at: 2026-11-20T09:30:00Z, message: "double the micro batch"}
        """)
    files = {}
    for w in range(2):
        lines = [f"2026-11-20T10:00:0{w}.120394812Z [rank{2 * w}]: step 4000 loss 2.113"]
        for r in (2 * w, 2 * w + 1):
            if f"pod-{w}" in on_hosts:
                lines += [f"2026-11-20T10:01:1{r}.482716358Z [rank{r}]: Traceback (most recent call last):",
                          f'2026-11-20T10:01:1{r}.482716358Z [rank{r}]:   File "/app/train.py", line 211, in train_step',
                          f"2026-11-20T10:01:1{r}.482716358Z [rank{r}]:     loss.backward()",
                          (f"2026-11-20T10:01:1{r}.482716358Z [rank{r}]: torch.OutOfMemoryError: CUDA out of memory. "
                           "Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.14 GiB of which 1.02 GiB is "
                           "free.")]
            else:
                lines.append(f"2026-11-20T10:11:1{r}.000000000Z [rank{r}]: " + WATCHDOG.format(r=r))
        files[f"logs/pod-{w}/worker.log"] = "\n".join(lines) + "\n"
    return fx.write(tmp_path / "-".join(on_hosts), files, _job(["pod-0", "pod-1"], 2, code))


def test_an_oom_on_every_node_right_after_a_new_commit_is_rolled_back_and_on_one_node_it_is_not(tmp_path) -> None:
    everywhere = _diagnose(_oom_job(tmp_path, ["pod-0", "pod-1"]))
    assert everywhere.fault == "cuda_oom" and everywhere.stage == "training"
    assert [(p.kind, p.to_commit) for p in everywhere.proposals] == [("rollback", "1a2b3c4")]
    one_node = _diagnose(_oom_job(tmp_path, ["pod-1"]))
    assert one_node.fault == "cuda_oom"
    assert [p.kind for p in one_node.proposals] == ["none"]


def test_a_watchdog_timeout_names_the_node_whose_rank_the_stacks_show_behind(tmp_path: Path) -> None:
    """Every rank's watchdog fires and nothing else explains it (the 'no root' schema, a cascade); the dumps show one
    rank in its DataLoader while the rest wait in the all-reduce: its node is where to look, and nothing is evicted."""
    from tests.stack_bundles import GRAD_SYNC, OUTER, make_stack_bundle

    data_wait = ["select (selectors.py:415)", "wait (multiprocessing/connection.py:1136)",
                 "_poll (multiprocessing/connection.py:440)", "get (multiprocessing/queues.py:113)",
                 "_try_get_data (torch/utils/data/dataloader.py:1133)", "__next__ (torch/utils/data/dataloader.py:631)",
                 *OUTER]
    root = make_stack_bundle(tmp_path / "b", nodes=2, gpus=4, tp=1, pp=1, dp=8,
                             frames_of=lambda rank, _: data_wait if rank == 6 else GRAD_SYNC)
    for n in range(2):
        (root / "logs" / f"node-{n:03d}").mkdir(parents=True)
        (root / "logs" / f"node-{n:03d}" / "train.log").write_text("".join(
            f"[rank{r}]:[E1120 10:52:13.400000000 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=7721, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran for 600011 milliseconds before timing out.\n" for r in range(4 * n, 4 * n + 4) if r != 6))
    d = _diagnose(root)
    assert d.fault == "nccl_watchdog_timeout" and d.faulty_hosts == ["node-001"]
    assert "evict" not in [p.kind for p in d.proposals]


def test_a_launchers_log_in_one_nodes_folder_is_read_line_by_line_for_the_node_each_line_names(tmp_path: Path) -> None:
    """DeepSpeed's launcher gathers every worker's output behind pdsh's 'worker-N: ' on the node it ran on. One worker
    without its InfiniBand device falls back to sockets (NCCL says so at INFO): that worker is named; when every
    worker says it, none is."""
    job = 'job_id: "7"\nframework: deepspeed\nstatus: slow\nnodes:\n' + "".join(
        f"  - {{host: worker-{n}, ip: 10.2.0.{10 + n}, ranks: [{2 * n}, {2 * n + 1}]}}\n" for n in range(4))

    def run(name: str, without_ib: set[int]):
        lines = []
        for n in range(4):
            net = (["NCCL INFO NET/IB : No device found.", "NCCL INFO Using network Socket"] if n in without_ib
                   else ["NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.2.0.1<0>", "NCCL INFO Using network IB"])
            lines += [f"worker-{n}: worker-{n}:2217{n}:2231{n} [0] {t}" for t in net]
        lines += [f"worker-0: [2026-11-20 08:0{i}:00,300] [INFO] [timer.py:260:stop] epoch=0/micro_step={400 * i}/"
                  f"global_step={100 * i}, RunningAvgSamplesPerSec=41.2, CurrSamplesPerSec=40.9" for i in range(1, 4)]
        root = fx.write(tmp_path / name, {"logs/worker-0/ds_launch.log": "\n".join(lines) + "\n"}, job)
        return _diagnose(root)

    one = run("one", {3})
    assert (one.fault, one.faulty_hosts) == ("nccl_socket_fallback", ["worker-3"])
    assert {e.host for e in one.evidence if "No device found" in e.text} == {"worker-3"}
    every = run("every", {0, 1, 2, 3})
    assert (every.fault, every.faulty_hosts) == ("nccl_socket_fallback", [])


def test_a_hang_whose_outlier_rank_is_stuck_saving_a_checkpoint_is_the_storage_at_checkpoint(tmp_path: Path) -> None:
    """py-spy: rank 0 waits in an upload under Lightning's save_checkpoint while every other rank waits at that save's
    barrier: the storage holds the job up, at a checkpoint (not a GPU hang in training), and no node is evicted."""
    from tests.stack_bundles import make_stack_bundle

    save = ["save_checkpoint (lightning/pytorch/trainer/trainer.py:1365)",
            "_save_checkpoint (lightning/pytorch/callbacks/model_checkpoint.py:390)",
            "on_train_batch_end (lightning/pytorch/callbacks/model_checkpoint.py:303)",
            "advance (lightning/pytorch/loops/training_epoch_loop.py:316)", "main (train.py:97)"]
    upload = ["wait (threading.py:331)", "sync (fsspec/asyn.py:91)", "_upload_chunk (s3fs/core.py:2366)",
              "flush (fsspec/spec.py:2000)", "_atomic_save (lightning_fabric/utilities/cloud_io.py:92)", *save]
    barrier = ["barrier (torch/distributed/distributed_c10d.py:4166)", "barrier (lightning/pytorch/strategies/ddp.py:303)",
               *save]
    root = make_stack_bundle(tmp_path / "b", nodes=2, gpus=4, tp=1, pp=1, dp=8,
                             frames_of=lambda rank, _: upload if rank == 0 else barrier)
    (root / "logs" / "node-000").mkdir(parents=True)
    (root / "logs" / "node-000" / "train.log").write_text(
        "Epoch 2: 100%|##########| 8000/8000 [2:10:00<00:00, 1.02it/s, loss=1.83]\n")
    d = _diagnose(root)
    assert (d.fault, d.stage) == ("storage_checkpoint_write_failure", "checkpoint")
    assert "evict" not in [p.kind for p in d.proposals]


def test_one_rank_in_another_collective_than_the_rest_is_a_collective_mismatch_not_a_gpu_hang(tmp_path: Path) -> None:
    """py-spy: rank 0 waits in all_gather_object (a callback only rank 0 runs) while the others wait at a barrier:
    neither collective can complete, the code paths diverged (Flight Recorder's COLLECTIVE_TYPE_MISMATCH). A rank in a
    pipeline's recv beside the others' all-reduce is no mismatch."""
    from tests.stack_bundles import OUTER, make_stack_bundle

    gather = ["all_gather_object (torch/distributed/distributed_c10d.py:2962)", "on_step (callbacks/run_meta.py:41)",
              *OUTER]
    barrier = ["barrier (torch/distributed/distributed_c10d.py:4166)", "barrier (lightning/pytorch/strategies/ddp.py:303)",
               *OUTER]
    d = _diagnose(make_stack_bundle(tmp_path / "a", nodes=2, gpus=4, tp=1, pp=1, dp=8,
                                    frames_of=lambda rank, _: gather if rank == 0 else barrier))
    assert (d.category, d.fault) == ("user_code", "collective_mismatch_deadlock")
    assert "evict" not in [p.kind for p in d.proposals]
    recv = ["recv (torch/distributed/distributed_c10d.py:2100)", *OUTER]
    reduce = ["all_reduce (torch/distributed/distributed_c10d.py:2050)", *OUTER]
    p2p = _diagnose(make_stack_bundle(tmp_path / "b", nodes=2, gpus=4, tp=1, pp=1, dp=8,
                                      frames_of=lambda rank, _: recv if rank == 0 else reduce))
    assert p2p.fault != "collective_mismatch_deadlock"


def _traceback(prefix: str, rank: int, frames: list[tuple[str, int, str, str]], exception: str) -> list[str]:
    lines = [f"{prefix}[rank{rank}]: Traceback (most recent call last):"]
    for path, line, function, source in frames:
        lines += [f'{prefix}[rank{rank}]:   File "{path}", line {line}, in {function}', f"{prefix}[rank{rank}]:     {source}"]
    return [*lines, f"{prefix}[rank{rank}]: {exception}"]


def test_a_save_failing_on_every_node_under_kubectl_time_stamps_is_cited_from_its_traceback(tmp_path: Path) -> None:
    """`kubectl logs --timestamps` puts an RFC 3339 time before every line, frames and source lines too: the traceback
    is still one, and the exception it ends with on every node is the failure, though one node's folder also holds
    the Kubernetes events (a mount that failed once, long before)."""
    hosts = ["k8s-gpu-1", "k8s-gpu-2", "k8s-gpu-3"]
    frames = [("/opt/NeMo/nemo/utils/callbacks/dist_ckpt_io.py", 161, "save_checkpoint", "dist_checkpointing.save("),
              ("/opt/megatron-lm/megatron/core/dist_checkpointing/strategies/filesystem_async.py", 226,
               "write_preloaded_data", "stream.write(data)")]
    files = {"logs/k8s-gpu-1/events.txt": "LAST SEEN   TYPE      REASON        OBJECT          MESSAGE\n"
             "41m         Warning   FailedMount   pod/worker-2    MountVolume.SetUp failed for volume \"dshm\" : rpc "
             "error: code = DeadlineExceeded desc = context deadline exceeded\n"}
    for i, h in enumerate(hosts):
        ts = [f"2026-11-27T10:{m:02d}:00.{i}00000000Z " for m in range(10, 17)]
        lines = [f"{ts[s]}Training epoch 0, iteration {4997 + s}/99999 | lr: 2.9e-04 | reduced_train_loss: 2.50"
                 for s in range(3)]
        lines += [f"{ts[3]}[NeMo I 2026-11-27 10:13:00 nemo_logging:393] Saving checkpoint to /mnt/ckpt/step=4999"]
        lines += _traceback(ts[4], 8 * i, frames, "OSError: [Errno 122] Disk quota exceeded")
        files[f"logs/{h}/worker-{i}.log"] = "\n".join(lines) + "\n"
    d = _diagnose(fx.write(tmp_path / "k8s", files, _job(hosts, 8)))
    assert "Disk quota exceeded" in d.evidence[0].text
    assert d.fault in ("disk_full", "storage_checkpoint_write_failure") and d.stage == "checkpoint"
    assert d.fault != "job_time_limit"


def test_a_keyerror_on_every_rank_after_a_new_commit_is_the_jobs_code_not_a_hub_retry_it_got_over(
        tmp_path: Path) -> None:
    """journald's prefix on every line; huggingface_hub timed out once at startup on one node and retried, then the
    job trained (rank 0's node logs the steps) for an hour; after a new commit every rank's batch lacks a key the
    job's own code asks for, raised in the mapping's __getitem__ (the lookup's, not transformers' bug)."""
    hosts = ["a100-n01", "a100-n02"]
    frames = [("/srv/sft/train.py", 183, "main", "loss = compute_loss(model, batch)"),
              ("/srv/sft/sft/loss.py", 41, "compute_loss", 'attention_mask=batch["attention_mask"],'),
              ("/usr/local/lib/python3.11/site-packages/transformers/tokenization_utils_base.py", 255, "__getitem__",
               "return self.data[item]")]
    files = {}
    for i, h in enumerate(hosts):
        head = f"Nov 27 08:%s {h} accelerate[2314{i}]: "
        lines = [head % "01:25" + "'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read "
                 "timed out. (read timeout=10)\"), '(Request ID: 5b1f)')' thrown while requesting HEAD "
                 "https://huggingface.co/mistralai/Mistral-7B-v0.3/resolve/main/config.json",
                 head % "01:25" + "Retrying in 1s [Retry 1/5]."] if i else []  # (on the node that logs no steps)
        lines += [head % f"{10 + s}:00" + f"step {10 * s + 10}/3000 | loss {2.1 - s / 100:.2f} | lr 2.00e-05 | 2.57 s/it"
                  for s in range(5) if not i]
        for r in range(4 * i, 4 * i + 4):
            lines += _traceback(head % "55:32", r, frames, "KeyError: 'attention_mask'")
        files[f"logs/{h}/journal-finetune.log"] = "\n".join(lines) + "\n"
    code = "code:\n  - {commit: 41aa0de, at: 2026-11-20T10:00:00Z}\n  - {commit: c9d3e12, at: 2026-11-27T07:30:00Z}\n"
    job = _job(hosts, 4, "started_at: 2026-11-27T08:00:00Z\n" + code + "history: [job-6]\n")
    d = _diagnose(fx.write(tmp_path / "journald", files, job))
    assert (d.category, d.fault) == ("user_code", "user_code_exception")
    assert "KeyError" in d.evidence[0].text and d.stage == "training"


def test_a_rank_sigkilled_under_mpirun_is_a_kill_of_unknown_cause_not_the_nfs_stall_it_got_over(tmp_path: Path) -> None:
    """mpirun names the rank a signal 9 ended; the node's dmesg shows an NFS server that stopped answering an hour
    before and answered again seconds later (the NFS client's 'not responding, still trying', then 'OK'). The ranks
    printed pytorch/examples' 'Train Epoch: 3 [563200/1281167 (44%)]' lines, a loss with no step count: training."""
    hosts = ["hvd-n01", "hvd-n02"]
    rule = "-" * 74
    files = {"logs/hvd-n01/mpirun.log": "Primary job  terminated normally, but 1 process returned\na non-zero exit code. "
             f"Per user-direction, the job has been aborted.\n{rule}\nmpirun noticed that process rank 5 with PID 0 on "
             f"node hvd-n02 exited on signal 9 (Killed).\n{rule}\n",
        "probes/hvd-n02/dmesg.txt": "[Fri Nov 27 13:27:41 2026] nfs: server nfs-ckpt.cluster not responding, still "
        "trying\n[Fri Nov 27 13:27:50 2026] nfs: server nfs-ckpt.cluster OK\n"}
    for i, h in enumerate(hosts):
        lines = [f"[1,{4 * i}]<stdout>:Train Epoch: 3 [ {20480 * s}/1281167 ( {s}%)]\tLoss: 4.29\tlr: 0.55"
                 for s in range(1, 6)]
        lines += [f"[1,{r}]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one "
                  "of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks "
                  "finished execution." for r in range(4 * i, 4 * i + 4) if r != 5]
        files[f"logs/{h}/rank-{4 * i}.log"] = "\n".join(lines) + "\n"
    d = _diagnose(fx.write(tmp_path / "mpi", files, _job(hosts, 4)))
    assert (d.category, d.fault) == ("infrastructure", "process_killed_unknown")
    assert d.stage == "training" and d.faulty_hosts[:1] == ["hvd-n02"]


def test_the_one_node_bootstrapping_nccl_over_docker0_is_named_though_rank_0_reports_the_refused_connect(
        tmp_path: Path) -> None:
    # a stale NCCL_SOCKET_IFNAME on one node of four: NCCL's documented INFO lines name each rank's bootstrap
    # interface; the root rank's connect to the bridge address is refused, and the others lose their peers
    hosts = ["gn-01", "gn-02", "gn-03", "gn-04"]
    files = {}
    for i, h in enumerate(hosts):
        ifname, ip = ("docker0", "172.17.0.1") if h == "gn-04" else ("ib0", f"10.9.0.1{i + 1}")
        lines = [f"{h}:5210{i}:5210{i} [0] NCCL INFO Bootstrap : Using {ifname}:{ip}<0>",
                 f"{h}:5210{i}:5216{i} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB {ifname}:{ip}<0>"]
        if h == "gn-01":
            lines += ["gn-01:52100:52161 [0] NCCL INFO Call to connect returned Connection refused, retrying",
                      ("gn-01:52100:52161 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
                      "172.17.0.1<43501> failed : Connection refused")]
        else:
            lines.append(f"{h}:5210{i}:5216{i} [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
                         "remote peer gn-01<36866>")
        lines += [("torch.distributed.DistBackendError: NCCL error in: NCCLUtils.hpp:317, remote process exited or "
                   "there was a network error, NCCL version 2.21.5")]
        files[f"logs/{h}/rank-{i * 4}.log"] = "\n".join(lines) + "\n"
    d = _diagnose(fx.write(tmp_path / "ifname", files, _job(hosts, 4)))
    assert (d.category, d.fault) == ("network", "nccl_bootstrap_failure")
    assert d.faulty_hosts[:1] == ["gn-04"]
    own = next(e for e in d.evidence if e.host == "gn-04" and e.role == "cause")
    assert (own.file, own.line) == ("logs/gn-04/rank-12.log", 1) and "'ib0:" in own.text


def test_an_image_pull_that_found_no_disk_is_the_pull_and_a_quota_hit_saving_is_the_shared_store(
        tmp_path: Path) -> None:
    # the kubelet's events: the pull failed, and the reason it quotes is containerd's full disk
    events = [
        "LAST SEEN   TYPE      REASON                 OBJECT                        MESSAGE",
        ("12m         Warning   Failed                 pod/train-worker-2            Failed to pull image "
         '"harbor.internal/llm/titan:2026.11": failed to pull and unpack image: failed to extract layer '
         "sha256:9f1c: write /var/lib/containerd/io.containerd.content.v1.content/ingest/a1/data: no space left on "
         "device"),
        "12m         Warning   Failed                 pod/train-worker-2            Error: ErrImagePull",
        ("10m         Normal    BackOff                pod/train-worker-2            Back-off pulling image "
         '"harbor.internal/llm/titan:2026.11"')]
    files = {"logs/node-a/kubectl-get-events.log": "\n".join(events) + "\n",
             "logs/node-b/master.log": "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"}
    d = _diagnose(fx.write(tmp_path / "pull", files, _job(["node-a", "node-b"], 8)))
    assert (d.category, d.fault, d.stage) == ("infrastructure", "container_image_pull_failure", "init")
    # errno EDQUOT while a checkpoint is written: the store's quota, with no node to evict
    save = "\n".join([*(f"[NeMo I 2026-11-22 14:{m:02d}:00 train:1] step {s} | reduced_train_loss: 2.31"
                        for m, s in enumerate(range(4990, 5001, 5))),
                      "[NeMo I 2026-11-22 14:24:45 model_checkpoint:497] Saving checkpoint for step 5000",
                      "OSError: [Errno 122] Disk quota exceeded: '/mnt/ckpt/step=5000/__0_0.distcp'"])
    files = {f"logs/{h}/train.log": save + "\n" for h in ("node-a", "node-b")}
    d = _diagnose(fx.write(tmp_path / "quota", files, _job(["node-a", "node-b"], 8)))
    assert (d.fault, d.stage) == ("storage_checkpoint_write_failure", "checkpoint")
    assert "evict" not in [p.kind for p in d.proposals]


def test_slurms_cancel_for_the_time_limit_is_the_cause_not_a_kill_set_off_elsewhere(tmp_path: Path) -> None:
    lines = [f"2026-11-24T05:5{i}:00+00:00 gpu-e05 train[88120]: Epoch 2, global step {14000 + i * 50}: "
             f"'val/top1' reached 0.78" for i in range(5)]
    lines += [("2026-11-24T06:00:12+00:00 gpu-e05 slurmstepd[88079]: error: *** JOB 918273 ON gpu-e05 CANCELLED AT "
              "2026-11-24T06:00:12 DUE TO TIME LIMIT ***"),
              "2026-11-24T06:00:12+00:00 gpu-e05 kernel: mlx5_core 0000:41:00.0: FWTracer: Events were lost"]
    d = _diagnose(fx.write(tmp_path / "tl", {"logs/gpu-e05/journal.log": "\n".join(lines) + "\n"},
                           _job(["gpu-e05"], 8)))
    assert d.fault == "job_time_limit"
    first = next(e for e in d.evidence if e.role == "cause")
    assert (first.file, first.line) == ("logs/gpu-e05/journal.log", 6)


def test_a_job_that_waited_for_machines_until_its_deadline_is_the_capacity_not_the_deadline(tmp_path: Path) -> None:
    # GKE's cluster autoscaler could not add the GPU nodes; the RayJob's activeDeadlineSeconds then passed
    events = [
        "LAST SEEN   TYPE      REASON             OBJECT                    MESSAGE",
        ("52s         Warning   FailedScaleUp      pod/ray-gpu-worker-fm7wd  Node scale up in zones us-central1-a "
         "associated with this pod failed: GCE out of resources. Pod is at risk of not being scheduled."),
        ("30s         Warning   DeadlineExceeded   rayjob/qwen-sft           The RayJob has passed the "
         "activeDeadlineSeconds. DeadlineExceeded")]
    files = {"logs/head/submitter.log": "Job submitted\n", "probes/head/k8s-events.txt": "\n".join(events) + "\n"}
    d = _diagnose(fx.write(tmp_path / "stockout", files, _job(["head"], 8)))
    assert (d.category, d.fault) == ("infrastructure", "cloud_capacity_unavailable")


def test_an_xid_13_in_dmesg_on_every_node_after_a_commit_is_the_jobs_kernel_not_the_gpus(tmp_path: Path) -> None:
    # the catalog calls Xid 13 an application's fault (info: no sign against a node), but it is the driver's word on
    # what the job's kernel did, beside the 'misaligned address' every rank prints
    hosts = ["n1", "n2"]
    files = {}
    for i, h in enumerate(hosts):
        files[f"logs/{h}/train.log"] = "\n".join([
            f"{i * 8}: Training epoch 0, iteration 1537/100000 | lr: 0.0003 | reduced_train_loss: 2.41",
            f"{i * 8}: [rank{i * 8}]: RuntimeError: CUDA error: misaligned address",
            f"srun: error: {h}: tasks 0-7: Killed"]) + "\n"
        files[f"probes/{h}/dmesg.txt"] = (
            f"[Fri Nov 27 10:05:59 2026] NVRM: Xid (PCI:0000:5d:00): 13, pid=18022{i}, name=pt_main_thread, "
            "Graphics SM Warp Exception on (GPC 4, TPC 5, SM 0): Misaligned Address\n")
    window = "started_at: 2026-11-27T10:00:00Z\nended_at: 2026-11-27T10:07:00Z\n"
    d = _diagnose(fx.write(tmp_path / "xid13", files, _job(hosts, 8, window)))
    assert (d.category, d.fault) == ("user_code", "gpu_graphics_exception")
    assert any(e.file == "probes/n1/dmesg.txt" and e.line == 1 and e.role == "cause" for e in d.evidence)
    assert d.faulty_hosts == []
    # the same Xid from the night before the job is no word on it (the simulator's red herring on a healthy node)
    d = _diagnose(fx.write(tmp_path / "old", files, _job(hosts, 8, window.replace("27T10", "28T10"))))
    assert not any(e.file == "probes/n1/dmesg.txt" for e in d.evidence)


def test_a_rank_at_another_line_of_the_function_the_others_wait_in_is_a_collective_mismatch(tmp_path: Path) -> None:
    """Every rank of a hung job in the same training function, one at another line of it: NCCL's collectives return at
    once, so each blocks at the next sync its own path reaches; only py-spy's line numbers set it apart. Without that
    line, nothing stands out."""
    from tests.stack_bundles import make_stack_bundle

    def frames(rank: int, _: int, odd: int | None) -> list[str]:
        return [f"train_loop (train_moe.py:{171 if rank == odd else 158})", "<module> (train_moe.py:240)"]

    odd = _diagnose(make_stack_bundle(tmp_path / "odd", nodes=2, gpus=4, tp=1, pp=1, dp=8,
                                      frames_of=lambda r, k: frames(r, k, 5)))
    assert odd.fault == "collective_mismatch_deadlock" and odd.category == "user_code"
    assert any("train_moe.py:171" in e.text and e.rank == 5 for e in odd.evidence)
    alike = _diagnose(make_stack_bundle(tmp_path / "alike", nodes=2, gpus=4, tp=1, pp=1, dp=8,
                                        frames_of=lambda r, k: frames(r, k, None)))
    assert alike.fault != "collective_mismatch_deadlock"


def test_a_node_that_answers_no_probe_decides_over_its_peers_ib_retry_errors(tmp_path: Path) -> None:
    """n3 answers no ssh and Slurm reports it failed (in the batch host's output); its peers' queue pairs to the dead
    node run out of retries (NCCL's status=12): the node failed, not the network."""
    hosts = ["n1", "n2", "n3"]
    files = {}
    for i, h in enumerate(hosts):
        lines = [f"{4 * i}: [rank {4 * i}] step {s} loss {2.5 - s / 1e4:.4f}" for s in range(1740, 1751)]
        if h != "n3":
            lines.append(f"{4 * i + 1}: {h}:8811:8832 [1] NCCL WARN NET/IB : Got completion from peer 10.0.0.3<52745> "
                         "with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids "
                         "::ffff:10.0.0.3")
        files[f"logs/{h}/{h}-771902.out"] = "\n".join(lines) + ("\n" if h != "n3" else "")
    files["logs/n1/slurm-771902.out"] = ("srun: error: n2: task 5: Exited with exit code 1\n"
                                         "srun: error: Node failure on n3\n"
                                         "slurmstepd: error: *** STEP 771902.0 ON n1 CANCELLED AT 2026-11-28T07:50:30 "
                                         "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\n")
    files["probes/n3/ssh.json"] = ('{"probe": "ssh", "status": "fail", "detail": "ssh: connect to host n3 port 22: No '
                                   'route to host"}\n')
    d = _diagnose(fx.write(tmp_path / "b", files, _job(hosts, 4)))
    assert (d.fault, d.faulty_hosts[:1]) == ("node_crash", ["n3"])
    assert d.evidence[0].file == "probes/n3/ssh.json"
    assert "ib_transport_retry_exceeded" not in [c.fault for c in d.candidates]


def _slow_job(hosts: list[str], gpus: int) -> str:
    return _job(hosts, gpus).replace("status: failed", "status: slow")


def test_a_port_that_trained_below_its_peers_rate_is_a_slow_link_in_a_slow_job(tmp_path: Path) -> None:
    """One node's port came back from a flap Active at a quarter of the others' rate: the rate slows the job, the
    flap in its dmesg set it."""
    hosts = ["lt-1", "lt-2", "lt-3", "lt-4"]
    files = {f"logs/{h}/train.out": "".join(f"Epoch 2/9 {s}/6250 {1.95 if s < 4600 else 0.82}it/s train_loss: 2.1\n"
                                            for s in range(4400, 4801, 100)) for h in hosts[:1]}
    for h in hosts:
        files[f"probes/{h}/ibstat.txt"] = (f"CA 'mlx5_2'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n"
                                           f"\t\tPhysical state: LinkUp\n\t\tRate: {100 if h == 'lt-3' else 400}\n")
    files["probes/lt-3/dmesg.txt"] = "[Sat Nov 28 06:10:32 2026] mlx5_core 0000:3b:00.0 mlx5_2: Port: 1 Link DOWN\n"
    d = _diagnose(fx.write(tmp_path / "b", files, _slow_job(hosts, 8)))
    assert (d.fault, d.faulty_hosts[:1]) == ("slow_link", ["lt-3"])
    assert "runs at 100 Gb/s, peers at 400" in d.evidence[0].text and d.evidence[0].file == "probes/lt-3/ibstat.txt"


def test_a_node_whose_load_is_far_above_its_peers_is_cpu_overload_in_a_slow_job(tmp_path: Path) -> None:
    """top's header on each node (procps' documented layout): one host's load average is 188 where the others' is 12,
    its CPUs 0.1% idle; its steps wait on their data. Loads alike on every node say nothing."""
    hosts = ["jx-1", "jx-2", "jx-3", "jx-4"]

    def top(load: float, idle: float) -> str:
        return (f"top - 04:10:59 up 6 days,  3:11,  1 user,  load average: {load}, 171.07, 96.33\n"
                "Tasks: 1512 total, 183 running, 1329 sleeping,   0 stopped,   0 zombie\n"
                f"%Cpu(s): {99.8 - idle:.1f} us,  0.1 sy,  0.0 ni, {idle} id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n")

    def run(name: str, loads: dict[str, tuple[float, float]]):
        files = {f"logs/{h}/train.log": "".join(f"I1128 04:0{k}:24.2 140 train.py:301] step {5200 + 10 * k} | loss 2.61 "
                                                f"| step_time {0.9 if k < 3 else 1.98}s\n" for k in range(6))
                 for h in hosts}
        files.update({f"probes/{h}/top.txt": top(*loads[h]) for h in hosts})
        return _diagnose(fx.write(tmp_path / name, files, _slow_job(hosts, 8)))

    one = run("one", {h: (188.42, 0.1) if h == "jx-3" else (12.1, 88.0) for h in hosts})
    assert (one.fault, one.category, one.faulty_hosts[:1]) == ("cpu_overload", "infrastructure", ["jx-3"])
    assert one.evidence[0].file == "probes/jx-3/top.txt" and one.evidence[0].line == 1
    assert "load average 188.42 against the peers' median" in one.evidence[0].why
    every = run("every", {h: (188.42, 0.1) for h in hosts})
    assert every.fault != "cpu_overload"


def test_a_dataloader_error_on_every_node_right_after_a_commit_is_the_new_code_not_a_sample(tmp_path: Path) -> None:
    """The same KeyError out of a DataLoader worker on both nodes, under SkyPilot's '(worker1, rank=1, ..., ip=...)'
    prefix (its rank counts nodes: the ip names the host): every rank failing alike right after a commit is the code;
    on one node, or with no new commit, a bad sample leads."""
    def run(name: str, hosts: list[str], commit_at: str):
        files = {}
        for n, h in enumerate(hosts):
            prefix = "(head, rank=0, pid=4121)" if n == 0 else f"(worker{n}, rank={n}, pid=3980, ip=10.128.0.{40 + n})"
            files[f"logs/{h}/sky.log"] = "".join(f"{prefix} {x}\n" for r in range(8 * n, 8 * n + 8, 3) for x in [
                f"[rank{r}]: Traceback (most recent call last):",
                f'[rank{r}]:   File "/home/sky/sky_workdir/train.py", line 412, in <module>',
                (f'[rank{r}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line '
                 "1344, in _process_data"),
                f"[rank{r}]:     data.reraise()",
                f"[rank{r}]: KeyError: Caught KeyError in DataLoader worker process 0.",
                f"[rank{r}]: Original Traceback (most recent call last):",
                (f'[rank{r}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", '
                 "line 308, in _worker_loop"),
                f'[rank{r}]:   File "/home/sky/sky_workdir/data/collate.py", line 88, in collate',
                f"[rank{r}]: KeyError: 'position_ids'"])
        nodes = "".join(f"  - {{host: {h}, ip: 10.128.0.{40 + n}, ranks: [{', '.join(str(8 * n + g) for g in range(8))}]}}\n"
                        for n, h in enumerate(hosts))
        job = (f'job_id: "57"\nframework: other\nstatus: failed\ngpus_per_node: 8\nstarted_at: 2026-03-05T14:01:02Z\n'
               f"nodes:\n{nodes}code:\n  - {{commit: e0d94c6, at: 2026-02-28T17:32:00Z}}\n"
               f"  - {{commit: 7d2f9ab, at: {commit_at}}}\n")
        return _diagnose(fx.write(tmp_path / name, files, job))

    both = run("both", ["sky-head", "sky-worker1"], "2026-03-05T13:40:00Z")
    assert (both.fault, both.category) == ("user_code_exception", "user_code")
    assert [(p.kind, p.to_commit) for p in both.proposals] == [("rollback", "e0d94c6")]
    for d in (run("one", ["sky-head"], "2026-03-05T13:40:00Z"), run("old", ["sky-head", "sky-worker1"],
                                                                      "2026-02-01T10:00:00Z")):
        assert d.fault != "user_code_exception" and d.candidates[0].fault == "dataloader_corrupt_sample"
