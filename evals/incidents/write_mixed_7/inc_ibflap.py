"""DeepSpeed ZeRO-2 launched by the pdsh runner: one launcher log on the first node, every remote line prefixed
with the worker's address ("10.0.0.3: "). Port 1 of mlx5_4 on dgx-n03 flaps (port error / port active / port
error); NCCL's IB transport on rank 20 gets a retry-exceeded completion and the job dies. A healthy node had a
bootstrap connect retry at init that succeeded.
"""
import base64
import json
import random
from datetime import timedelta

from common import (Bundle, T, iso, dmesg_T, dmesg_boot, jitter, pyts, nccl, nccl_init, nccl_comm_done,
                    remote_error_tb, ibstat, perfquery_x)

ID = "pdsh-deepspeed-ib-flap-4node"
HOSTS = ["dgx-n01", "dgx-n02", "dgx-n03", "dgx-n04"]
IPS = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]
BAD = 2
BAD_HCA = 4
BAD_RANK = BAD * 8 + BAD_HCA
PEER_RANK = 1 * 8 + BAD_HCA
BUSID = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
SP = "/opt/conda/lib/python3.11/site-packages"


def ds(t, lvl, src, msg):
    return f"[{pyts(t)}] [{lvl}] [{src}] {msg}"


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    LOG = "logs/dgx-n01/ds_launch.log"
    t0 = T("2026-11-28T05:01:02")
    t_tr = T("2026-11-28T05:09:47")
    s0, last_ok = 8561, 8616
    step_s = 3.42
    t_fault = t_tr + timedelta(seconds=(last_ok - s0 + 1) * step_s + 1.3)
    world = {ip: list(range(i * 8, i * 8 + 8)) for i, ip in enumerate(IPS)}
    wi = base64.urlsafe_b64encode(json.dumps({ip: list(range(8)) for ip in IPS}).encode()).decode()
    L = [ds(t0, "INFO", "real_accelerator.py:222:get_accelerator", "Setting ds_accelerator to cuda (auto detect)"),
         ds(jitter(t0, 2, 3), "INFO", "runner.py:607:main", "Using IP address of 10.0.0.1 for node 10.0.0.1"),
         ds(jitter(t0, 3, 4), "INFO", "multinode_runner.py:80:get_cmd", "Running on the following workers: " + ",".join(IPS)),
         ds(jitter(t0, 3, 4), "INFO", "runner.py:635:main", "cmd = pdsh -S -f 1024 -w " + ",".join(IPS) +
            " export NCCL_DEBUG=INFO; export NCCL_IB_HCA=mlx5; export NCCL_SOCKET_IFNAME=bond0; export "
            "PYTHONPATH=/home/mluser/neox; export WANDB_PROJECT=neox-20b;  cd /home/mluser/neox; /opt/conda/bin/python -u "
            f"-m deepspeed.launcher.launch --world_info={wi} --node_rank=%n --master_addr=10.0.0.1 --master_port=29500 "
            "train.py --deepspeed --deepspeed_config configs/ds_zero2.json --resume latest")]
    for n, ip in enumerate(IPS):
        p = f"{ip}: "
        t = t0 + timedelta(seconds=6 + n * 0.3)
        L += [p + ds(t, "INFO", "real_accelerator.py:222:get_accelerator", "Setting ds_accelerator to cuda (auto detect)"),
              p + ds(t, "INFO", "launch.py:146:main", f"WORLD INFO DICT: {world}".replace("[0, 1, 2", "[0, 1, 2")),
              p + ds(t, "INFO", "launch.py:152:main", f"nnodes=4, num_local_procs=8, node_rank={n}"),
              p + ds(t, "INFO", "launch.py:163:main", "global_rank_mapping=defaultdict(<class 'list'>, " + str(world) + ")"),
              p + ds(t, "INFO", "launch.py:164:main", "dist_world_size=32"),
              p + ds(t, "INFO", "launch.py:168:main", "Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")]
    for n, ip in enumerate(IPS):
        p = f"{ip}: "
        t = t0 + timedelta(seconds=14 + n * 0.2)
        L += [p + ds(t, "INFO", "comm.py:652:init_distributed", "cdb=None")]
        if n == 0:
            L += [p + ds(t, "INFO", "comm.py:683:init_distributed", "Initializing TorchBackend in DeepSpeed with backend nccl")]
    pids = {}
    for n, ip in enumerate(IPS):
        p = f"{ip}: "
        host = HOSTS[n]
        for lr in range(8):
            pid = 51200 + 97 * n + lr
            pids[(n, lr)] = pid
            out, tid = nccl_init(host, pid, lr, ip, iface="bond0", hcas=8, plugin=False)
            if lr in (0, BAD_HCA) or n == 0:
                L += [p + x for x in out]
            if n == 3 and lr == 0:
                for k in (1, 2):
                    L.append(p + nccl(host, pid, tid, lr, f"INFO socketPollConnect: connect returned Connection refused, "
                                                          f"retrying ({k}/34) after sleep for {k * 100} msec"))
    for n, ip in enumerate(IPS):
        for lr in range(8):
            L.append(f"{ip}: " + nccl_comm_done(HOSTS[n], pids[(n, lr)], pids[(n, lr)] + 90 + lr, lr, n * 8 + lr, 32, BUSID[lr]))
    p0 = "10.0.0.1: "
    t = t0 + timedelta(seconds=40)
    L += [p0 + ds(t, "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed info: version=0.16.2, git-hash=unknown, git-branch=unknown"),
          p0 + ds(t, "INFO", "config.py:734:__init__", "Config mesh_device None world_size = 32"),
          p0 + ds(jitter(t, 1, 2), "INFO", "logging.py:128:log_dist", "[Rank 0] Using DeepSpeed Optimizer param name adamw as basic optimizer"),
          p0 + ds(jitter(t, 1, 2), "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed Basic Optimizer = FusedAdam"),
          p0 + ds(jitter(t, 1, 2), "INFO", "logging.py:128:log_dist", "[Rank 0] Creating torch.bfloat16 ZeRO stage 2 optimizer"),
          p0 + ds(jitter(t, 2, 3), "INFO", "stage_1_and_2.py:149:__init__", "Reduce bucket size 500000000"),
          p0 + ds(jitter(t, 2, 3), "INFO", "stage_1_and_2.py:150:__init__", "Allgather bucket size 500000000"),
          p0 + ds(jitter(t, 2, 3), "INFO", "stage_1_and_2.py:151:__init__", "CPU Offload: False"),
          p0 + ds(jitter(t, 2, 3), "INFO", "stage_1_and_2.py:152:__init__", "Round robin gradient partitioning: False"),
          p0 + ds(jitter(t, 30, 31), "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed Final Optimizer = DeepSpeedZeroOptimizer"),
          p0 + ds(jitter(t, 31, 32), "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed using configured LR scheduler = WarmupDecayLR"),
          p0 + ds(t_tr - timedelta(seconds=200), "INFO", "torch_checkpoint_engine.py:27:load",
                  "[Torch] Loading checkpoint from /nfs/ckpt/neox-20b/global_step8560/mp_rank_00_model_states.pt..."),
          p0 + ds(t_tr - timedelta(seconds=14), "INFO", "engine.py:3197:_load_zero_checkpoint",
                  "loading 32 zero partition checkpoints for rank 0"),
          p0 + "/home/mluser/neox/train.py:211: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use "
               "`torch.amp.autocast('cuda', args...)` instead.",
          p0 + "  with torch.cuda.amp.autocast(dtype=torch.bfloat16):"]
    for s in range(s0, last_ok + 1):
        ts = t_tr + timedelta(seconds=(s - s0 + 1) * step_s + random.uniform(-0.1, 0.1))
        lr_ = 1.2e-4 * (1 - (s - 2000) / 150000)
        L.append(p0 + ds(ts, "INFO", "logging.py:128:log_dist",
                         f"[Rank 0] step={s}, skipped=0, lr=[{lr_:.15f}], mom=[(0.9, 0.95)]"))
        rate = 32 * 4 / (step_s + random.uniform(-0.05, 0.05))
        L.append(p0 + ds(ts, "INFO", "timer.py:264:stop",
                         f"epoch=0/micro_step={s * 4}/global_step={s}, RunningAvgSamplesPerSec={37.41 + random.uniform(-0.02, 0.02):.14f}, "
                         f"CurrSamplesPerSec={rate:.14f}, MemAllocated=22.41GB, MaxMemAllocated=39.17GB"))
        L.append(p0 + f"iteration {s:>8} | loss {2.31 - (s - 8000) * 0.00002 + random.uniform(-0.03, 0.03):.4f} | grad norm "
                      f"{0.41 + random.uniform(-0.05, 0.05):.3f} | tokens/s {int(rate * 2048):,}")
        if s == 8590:
            L.append(p0 + "wandb: Network error (ReadTimeout), entering retry loop.")
    # the flap, then the failure on rank 20 and its peer
    pb = f"{IPS[BAD]}: "
    host = HOSTS[BAD]
    pid = pids[(BAD, BAD_HCA)]
    tid = pid + 211
    tf = t_fault
    L += [pb + nccl(host, pid, tid, BAD_HCA, f"WARN NET/IB : mlx5_{BAD_HCA}:1 Got async event : port error"),
          pb + nccl(host, pid, tid, BAD_HCA, f"WARN NET/IB : mlx5_{BAD_HCA}:1 Got async event : port active"),
          pb + nccl(host, pid, tid, BAD_HCA, f"WARN NET/IB : mlx5_{BAD_HCA}:1 Got async event : port error")]
    b.mark(LOG, f"{pb}{host}:{pid}:{tid} [{BAD_HCA}] NCCL WARN NET/IB : mlx5_{BAD_HCA}:1 Got async event : port error")
    comp = (f"NET/IB : Got completion from peer 10.0.0.2<41873> with status=12 opcode=0 len=0 vendor err 129 (Send) "
            f"localGid fe80::a088:c203:e1:b040 remoteGidsfe80::a088:c203:e1:a040")
    L += [pb + nccl(host, pid, tid + 1, BAD_HCA, "WARN " + comp),
          pb + nccl(host, pid, tid + 1, BAD_HCA, "INFO transport/net.cc:1302 -> 6"),
          pb + nccl(host, pid, tid + 1, BAD_HCA, "INFO proxy.cc:698 -> 6"),
          pb + nccl(host, pid, tid + 1, BAD_HCA, "INFO proxy.cc:878 -> 6 [Progress Thread]")]
    b.mark(LOG, f"{pb}{host}:{pid}:{tid + 1} [{BAD_HCA}] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<41873>")
    frames = [("/home/mluser/neox/train.py", 402, "main()", "<module>"),
              ("/home/mluser/neox/train.py", 357, "model_engine.backward(loss)", "main"),
              (f"{SP}/deepspeed/runtime/engine.py", 2212, "self.allreduce_gradients()", "backward"),
              (f"{SP}/deepspeed/runtime/zero/stage_1_and_2.py", 877, "dist.reduce_scatter_fn(", "reduce_ipg_grads"),
              (f"{SP}/torch/distributed/distributed_c10d.py", 4013, "work = group._reduce_scatter_base(output, input, opts)",
               "reduce_scatter_tensor")]
    L += [pb + x for x in remote_error_tb(BAD_RANK, "/home/mluser/neox/train.py", frames, comp)]
    # the peer on dgx-n02 sees the broken QP from its side
    pp = f"{IPS[1]}: "
    ppid = pids[(1, BAD_HCA)]
    comp2 = (f"NET/IB : Got completion from peer 10.0.0.3<52210> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
             f"localGid fe80::a088:c203:e1:a040 remoteGidsfe80::a088:c203:e1:b040")
    L += [pp + nccl(HOSTS[1], ppid, ppid + 212, BAD_HCA, "WARN " + comp2),
          pp + nccl(HOSTS[1], ppid, ppid + 212, BAD_HCA, "INFO transport/net.cc:1302 -> 6")]
    L += [pp + x for x in remote_error_tb(PEER_RANK, "/home/mluser/neox/train.py", frames, comp2)]
    tk = tf + timedelta(seconds=2)
    for n in (BAD, 1):
        for lr in range(8):
            L.append(f"{IPS[n]}: " + ds(tk + timedelta(seconds=0.013 * lr), "INFO", "launch.py:335:sigkill_handler",
                                        f"Killing subprocess {pids[(n, lr)]}"))
        bad_lr = BAD_HCA
        L.append(f"{IPS[n]}: " + ds(jitter(tk, 0.3, 0.5), "ERROR", "launch.py:341:sigkill_handler",
                                    f"['/opt/conda/bin/python', '-u', 'train.py', '--local_rank={bad_lr}', '--deepspeed', "
                                    f"'--deepspeed_config', 'configs/ds_zero2.json', '--resume', 'latest'] exits with return code = 1"))
    L += [f"pdsh@dgx-n01: {IPS[BAD]}: ssh exited with exit code 1", f"pdsh@dgx-n01: {IPS[1]}: ssh exited with exit code 1"]
    t_end = tf + timedelta(seconds=1805)
    for n in (0, 3):
        for lr in range(8):
            L.append(f"{IPS[n]}: [rank{n * 8 + lr}]:[E{t_end.strftime('%m%d %H:%M:%S')}.{random.randint(100000, 999999)}"
                     f"{random.randint(100, 999)} ProcessGroupNCCL.cpp:616] [Rank {n * 8 + lr}] Watchdog caught collective "
                     f"operation timeout: WorkNCCL(SeqNum=1944022, OpType=_REDUCE_SCATTER_BASE, NumelIn=618659840, "
                     f"NumelOut=19333120, Timeout(ms)=1800000) ran for 1800061 milliseconds before timing out.")
        L.append(f"pdsh@dgx-n01: {IPS[n]}: ssh exited with exit code 1")
    b.add(LOG, L)

    # probes
    for n, host in enumerate(HOSTS):
        d = dmesg_boot(host, T("2026-11-22T13:02:44"))
        if n == BAD:
            pci = "0000:9a:00.0"
            for k, (dt, st) in enumerate([(-3605, "DOWN"), (-3603, "INIT"), (-3602, "ACTIVE"), (-1, "DOWN"), (1, "INIT"),
                                         (2, "ACTIVE"), (7, "DOWN"), (9, "INIT"), (10, "ACTIVE")]):
                d.append(f"{dmesg_T(tf + timedelta(seconds=dt))} mlx5_core {pci} mlx5_{BAD_HCA}: Port: 1 Link {st}")
            b.mark(f"probes/{host}/dmesg.txt", f"mlx5_{BAD_HCA}: Port: 1 Link DOWN", 2)
        b.add(f"probes/{host}/dmesg.txt", d)
        b.add(f"probes/{host}/ibstat.txt", ibstat(8, guid_base=0xa088c20300e1a000 + n * 0x1000))
        ctr = []
        for h in range(8):
            if n == BAD and h == BAD_HCA:
                ctr += perfquery_x(f"mlx5_{h}", 300 + n * 8 + h, sym=4127, rec=9, downed=6, rcverr=212)
            else:
                ctr += perfquery_x(f"mlx5_{h}", 300 + n * 8 + h)
        b.add(f"probes/{host}/ib-counters.txt", ctr)
        if n == BAD:
            b.mark(f"probes/{host}/ib-counters.txt", "LinkDownedCounter:...............6")

    job = f"""
job_id: "neox20b-0641"
name: neox-20b-zero2
framework: deepspeed
status: failed
started_at: {iso(t0)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
launcher: "deepspeed --hostfile hostfile (pdsh)"
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 8 + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: 0d4e8f1, at: 2026-10-30T10:00:00Z, message: "neox: zero2 + fused adam"}
checkpoints:
  - {step: 8400, at: 2026-11-28T00:40:12Z, path: /nfs/ckpt/neox-20b/global_step8400, valid: true}
  - {step: 8560, at: 2026-11-28T02:51:40Z, path: /nfs/ckpt/neox-20b/global_step8560, valid: true}
spares: 1
"""
    truth = {
        "fault": "ib_link_flap",
        "category": "network",
        "root_cause": "port 1 of HCA mlx5_4 on dgx-n03 (10.0.0.3) flapped (Link DOWN/ACTIVE in dmesg, LinkDownedCounter 6, "
                      "NCCL async events port error / port active); rank 20's reduce-scatter got a retry-exceeded "
                      "completion (status=12) and the job died",
        "faulty_nodes": ["dgx-n03"],
        "stage": "training",
        "iteration": last_ok + 1,
        "actions": [{"kind": "evict", "nodes": ["dgx-n03"]}, {"kind": "restart", "from_step": 8560}],
    }
    return b.write(job, truth)
