"""Horovod on a Kubeflow MPIJob: one worker node lacks the interface NCCL_SOCKET_IFNAME names."""
import datetime as dt
import random

from common import Bundle, job_yaml, ts, nvidia_smi_q, dmesg_boot

ID = "mpijob-hvd-ifname-bootstrap"
HOSTS = [("gpu-a01", "10.40.2.11"), ("gpu-a02", "10.40.2.12"), ("gpu-a03", "10.40.2.13"), ("gpu-a04", "10.40.2.14")]
BAD = 2  # gpu-a03


def tag(rank, stream, text):
    return f"[1,{rank}]<{stream}>:{text}"


def build(root):
    b = Bundle(root, ID)
    r = random.Random(11)
    t0 = dt.datetime(2026, 11, 18, 3, 10, 4)
    pids = {rank: 90 + rank % 8 * 2 for rank in range(32)}
    L = []
    L += ["Warning: Permanently added 'hvd-bert-worker-0.hvd-bert-worker.training.svc,10.40.2.12' (ED25519) to the list of known hosts.",
          "Warning: Permanently added 'hvd-bert-worker-1.hvd-bert-worker.training.svc,10.40.2.13' (ED25519) to the list of known hosts.",
          "Warning: Permanently added 'hvd-bert-worker-2.hvd-bert-worker.training.svc,10.40.2.14' (ED25519) to the list of known hosts."]
    L += ["[hvd-bert-launcher:00041] 31 more processes have sent help message help-mpi-btl-openib.txt / ib port not selected",
          "[hvd-bert-launcher:00041] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages"]
    for rank in range(32):
        L.append(tag(rank, "stdout", f"Horovod initialized: size=32 local_size=8 rank={rank} local_rank={rank % 8}"))
    for rank in (0, 8, 16, 24):
        L.append(tag(rank, "stderr", "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 12, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary."))
        L.append(tag(rank, "stderr", "  warnings.warn(_create_warning_msg("))
    L.append(tag(0, "stdout", "=> loading checkpoint '/mnt/ckpt/bert-large-wwm/ckpt-018000.pt'"))
    L.append(tag(0, "stdout", "=> loaded checkpoint (step 18000, epoch 3)"))
    for rank in range(32):
        L.append(tag(rank, "stderr", "/workspace/train_bert.py:212: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead."))
    # NCCL init, ordered roughly by rank; the bad node's ranks die in bootstrap
    for node in range(4):
        host, ip = HOSTS[node]
        for lr in range(8):
            rank = node * 8 + lr
            p = pids[rank] + node * 1000
            pre = f"{host}:{p}:{p} [{lr}] "
            if rank == 0:
                L.append(tag(0, "stdout", f"{pre}NCCL INFO Bootstrap : Using bond0:{ip}<0>"))
                L.append(tag(0, "stdout", f"{pre}NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory"))
                L.append(tag(0, "stdout", f"{pre}NCCL INFO NET/Plugin : No plugin found, using internal implementation"))
                L.append(tag(0, "stdout", f"{pre}NCCL INFO cudaDriverVersion 12040"))
                L.append(tag(0, "stdout", "NCCL version 2.20.5+cuda12.4"))
                continue
            L.append(tag(rank, "stdout", f"{pre}NCCL INFO cudaDriverVersion 12040"))
            L.append(tag(rank, "stdout", f"{pre}NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0"))
            if node == BAD:
                L.append(tag(rank, "stdout", ""))
                L.append(tag(rank, "stdout", f"{pre}bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found"))
                L.append(tag(rank, "stdout", f"{pre}NCCL INFO init.cc:82 -> 3"))
                L.append(tag(rank, "stdout", f"{pre}NCCL INFO init.cc:101 -> 3"))
            else:
                L.append(tag(rank, "stdout", f"{pre}NCCL INFO Bootstrap : Using bond0:{ip}<0>"))
                L.append(tag(rank, "stdout", f"{pre}NCCL INFO NET/Plugin : No plugin found, using internal implementation"))
    for node in range(4):
        if node == BAD:
            continue
        host, ip = HOSTS[node]
        for lr in range(8):
            rank = node * 8 + lr
            p = pids[rank] + node * 1000
            L.append(tag(rank, "stdout", f"{host}:{p}:{p + 61} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB bond0:{ip}<0>"))
            L.append(tag(rank, "stdout", f"{host}:{p}:{p + 61} [{lr}] NCCL INFO Using network IB"))
            L.append(tag(rank, "stdout", f"{host}:{p}:{p + 61} [{lr}] NCCL INFO comm 0x{0x55d1c0a00000 + rank * 0x1000:x} rank {rank} nranks 32 cudaDev {lr} nvmlDev {lr} busId {['18000', '2a000', '3a000', '5d000', '9a000', 'ab000', 'ba000', 'db000'][lr]} commId 0x6c2b1f0e9d3a4b17 - Init START"))
    # traceback of the bad node's ranks
    tb = ["Traceback (most recent call last):",
          '  File "/workspace/train_bert.py", line 431, in <module>',
          "    main()",
          '  File "/workspace/train_bert.py", line 298, in main',
          "    hvd.broadcast_parameters(model.state_dict(), root_rank=0)",
          '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/functions.py", line 58, in broadcast_parameters',
          "    synchronize(handle)",
          '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/mpi_ops.py", line 1166, in synchronize',
          "    raise HorovodInternalError(e)",
          "horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: internal error - please report this issue to the NCCL developers"]
    for rank in range(16, 24):
        for ln in tb:
            L.append(tag(rank, "stderr", ln))
    L += ["--------------------------------------------------------------------------",
          "Primary job  terminated normally, but 1 process returned",
          "a non-zero exit code. Per user-direction, the job has been aborted.",
          "--------------------------------------------------------------------------",
          "--------------------------------------------------------------------------",
          "mpirun detected that one or more processes exited with non-zero status, thus causing",
          "the job to be terminated. The first process to do so was:",
          "",
          "  Process name: [[40187,1],16]",
          "  Exit code:    1",
          "--------------------------------------------------------------------------"]
    launcher = "logs/gpu-a01/hvd-bert-launcher.log"
    b.add(launcher, L)
    for i, (host, ip) in enumerate(HOSTS[1:], 0):
        b.add(f"logs/{host}/hvd-bert-worker-{i}.log", [
            "Server listening on 0.0.0.0 port 22.",
            "Server listening on :: port 22.",
            f"Accepted publickey for mpiuser from 10.40.2.11 port {r.randint(40000, 60000)} ssh2: ED25519 SHA256:q3f0m9wYt2kz7QvJ0b1YFh4m8o2R3sT6uVwXyZaBcDe",
            f"Received disconnect from 10.40.2.11 port {r.randint(40000, 60000)}:11: disconnected by user",
            "Disconnected from user mpiuser 10.40.2.11 port 51422"])
    # probes
    bus = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
           "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0"]
    for i, (host, ip) in enumerate(HOSTS):
        if i == BAD:
            ipl = ["lo               UNKNOWN        127.0.0.1/8 ::1/128 ",
                   "eno1             UP             10.32.7.13/24 fe80::3eec:efff:fe1a:2c13/64 ",
                   "enp27s0f0np0     UP             ",
                   "enp27s0f1np1     UP             ",
                   f"bond-data        UP             {ip}/22 fe80::a288:c2ff:fe4b:1d13/64 ",
                   "ibp12s0          UP             fe80::a288:c203:4b:1d13/64 ",
                   "docker0          DOWN           172.17.0.1/16 "]
        else:
            ipl = ["lo               UNKNOWN        127.0.0.1/8 ::1/128 ",
                   f"eno1             UP             10.32.7.{11 + i}/24 fe80::3eec:efff:fe1a:2c{11 + i:02x}/64 ",
                   "enp27s0f0np0     UP             ",
                   "enp27s0f1np1     UP             ",
                   f"bond0            UP             {ip}/22 fe80::a288:c2ff:fe4b:1d{11 + i:02x}/64 ",
                   f"ibp12s0          UP             fe80::a288:c203:4b:1d{11 + i:02x}/64 ",
                   "docker0          DOWN           172.17.0.1/16 "]
        b.add(f"probes/{host}/ip-addr.txt", ipl)
        b.add(f"probes/{host}/nvidia-smi.txt", nvidia_smi_q(host, ts(t0, 700), bus, product="NVIDIA A100-SXM4-80GB", seed=i))
        b.add(f"probes/{host}/dmesg.txt", dmesg_boot(ts(t0, -86400 * 2), host, seed=i) + (
            [f"[{ts(t0, -5400).strftime('%a %b %d %H:%M:%S %Y')}] bond-data: (slave enp27s0f0np0): Enslaving as a backup interface with an up link",
             f"[{ts(t0, -5400).strftime('%a %b %d %H:%M:%S %Y')}] bond-data: (slave enp27s0f1np1): Enslaving as a backup interface with an up link",
             f"[{ts(t0, -5399).strftime('%a %b %d %H:%M:%S %Y')}] IPv6: ADDRCONF(NETDEV_CHANGE): bond-data: link becomes ready"] if i == BAD else []))
    b.mark(launcher, "[1,16]<stdout>:gpu-a03:2090:2090 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found")
    b.mark(launcher, "[1,16]<stderr>:horovod.common.exceptions.HorovodInternalError")
    b.mark("probes/gpu-a03/ip-addr.txt", "bond-data")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml("hvd-bert-1118", "bert-large-wwm-mlm", "other", "failed", t0, ts(t0, 640), 1, 8,
                 (1, 1, 32, 1), nodes,
                 [("4e1d0a9", dt.datetime(2026, 11, 10, 9, 0), "hvd: fp16 compression for allreduce"),
                  ("b77c2f3", dt.datetime(2026, 11, 14, 16, 30), "data: add wiki-2026-10 shards")],
                 [(16000, dt.datetime(2026, 11, 17, 19, 2), "/mnt/ckpt/bert-large-wwm/ckpt-016000.pt", True),
                  (18000, dt.datetime(2026, 11, 17, 23, 41), "/mnt/ckpt/bert-large-wwm/ckpt-018000.pt", True)],
                 extra={"scheduler": "kubeflow-mpijob", "launcher": "mpirun --tag-output (Open MPI 4.1.5), runLauncherAsWorker",
                        "env": '{NCCL_SOCKET_IFNAME: bond0, NCCL_DEBUG: INFO, NCCL_DEBUG_SUBSYS: "INIT,NET"}'})
    truth = {"fault": "nccl_bootstrap_failure", "category": "network",
             "root_cause": "NCCL_SOCKET_IFNAME=bond0 was exported to every rank, but gpu-a03 (re-provisioned) names its data bond 'bond-data' and has no bond0, so NCCL bootstrap on ranks 16-23 found no socket interface and ncclCommInitRank failed; mpirun aborted the job",
             "faulty_nodes": ["gpu-a03"], "stage": "init", "iteration": None,
             "actions": [{"kind": "evict", "nodes": ["gpu-a03"]}, {"kind": "restart", "from_step": 18000}]}
    return b.write(y, truth)
