"""RDMA memlock ulimit too low in a new container image on one node; veRL PPO on Ray."""
import random
from common import Bundle, Ind, hhmmss

IID = "verl-ray-memlock-ibv-reg-mr"
HOSTS = ["ray-h100-01", "ray-h100-02", "ray-h100-03", "ray-h100-04"]
IPS = ["10.31.0.11", "10.31.0.12", "10.31.0.13", "10.31.0.14"]
BAD = "ray-h100-03"
T0 = 20 * 3600 + 11 * 60 + 9
IMG_OK = "registry.internal/rl/verl:0.4.1-cu124-r7"
IMG_NEW = "registry.internal/rl/verl:0.4.1-cu124-r8"

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(64)
    pids = {h: 3100 + 211 * i for i, h in enumerate(HOSTS)}
    t_err = T0 + 212
    D = [f"2026-11-23 {hhmmss(T0)},118\tINFO worker.py:1832 -- Connecting to existing Ray cluster at address: 10.31.0.11:6379...",
         f"2026-11-23 {hhmmss(T0+1)},402\tINFO worker.py:2003 -- Connected to Ray cluster. View the dashboard at 10.31.0.11:8265 ",
         f"(TaskRunner pid=2871) TaskRunner hostname: {HOSTS[0]}, PID: 2871",
         "(TaskRunner pid=2871) {'actor_rollout_ref': {'actor': {'checkpoint': {'load_contents': ['model', 'optimizer', 'extra'],",
         "(TaskRunner pid=2871)                                                 'save_contents': ['model', 'optimizer', 'extra']},",
         "(TaskRunner pid=2871)                                  'fsdp_config': {'fsdp_size': -1,",
         "(TaskRunner pid=2871)                                                  'param_offload': False,",
         "(TaskRunner pid=2871)                                                  'optimizer_offload': False},",
         "(TaskRunner pid=2871)                                  'ppo_micro_batch_size_per_gpu': 4,",
         "(TaskRunner pid=2871)                                  'use_remove_padding': True},",
         "(TaskRunner pid=2871)  'trainer': {'nnodes': 4, 'n_gpus_per_node': 8, 'resume_mode': 'auto', 'save_freq': 50, 'total_epochs': 15}}",
         "(TaskRunner pid=2871) Using dataset class: RLHFDataset",
         "(TaskRunner pid=2871) dataset len: 121560",
         "(TaskRunner pid=2871) Size of train dataloader: 474, Size of val dataloader: 1",
         "(TaskRunner pid=2871) Total training steps: 7110",
         "(TaskRunner pid=2871) Load from checkpoint folder: /mnt/ckpt/qwen2.5-32b-grpo/global_step_350"]
    for n, h in enumerate(HOSTS):
        for g in range(8):
            p = pids[h] + g
            pre = f"(WorkerDict pid={p}, ip={IPS[n]}) "
            if g == 0 or (h == BAD and g in (0, 1)):
                D.append(pre + "/usr/local/lib/python3.10/dist-packages/torch/distributed/fsdp/_init_utils.py:444: UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD since the world size is 1.")
            if g == 0:
                D.append(pre + f"Model config after override: Qwen2Config {{")
                D.append(pre + f"[W1123 {hhmmss(T0+140)}.{rnd.randint(100000000,999999999)} ProcessGroupNCCL.cpp:4563] [PG ID 0 PG GUID 0 Rank {8*n}]  using GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular device, or call init_process_group() with a device_id.")
    D.append(f"(WorkerDict pid={pids[HOSTS[0]]}, ip={IPS[0]}) NCCL version 2.21.5+cuda12.4")
    for g in (0, 1, 2):
        D.append(f"(WorkerDict pid={pids[BAD]+g}, ip={IPS[2]}) {BAD}:{pids[BAD]+g}:{pids[BAD]+g+389} [{g}] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory")
    D += ["Traceback (most recent call last):",
          '  File "/workspace/verl/verl/trainer/main_ppo.py", line 64, in run_ppo',
          "    ray.get(runner.run.remote(config))",
          '  File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 2822, in get',
          "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
          '  File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 930, in get_objects',
          "    raise value.as_instanceof_cause()",
          f"ray.exceptions.RayTaskError(DistBackendError): ray::TaskRunner.run() (pid=2871, ip={IPS[0]}, actor_id=8e1f0a2bc4d7a95e31b0f2c601000000, repr=<main_ppo.TaskRunner object at 0x7f0e5c2a3d60>)",
          '  File "/workspace/verl/verl/trainer/main_ppo.py", line 187, in run',
          "    trainer.init_workers()",
          '  File "/workspace/verl/verl/trainer/ppo/ray_trainer.py", line 768, in init_workers',
          "    self.actor_rollout_wg.init_model()",
          '  File "/workspace/verl/verl/single_controller/ray/base.py", line 49, in func',
          "    output = ray.get(output)",
          f"ray.exceptions.RayTaskError(DistBackendError): ray::WorkerDict.actor_rollout_init_model() (pid={pids[BAD]}, ip={IPS[2]}, actor_id=a41c07d9e2b35f6811c9d0e701000000, repr=<verl.single_controller.ray.base.WorkerDict object at 0x7f6b1e0c52a0>)",
          '  File "/workspace/verl/verl/workers/fsdp_workers.py", line 538, in init_model',
          "    ) = self._build_model_optimizer(",
          '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/fsdp/_init_utils.py", line 560, in _init_param_handle_from_module',
          "    _sync_module_params_and_buffers(",
          "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2027, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
          "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
          "Last error:",
          "Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"]
    b.write(f"logs/{HOSTS[0]}/driver.log", D)
    # per-worker files Ray keeps on each node (no prefixes)
    for n, h in enumerate(HOSTS):
        p = pids[h]
        W = [f":job_id:01000000", f":actor_name:WorkerDict",
             f"{h}:{p}:{p} [0] NCCL INFO Bootstrap : Using eth0:{IPS[n]}<0>",
             f"{h}:{p}:{p} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB eth0:{IPS[n]}<0>",
             f"{h}:{p}:{p+389} [0] NCCL INFO Channel 00/0 : {8*n} -> {8*n+1} via P2P/CUMEM/read"]
        if h == BAD:
            W += [Ind(f"{h}:{p}:{p+389} [0] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"),
                  f"{h}:{p}:{p+389} [0] NCCL INFO transport/net_ib.cc:1184 -> 2",
                  f"{h}:{p}:{p+389} [0] NCCL INFO transport/net.cc:683 -> 2",
                  f"{h}:{p}:{p+389} [0] NCCL INFO transport.cc:183 -> 2",
                  f"{h}:{p}:{p} [0] NCCL INFO init.cc:1263 -> 2",
                  f"{h}:{p}:{p} [0] NCCL INFO init.cc:1548 -> 2"]
        else:
            W += [f"{h}:{p}:{p+389} [0] NCCL INFO Channel 00/0 : {(8*n+15)%32} -> {8*n}[0] [receive] via NET/IB/0/GDRDMA",
                  f"{h}:{p}:{p+389} [0] NCCL INFO Connected all rings",
                  f"[rank{8*n}]:[E1123 {hhmmss(t_err+1800)}.{rnd.randint(100000000,999999999)} ProcessGroupNCCL.cpp:616] [Rank {8*n}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=BROADCAST, NumelIn=778240000, NumelOut=778240000, Timeout(ms)=1800000) ran for 1800081 milliseconds before timing out." if n == 1 else f"{h}:{p}:{p} [0] NCCL INFO comm 0x55d3a0e1c2 rank {8*n} nranks 32 cudaDev 0 nvmlDev 0 busId 18000 - Init COMPLETE"]
        b.write(f"logs/{h}/worker-{p}.out", W)
        lim = "64" if h == BAD else "unlimited"
        U = ["real-time non-blocking time  (microseconds, -R) unlimited", "core file size              (blocks, -c) 0",
             "data seg size               (kbytes, -d) unlimited", "scheduling priority                 (-e) 0",
             "file size                   (blocks, -f) unlimited", "pending signals                     (-i) 8254793",
             f"max locked memory           (kbytes, -l) {lim}", "max memory size             (kbytes, -m) unlimited",
             "open files                          (-n) 1048576", "pipe size                (512 bytes, -p) 8",
             "POSIX message queues         (bytes, -q) 819200", "real-time priority                  (-r) 0",
             "stack size                  (kbytes, -s) 8192", "cpu time                   (seconds, -t) unlimited",
             "max user processes                  (-u) unlimited", "virtual memory              (kbytes, -v) unlimited",
             "file locks                          (-x) unlimited"]
        if h == BAD:
            U[6] = Ind(U[6])
        b.write(f"probes/{h}/ulimit.txt", U)
        b.write(f"probes/{h}/container.json", ['{"probe": "container", "status": "ok", "detail": "image %s", "metrics": {"image_pulled_at": "%s"}}' % (IMG_NEW if h == BAD else IMG_OK, "2026-11-23T19:02:00Z" if h == BAD else "2026-11-09T08:40:00Z")])
    nodes = "\n".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(r) for r in range(8*i, 8*i+8))}]}}" for i, h in enumerate(HOSTS))
    b.job(f"""
job_id: "raysubmit_qw32b_grpo_0419"
name: qwen2.5-32b-grpo-verl
framework: other
launcher: ray
status: failed
started_at: 2026-11-23T{hhmmss(T0)}Z
ended_at: 2026-11-23T{hhmmss(t_err+1806)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
{nodes}
code:
  - {{commit: 9b0e4d2, at: 2026-11-15T12:00:00Z, message: "grpo: group size 8, kl 0.001"}}
checkpoints:
  - {{step: 300, at: 2026-11-22T22:15:00Z, path: /mnt/ckpt/qwen2.5-32b-grpo/global_step_300, valid: true}}
  - {{step: 350, at: 2026-11-23T09:40:00Z, path: /mnt/ckpt/qwen2.5-32b-grpo/global_step_350, valid: true}}
spares: 1
""")
    b.truth(fault="rdma_memlock_limit", category="infrastructure",
            root_cause=f"{BAD} had pulled the new image {IMG_NEW}, whose container runs with a 64 KB locked-memory limit; NCCL's IB transport could not register its buffers (ibv_reg_mr_iova2: Cannot allocate memory) and the FSDP actor init failed on that node",
            faulty_nodes=[BAD], stage="init", iteration=None,
            actions=[{"kind": "evict", "nodes": [BAD]}, {"kind": "restart", "from_step": 350}])
    return b
