"""Kubernetes PyTorchJob (kubectl logs --timestamps), Megatron-LM, host OOM killer kills rank 21 on k8s-gpu-16."""
import datetime as dt
from common import Bundle, yaml_job, iso, rfc3339nano, dmesg_T, glog_ts, torchrun_child_failed, nccl_init_lines

ID = "k8s-ptjob-megatron-hostoom-4node"
JOB = "gpt13b-sft"
NODES = [("k8s-gpu-14", "10.42.3.14", "master-0"), ("k8s-gpu-15", "10.42.3.15", "worker-0"),
         ("k8s-gpu-16", "10.42.3.16", "worker-1"), ("k8s-gpu-17", "10.42.3.17", "worker-2")]
FAULTY = 2            # index in NODES
BAD_LOCAL = 5
BAD_RANK = FAULTY * 8 + BAD_LOCAL
BAD_PID = 48213
START_IT = 1500
FAIL_IT = 1843        # in progress when the rank was killed
ITER_S = 2.31


def build(out):
    b = Bundle(out, seed=14)
    r = b.rng
    t0 = dt.datetime(2026, 3, 14, 8, 58, 3)
    t_train = t0 + dt.timedelta(seconds=171)
    t_kill = t_train + dt.timedelta(seconds=(FAIL_IT - START_IT - 1) * ITER_S + 1.4)
    logs = {}
    for i, (h, ip, pod) in enumerate(NODES):
        logs[i] = f"logs/{h}/{JOB}-{pod}.log"

    last = {}

    def L(i, sec, text, mark=False):
        t = t0 + dt.timedelta(seconds=sec) if not isinstance(sec, dt.datetime) else sec
        t = t + dt.timedelta(microseconds=r.randint(0, 900))
        if i in last and t <= last[i]:
            t = last[i] + dt.timedelta(microseconds=r.randint(20, 400))
        last[i] = t
        return b.add(logs[i], f"{rfc3339nano(t, r)} {text}", mark)

    pids = {i: [40100 + 1000 * i + 13 * k for k in range(8)] for i in range(4)}
    pids[FAULTY][BAD_LOCAL] = BAD_PID
    for i, (h, ip, pod) in enumerate(NODES):
        s = 0.0
        w = f"W0314 08:58:03.{411000 + i:06d} {139000 + i if i != FAULTY else 139771} torch/distributed/run.py:793] "
        L(i, s, w)
        L(i, s, w + "*****************************************")
        L(i, s, w + "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        L(i, s, w + "*****************************************")
        s += 9
        for k in range(8):
            L(i, s + 0.1 * k, "/opt/megatron-lm/megatron/core/tensor_parallel/layers.py:290: FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.")
            L(i, s + 0.1 * k, "  def forward(")
        s += 4
        if i == 0:
            L(i, s, "using world size: 32, data-parallel size: 4, context-parallel size: 1, hierarchical context-parallel sizes: Nonetensor-model-parallel size: 4, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 2, encoder-pipeline-model-parallel size: 0")
            L(i, s, "WARNING: Setting args.overlap_p2p_comm and args.align_param_gather to False since non-interleaved schedule does not support overlapping p2p communication and aligned param AG")
            L(i, s, "using torch.bfloat16 for parameters ...")
            L(i, s, "------------------------ arguments ------------------------")
            for k, v in [("accumulate_allreduce_grads_in_fp32", "True"), ("bf16", "True"), ("data_path", "['/mnt/data/sft-mix-v7/text_document']"),
                         ("dataloader_type", "single"), ("distributed_backend", "nccl"), ("eval_interval", "1000"), ("ffn_hidden_size", "13824"),
                         ("global_batch_size", "128"), ("hidden_size", "5120"), ("load", "/mnt/ckpt/gpt13b-sft"), ("log_interval", "10"),
                         ("lr", "2e-05"), ("micro_batch_size", "2"), ("num_attention_heads", "40"), ("num_layers", "40"),
                         ("num_workers", "8"), ("pipeline_model_parallel_size", "2"), ("save", "/mnt/ckpt/gpt13b-sft"), ("save_interval", "500"),
                         ("seq_length", "4096"), ("tensor_model_parallel_size", "4"), ("train_iters", "6000"), ("use_distributed_optimizer", "True")]:
                L(i, s, f"  {k} {'.' * (48 - len(k))} {v}")
            L(i, s, "-------------------- end of arguments ---------------------")
            L(i, s, "setting number of micro-batches to constant 16")
            L(i, s, "> building GPT2BPETokenizer tokenizer ...")
            L(i, s, " > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)")
            L(i, s, "> initializing torch distributed ...")
        for line in nccl_init_lines(f"{JOB}-{pod}", pids[i][0], pids[i][0], 0, ip, ifname="eth0", ver="2.21.5"):
            L(i, s + 2, line)
        s += 6
        if i == 0:
            L(i, s, "> initialized tensor model parallel with size 4")
            L(i, s, "> initialized pipeline model parallel with size 2")
            L(i, s, "> setting random seeds to 1234 ...")
            L(i, s, "> compiling dataset index builder ...")
            L(i, s, ">>> done with dataset index builder. Compilation time: 0.081 seconds")
            L(i, s, "> compiling and loading fused kernels ...")
            L(i, s + 3, ">>> done with compiling and loading fused kernels. Compilation time: 3.114 seconds")
            L(i, s + 4, "time to initialize megatron (seconds): 21.802")
            L(i, s + 4, "[after megatron is initialized] datetime: 2026-03-14 08:58:31 ")
            L(i, s + 5, "building GPT model ...")
            L(i, s + 7, f" loading checkpoint from /mnt/ckpt/gpt13b-sft at iteration {START_IT}")
            L(i, s + 61, f"  successfully loaded checkpoint from /mnt/ckpt/gpt13b-sft [ t 0/4, p 0/2 ] at iteration {START_IT}")
            L(i, s + 62, "(min, max) time across ranks (ms):")
            L(i, s + 62, "    load-checkpoint ................................: (53988.12, 54021.77)")
            L(i, s + 62, "[after model, optimizer, and learning rate scheduler are built] datetime: 2026-03-14 08:59:42 ")
            L(i, s + 63, "> building train, validation, and test datasets ...")
            L(i, s + 63, " > datasets target sizes (minimum size):")
            L(i, s + 63, "    train:      768000")
            L(i, s + 63, "    validation: 7808")
            L(i, s + 63, "    test:       128")
            L(i, s + 66, "> finished creating GPT datasets ...")
            L(i, s + 67, "[after dataloaders are built] datetime: 2026-03-14 08:59:47 ")
            L(i, s + 67, "done with setup ...")
            L(i, s + 67, "training ...")
            L(i, s + 67, "[before the start of training step] datetime: 2026-03-14 08:59:48 ")
        else:
            L(i, s + 60, "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current system is 26, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.")
            L(i, s + 60, "  warnings.warn(")

    # Megatron prints the iteration lines from the last rank (rank 31, on worker-2)
    lastrank = 3
    for it in range(START_IT + 10, FAIL_IT, 10):
        t = t_train + dt.timedelta(seconds=(it - START_IT) * ITER_S)
        ms = ITER_S * 1000 + r.uniform(-40, 40)
        loss = 1.62 - 0.00009 * (it - START_IT) + r.uniform(-0.03, 0.03)
        L(lastrank, t, f" [{t:%Y-%m-%d %H:%M:%S}] iteration     {it:>4d}/    6000 | consumed samples:       {it * 128:>7d} | elapsed time per iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): {198.0 + r.uniform(-3, 3):.1f} | learning rate: {2e-5 * (1 - it / 6000 * 0.9):.6E} | global batch size:   128 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {0.41 + r.uniform(-0.05, 0.08):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
        if it == START_IT + 10:
            L(lastrank, t, "[Rank 31] (after 1510 iterations) memory (MB) | allocated: 21433.12 | max allocated: 52611.40 | reserved: 58520.00 | max reserved: 58520.00")

    # the kill on worker-1 (k8s-gpu-16)
    f = FAULTY
    tk = t_kill + dt.timedelta(seconds=0.9)
    L(f, tk, f"E{glog_ts(tk)} 139771 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: {BAD_LOCAL} (pid: {BAD_PID}) of binary: /usr/bin/python", mark=True)
    for k in range(8):
        if k != BAD_LOCAL:
            tt = tk + dt.timedelta(milliseconds=3 + k)
            L(f, tt, f"W{glog_ts(tt)} 139771 torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[f][k]} closing signal SIGTERM")
    when = f"{t_kill:%Y-%m-%d_%H:%M:%S}"
    for line in torchrun_child_failed("pretrain_gpt.py", when, f"{JOB}-worker-1", [],
                                      {"rank": BAD_RANK, "local_rank": BAD_LOCAL, "exitcode": -9, "pid": BAD_PID,
                                       "traceback": f"Signal 9 (SIGKILL) received by PID {BAD_PID}"}):
        L(f, tk + dt.timedelta(seconds=6), line)

    # cascade on the other pods: their NCCL comms see the dead peer, the watchdog aborts, torchrun reports SIGABRT
    for i in range(4):
        if i == f:
            continue
        ta = t_kill + dt.timedelta(seconds=2.5 + i)
        hosts_pod = f"{JOB}-{NODES[i][2]}"
        first_local = [1, 5, 3][[0, 1, 3].index(i)]
        for k in (first_local, (first_local + 2) % 8):
            rank = i * 8 + k
            tt = ta + dt.timedelta(milliseconds=40 * k)
            L(i, tt, f"{hosts_pod}:{pids[i][k]}:{pids[i][k] + 211} [{k}] NCCL WARN socketProgressOpt: Call to recv from 10.42.3.16<{51000 + 37 * k}> failed : Connection reset by peer")
            L(i, tt, f"{hosts_pod}:{pids[i][k]}:{pids[i][k] + 211} [{k}] NCCL INFO misc/socket.cc:49 -> 6")
            L(i, tt, f"[rank{rank}]:[E{glog_ts(tt)} {pids[i][k] + 190} ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank {rank}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5")
            L(i, tt, f"[rank{rank}]:ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
            L(i, tt, f"[rank{rank}]:Last error:")
            L(i, tt, f"[rank{rank}]:socketProgressOpt: Call to recv from 10.42.3.16<{51000 + 37 * k}> failed : Connection reset by peer")
            L(i, tt, "terminate called after throwing an instance of 'c10::DistBackendError'")
            L(i, tt, f"  what():  [PG 0 (default_pg) Rank {rank}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5")
        tr = ta + dt.timedelta(seconds=1.2)
        L(i, tr, f"W{glog_ts(tr)} {139000 + i} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[i][(first_local + 1) % 8]} closing signal SIGTERM")
        L(i, tr, f"E{glog_ts(tr)} {139000 + i} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: {first_local} (pid: {pids[i][first_local]}) of binary: /usr/bin/python")
        for line in torchrun_child_failed("pretrain_gpt.py", f"{tr:%Y-%m-%d_%H:%M:%S}", hosts_pod, [],
                                          {"rank": i * 8 + first_local, "local_rank": first_local, "exitcode": -6,
                                           "pid": pids[i][first_local], "traceback": f"Signal 6 (SIGABRT) received by PID {pids[i][first_local]}"}):
            L(i, tr + dt.timedelta(seconds=5), line)

    # probes: dmesg -T on every node, the OOM kill on k8s-gpu-16; kubectl events on the master node
    for i, (h, ip, pod) in enumerate(NODES):
        p = f"probes/{h}/dmesg.txt"
        boot = t0 - dt.timedelta(days=6, hours=3)
        for sec, txt in [(2, "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 (Ubuntu 5.15.0-105.115-generic 5.15.148)"),
                         (31, "nvidia-nvlink: Nvlink Core is being initialized, major device number 506"),
                         (33, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024"),
                         (40, "mlx5_core 0000:18:00.0: mlx5_pcie_event:301:(pid 1183): PCIe slot advertised sufficient power (27W)."),
                         (44, "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready"),
                         (3600 * 50, "cni0: port 3(veth5a1c0e2b) entered forwarding state"),
                         (3600 * 147, f"eth0: renamed from tmp{r.randint(10000, 99999)}")]:
            b.add(p, f"{dmesg_T(boot + dt.timedelta(seconds=sec))} {txt}")
        if i == FAULTY:
            tk0 = t_kill
            D = lambda s, x, m=False: b.add(p, f"{dmesg_T(tk0 - dt.timedelta(seconds=s))} {x}", m)
            D(1, "pt_data_worker invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0")
            D(1, "CPU: 87 PID: 48977 Comm: pt_data_worker Tainted: P           OE     5.15.0-105-generic #115-Ubuntu")
            D(1, "Hardware name: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 01/11/2024")
            D(1, "Call Trace:")
            for fr in ["<TASK>", "dump_stack_lvl+0x4a/0x63", "dump_header+0x4a/0x1f4", "oom_kill_process.cold+0xb/0x10",
                       "out_of_memory+0x106/0x2e0", "__alloc_pages_slowpath.constprop.0+0x97a/0xa30", "__alloc_pages+0x30f/0x350",
                       "alloc_pages_vma+0x95/0x280", "do_anonymous_page+0xef/0x3e0", "__handle_mm_fault+0x833/0x9b0",
                       "handle_mm_fault+0xd8/0x2c0", "do_user_addr_fault+0x1c9/0x670", "exc_page_fault+0x77/0x170",
                       "asm_exc_page_fault+0x27/0x30", "</TASK>"]:
                D(1, f" {fr}")
            D(1, "Mem-Info:")
            D(1, "active_anon:7413022 inactive_anon:253814811 isolated_anon:0\n"[:-1])
            D(1, " active_file:1122 inactive_file:871 isolated_file:0")
            D(1, " unevictable:0 dirty:0 writeback:0")
            D(1, " slab_reclaimable:91318 slab_unreclaimable:402117")
            D(1, " mapped:2201933 shmem:8392117 pagetables:591332 bounce:0")
            D(1, " free:402331 free_pcp:96 free_cma:0")
            D(1, "Tasks state (memory values in pages):")
            D(1, "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name")
            for k in range(8):
                pid = pids[FAULTY][k]
                rss = 49683605 if k == BAD_LOCAL else r.randint(21000000, 23500000)
                D(1, f"[{pid:>7d}]     0 {pid:>5d} {rss + 8400000:>8d} {rss:>8d} {r.randint(90000000, 110000000):>14d}        0             0 python")
            D(1, f"[  48977]     0 48977  9811020  2210331    19091456        0             0 pt_data_worker")
            D(1, f"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=cri-containerd-5e1f0b7a93c2d4e8b61a0f.scope,mems_allowed=0-1,global_oom,task_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3b2c6e14_91f0_4a77_b0c2_8d51e6f2a913.slice/cri-containerd-5e1f0b7a93c2d4e8b61a0f.scope,task=python,pid={BAD_PID},uid=0", True)
            D(1, f"Out of memory: Killed process {BAD_PID} (python) total-vm:232336420kB, anon-rss:198734420kB, file-rss:412304kB, shmem-rss:8388608kB, UID:0 pgtables:402112kB oom_score_adj:0", True)
            D(0, f"oom_reaper: reaped process {BAD_PID} (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:8388608kB")
    ev = "probes/k8s-gpu-14/kubectl-events.txt"
    b.add(ev, "LAST SEEN   TYPE      REASON                   OBJECT                         MESSAGE")
    b.add(ev, f"71m         Normal    SuccessfulCreatePod      pytorchjob/{JOB}              Created pod: {JOB}-master-0")
    b.add(ev, f"71m         Normal    SuccessfulCreatePod      pytorchjob/{JOB}              Created pod: {JOB}-worker-0")
    b.add(ev, f"71m         Normal    SuccessfulCreatePod      pytorchjob/{JOB}              Created pod: {JOB}-worker-1")
    b.add(ev, f"71m         Normal    SuccessfulCreatePod      pytorchjob/{JOB}              Created pod: {JOB}-worker-2")
    b.add(ev, f"71m         Normal    Pulled                   pod/{JOB}-worker-1            Container image \"registry.local/llm/megatron:24.09-py3\" already present on machine")
    b.add(ev, f"58m         Warning   SystemOOM                node/k8s-gpu-16                System OOM encountered, victim process: python, pid: {BAD_PID}", True)
    b.add(ev, f"58m         Normal    ExitedWithCode           pytorchjob/{JOB}              Pod: default.{JOB}-worker-1 exited with code 1")
    b.add(ev, f"58m         Normal    ExitedWithCode           pytorchjob/{JOB}              Pod: default.{JOB}-master-0 exited with code 1")
    b.add(ev, f"58m         Warning   PyTorchJobFailed         pytorchjob/{JOB}              PyTorchJob {JOB} is failed because 1 Worker replica(s) failed.")

    t_end = t_kill + dt.timedelta(seconds=20)
    job = {
        "job_id": "gpt13b-sft-0314", "name": JOB, "framework": "megatron", "status": "failed",
        "started_at": iso(t0), "ended_at": iso(t_end), "exit_code": 1, "gpus_per_node": 8,
        "parallelism": {"tp": 4, "pp": 2, "dp": 4, "cp": 1, "ep": 1},
        "scheduler": "kubernetes (kubeflow PyTorchJob)",
        "nodes": [{"host": h, "ip": ip, "pod": f"{JOB}-{pod}", "ranks": list(range(8 * i, 8 * i + 8))} for i, (h, ip, pod) in enumerate(NODES)],
        "code": [{"commit": "c0a71e2", "at": "2026-03-02T10:14:00Z", "message": "sft: 13b config, seq 4096"},
                 {"commit": "9b44d1f", "at": "2026-03-09T16:40:00Z", "message": "data: sft-mix-v7 blend"}],
        "checkpoints": [{"step": 1000, "at": "2026-03-14T03:12:44Z", "path": "/mnt/ckpt/gpt13b-sft/iter_0001000", "valid": True},
                        {"step": 1500, "at": "2026-03-14T03:32:10Z", "path": "/mnt/ckpt/gpt13b-sft/iter_0001500", "valid": True}],
        "spares": 1, "history": ["gpt13b-sft-0313"],
    }
    truth = {
        "fault": "host_oom_killed", "category": "infrastructure",
        "root_cause": f"the Linux OOM killer on k8s-gpu-16 (global OOM, pod had no memory limit) killed rank {BAD_RANK}'s python process (pid {BAD_PID}, ~190 GiB anon RSS); torchrun on {JOB}-worker-1 reported exitcode -9 and the peers on the other pods aborted on the dead connection",
        "faulty_nodes": ["k8s-gpu-16"], "stage": "training", "iteration": FAIL_IT,
        "actions": [{"kind": "restart", "from_step": 1500}],
    }
    return b.write(yaml_job(job), truth)
