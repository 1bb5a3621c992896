"""InfiniBand/RoCE queue-pair setup failing at init on one node (wrong GID index from its /etc/nccl.conf).
Colossal-AI under torchrun --redirects 3 --log-dir: per-attempt folders attempt_N/<local_rank>/{stdout,stderr}.log."""
from common import Bundle, Ind, hms

IID = "torchrun-logdir-colossalai-qp-gid-index-3node"
HOSTS = ["cai-h100-07", "cai-h100-08", "cai-h100-09"]
IPS = ["10.60.1.21", "10.60.1.22", "10.60.1.23"]
BAD = 2
RUN = "cai-sft-0771"
RAND = ["k2v9q1xa", "p0d3mz7e", "u8rj4c2n"]
T0 = 5 * 3600 + 10 * 60 + 2
PY = "/usr/local/lib/python3.10/dist-packages"
GID = {0: "fe80::a288:c2ff:fe5d:1e42", 3: "::ffff:10.60.1.23"}


def glog(level, t, pid, src, msg):
    return f"{level}1127 {hms(t)}.{int(round(t * 1e6)) % 1000000:06d} {pid} {src}] {msg}"


def worker(b, n, h, att, lr, t):
    r = 4 * n + lr
    pid = 41122 + 300 * att + lr + 1000 * n
    base = f"logs/{h}/{RUN}_{RAND[n]}/attempt_{att}/{lr}"
    out, err = [], []
    err.append(f"[11/27/26 {hms(t + 9)}] INFO     colossalai - colossalai - INFO: {PY}/colossalai/initialize.py:75 launch")
    err.append(f"                    INFO     colossalai - colossalai - INFO: Distributed environment is initialized, world size: 12")
    err.append(f"{PY}/colossalai/shardformer/layer/normalization.py:45: UserWarning: Please install apex from source (https://github.com/NVIDIA/apex) to use the fused layernorm kernel")
    err.append('  warnings.warn("Please install apex from source (https://github.com/NVIDIA/apex) to use the fused layernorm kernel")')
    P = f"{h}:{pid}:{pid} [{lr}]"
    if r == 0:
        out += [f"{P} NCCL INFO Bootstrap : Using ens3f0np0:{IPS[n]}<0>", f"{P} NCCL INFO cudaDriverVersion 12040", "NCCL version 2.21.5+cuda12.4"]
    tid = pid + 68
    Q = f"{h}:{pid}:{tid} [{lr}]"
    if n == BAD:
        out.append(f"{Q} NCCL INFO NCCL_IB_GID_INDEX set by environment to 0.")
    out += [f"{Q} NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [2]mlx5_4:1/RoCE [3]mlx5_5:1/RoCE [RO]; OOB ens3f0np0:{IPS[n]}<0>",
            f"{Q} NCCL INFO Using non-device net plugin version 0", f"{Q} NCCL INFO Using network IB",
            f"{Q} NCCL INFO comm 0x55d1e0a4b7c0 rank {r} nranks 12 cudaDev {lr} nvmlDev {lr} busId {['19000','3b000','4c000','5d000','9b000','bb000','cb000','db000'][lr]} commId 0x2f1ad07c6e93b8a1 - Init START",
            f"{Q} NCCL INFO Channel 00/0 : {(r - 4) % 12}[{lr}] -> {r}[{lr}] [receive] via NET/IB/{lr}",
            f"{Q} NCCL INFO Channel 00/0 : {r}[{lr}] -> {(r + 4) % 12}[{lr}] [send] via NET/IB/{lr}"]
    C = f"{h}:{pid}:{pid + 81} [{lr}]"
    if n == BAD:
        peer = IPS[0] if lr % 2 == 0 else IPS[1]
        msg = (f"Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_{[0,3,4,5,6,9,10,11][lr]}:1, curr state INIT, next state RTR, "
               f"local GID index 0, local GID {GID[0]}, remote GID ::ffff:{peer}")
        w = f"{C} misc/ibvwrap.cc:309 NCCL WARN {msg}"
        out.append(Ind(w) if (att == 0 and lr == 0) else w)
        out += [f"{C} NCCL INFO transport/net_ib.cc:1018 -> 2", f"{C} NCCL INFO transport/net.cc:682 -> 2",
                f"{C} NCCL INFO transport.cc:165 -> 2", f"{C} NCCL INFO init.cc:1231 -> 2", f"{C} NCCL INFO group.cc:64 -> 2 [Async thread]"]
        exc = ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
               "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
               "Last error:", msg]
    else:
        port = 43100 + 17 * lr + att
        msg = f"socketProgressOpt: Call to recv from {IPS[BAD]}<{port}> failed : Connection reset by peer"
        out += [f"{C} misc/socket.cc:30 NCCL WARN {msg}", f"{C} NCCL INFO misc/socket.cc:47 -> 6",
                f"{C} NCCL INFO misc/socket.cc:750 -> 6", f"{C} NCCL INFO transport/net_ib.cc:1151 -> 6",
                f"{C} NCCL INFO transport/net.cc:677 -> 6"]
        exc = ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.21.5",
               "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
               "Last error:", msg]
    err += ["Traceback (most recent call last):",
            '  File "/workspace/sft/train_llama_sft.py", line 312, in <module>', "    main()",
            '  File "/workspace/sft/train_llama_sft.py", line 231, in main', "    model, optimizer, _, dataloader, lr_scheduler = booster.boost(",
            f'  File "{PY}/colossalai/booster/booster.py", line 154, in boost', "    model, optimizer, criterion, dataloader, lr_scheduler = self.plugin.configure(",
            f'  File "{PY}/colossalai/booster/plugin/hybrid_parallel_plugin.py", line 1185, in configure', "    model = HybridParallelModule(",
            f'  File "{PY}/colossalai/booster/plugin/hybrid_parallel_plugin.py", line 88, in __init__', "    module = DDP(module, process_group=dp_group, **ddp_config)",
            f'  File "{PY}/torch/nn/parallel/distributed.py", line 822, in __init__', "    _verify_param_shape_across_processes(self.process_group, parameters)",
            f'  File "{PY}/torch/distributed/utils.py", line 294, in _verify_param_shape_across_processes', "    return dist._verify_params_across_processes(process_group, tensors, logger)"] + exc
    b.write(base + "/stdout.log", out)
    b.write(base + "/stderr.log", err)
    return pid


def build(root):
    b = Bundle(root, IID)
    for n, h in enumerate(HOSTS):
        apid = 40880 + 1000 * n
        L = []
        t = T0 + 0.3 * n
        G = lambda lv, src, m, dt=0.0: glog(lv, t + dt, apid, src, m)
        for m in ["", "*****************************************",
                  "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
                  "*****************************************"]:
            L.append(G("W", "torch/distributed/run.py:793", m))
        L.append(G("I", "torch/distributed/elastic/agent/server/local_elastic_agent.py:247", f"log directory set to: /scratch/trlogs/{RUN}_{RAND[n]}", 0.1))
        for att in (0, 1):
            ta = t + 0.2 + 95 * att
            L.append(glog("I", ta, apid, "torch/distributed/elastic/agent/server/api.py:677", "[default] Rendezvous'ing worker group"))
            L.append(glog("I", ta + 1.4, apid, "torch/distributed/elastic/agent/server/api.py:525", "[default] Rendezvous complete for workers. Result:"))
            L += [f"  restart_count={att}", "  master_addr=cai-h100-07", "  master_port=29500", f"  group_rank={n}", "  group_world_size=3",
                  "  local_ranks=[0, 1, 2, 3]", f"  role_ranks=[{', '.join(str(4 * n + i) for i in range(4))}]",
                  f"  global_ranks=[{', '.join(str(4 * n + i) for i in range(4))}]", "  role_world_sizes=[12, 12, 12, 12]",
                  "  global_world_sizes=[12, 12, 12, 12]", ""]
            L.append(glog("I", ta + 1.4, apid, "torch/distributed/elastic/agent/server/api.py:685", "[default] Starting worker group"))
            L.append(glog("I", ta + 1.5, apid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:298", "use_agent_store: True"))
            L.append(glog("I", ta + 1.5, apid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:192", "Environment variable 'TORCHELASTIC_ENABLE_FILE_TIMER' not found. Do not start FileTimerServer."))
            pids = [worker(b, n, h, att, lr, ta) for lr in range(4)]
            tf = ta + 62 + (0 if n == BAD else 1.2)
            L.append(glog("E", tf, apid, "torch/distributed/elastic/multiprocessing/api.py:833", f"failed (exitcode: 1) local_rank: 0 (pid: {pids[0]}) of binary: /usr/bin/python"))
            if att == 0:
                L.append(glog("I", tf, apid, "torch/distributed/elastic/agent/server/api.py:889", "[default] Worker group FAILED. 1/1 attempts left; will restart worker group"))
                L.append(glog("I", tf, apid, "torch/distributed/elastic/agent/server/api.py:699", "[default] Stopping worker group"))
        tf = t + 95 + 63.5
        L += ["Traceback (most recent call last):", '  File "/usr/local/bin/torchrun", line 8, in <module>', "    sys.exit(main())",
              f'  File "{PY}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 348, in wrapper', "    return f(*args, **kwargs)",
              f'  File "{PY}/torch/distributed/run.py", line 901, in main', "    run(args)",
              f'  File "{PY}/torch/distributed/run.py", line 892, in run', "    elastic_launch(",
              f'  File "{PY}/torch/distributed/launcher/api.py", line 133, in __call__', "    return launch_agent(self._config, self._entrypoint, list(args))",
              f'  File "{PY}/torch/distributed/launcher/api.py", line 264, in launch_agent', "    raise ChildFailedError(",
              "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
              "============================================================", "train_llama_sft.py FAILED",
              "------------------------------------------------------------", "Failures:"]
        for i in range(1, 3):
            L += [f"[{i}]:", f"  time      : 2026-11-27_{hms(tf)}", f"  host      : {h}", f"  rank      : {4 * n + i} (local_rank: {i})",
                  f"  exitcode  : 1 (pid: {41122 + 300 + i + 1000 * n})",
                  f"  error_file: /scratch/trlogs/{RUN}_{RAND[n]}/attempt_1/{i}/error.json",
                  "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]
        L += ["------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
              f"  time      : 2026-11-27_{hms(tf)}", f"  host      : {h}", f"  rank      : {4 * n} (local_rank: 0)",
              f"  exitcode  : 1 (pid: {41122 + 300 + 1000 * n})", f"  error_file: /scratch/trlogs/{RUN}_{RAND[n]}/attempt_1/0/error.json",
              "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
              "============================================================"]
        b.write(f"logs/{h}/torchrun.console.log", L)
    for n, h in enumerate(HOSTS):
        conf = ["$ cat /etc/nccl.conf", "NCCL_SOCKET_IFNAME=ens3f0np0", "NCCL_IB_HCA=^mlx5_1,mlx5_2", "NCCL_IB_TC=106"]
        if n == BAD:
            conf.append(Ind("NCCL_IB_GID_INDEX=0"))
        b.write(f"probes/{h}/nccl-conf.txt", conf)
        last = IPS[n].split(".")[-1]
        g = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV", "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
        for dev, nd in (("mlx5_0", "ens3f0np0"), ("mlx5_3", "ens4f0np0")):
            mac = f"a288:c2ff:fe5d:1e{40 + n:02d}" if dev == "mlx5_0" else f"a288:c2ff:fe5d:2f{40 + n:02d}"
            ip = IPS[n] if dev == "mlx5_0" else f"10.61.1.{last}"
            hexip = "".join(f"{int(x):02x}" for x in ip.split("."))
            rows = [f"{dev}\t1\t0\tfe80:0000:0000:0000:{mac}\t\t\tv1\t{nd}",
                    f"{dev}\t1\t1\tfe80:0000:0000:0000:{mac}\t\t\tv2\t{nd}",
                    f"{dev}\t1\t2\t0000:0000:0000:0000:0000:ffff:{hexip[:4]}:{hexip[4:]}\t{ip}  \tv1\t{nd}",
                    f"{dev}\t1\t3\t0000:0000:0000:0000:0000:ffff:{hexip[:4]}:{hexip[4:]}\t{ip}  \tv2\t{nd}"]
            if n == BAD and dev == "mlx5_0":
                rows[0] = Ind(rows[0])
            g += rows
        g.append("n_gids_found=8")
        b.write(f"probes/{h}/show_gids.txt", g)
    b.job(f"""
job_id: "cai-sft-0771"
name: llama3-70b-sft-colossalai
framework: other
launcher: "torchrun --nnodes 3 --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint cai-h100-07:29500 --max-restarts 1 --redirects 3 --log-dir /scratch/trlogs train_llama_sft.py --plugin hybrid --tp 4 --zero 1 --load /ckpt/cai-sft/step_6000"
status: failed
started_at: 2026-11-27T{hms(T0)}Z
ended_at: 2026-11-27T{hms(T0 + 160)}Z
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 4, pp: 1, dp: 3, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(4 * i + g) for g in range(4))}]}}\n" for i, h in enumerate(HOSTS)) + """code:
  - {commit: 0c4e81d, at: 2026-11-20T11:00:00Z, message: "sft: packing with attention mask"}
  - {commit: 9ad27f3, at: 2026-11-24T16:45:00Z, message: "sft: cosine schedule with 2% warmup"}
checkpoints:
  - {step: 5000, at: 2026-11-26T08:12:00Z, path: /ckpt/cai-sft/step_5000, valid: true}
  - {step: 6000, at: 2026-11-26T19:40:00Z, path: /ckpt/cai-sft/step_6000, valid: true}
spares: 2
history: [cai-sft-0769]
note: "cai-h100-09 replaced cai-h100-03 in the allocation after a reimage on 2026-11-27"
""")
    b.truth(fault="ib_qp_setup_failure", category="network",
            root_cause="cai-h100-09's /etc/nccl.conf pins NCCL_IB_GID_INDEX=0 (a RoCE v1 link-local GID) while its peers use the RoCEv2 IPv4 GID, so every queue pair it opens fails INIT->RTR (ibv_modify_qp: Invalid argument) at the first collective; the other nodes only see their connections reset",
            faulty_nodes=[HOSTS[BAD]], stage="init", iteration=None,
            actions=[{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 6000}])
    return b
