#!/usr/bin/env python3
"""Hand-made incident bundles (infrastructure, user code and data) for the diagagent eval, written into this script's
folder; evals/incidents/build.py runs it and packs each bundle. Every truth line number is computed from the text
written here."""
import json
import os
import random
import shutil
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc


# --------------------------------------------------------------------------- helpers
class F:
    """One text file built line by line; `mark` remembers a 1-based line number."""

    def __init__(self):
        self.lines = []
        self.marks = {}
        self.cut = False  # last line written without a trailing newline

    def add(self, text="", mark=None):
        for t in text.split("\n"):
            self.lines.append(t)
        if mark:
            self.marks.setdefault(mark, []).append(len(self.lines))
        return len(self.lines)

    def content(self):
        return "\n".join(self.lines) + ("" if self.cut else "\n")


class Bundle:
    def __init__(self, iid):
        self.iid = iid
        self.files = {}
        self.ind = []  # (path, mark, index)

    def f(self, path):
        if path not in self.files:
            self.files[path] = F()
        return self.files[path]

    def indicate(self, path, mark, idx=0):
        self.ind.append((path, mark, idx))

    def write(self, job_yaml, truth):
        d = os.path.join(ROOT, self.iid)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        with open(os.path.join(d, "job.yaml"), "w") as fh:
            fh.write(job_yaml.strip() + "\n")
        for p, fobj in self.files.items():
            fp = os.path.join(d, p)
            os.makedirs(os.path.dirname(fp), exist_ok=True)
            with open(fp, "w", encoding="utf-8", newline="") as fh:
                fh.write(fobj.content())
        lines = []
        for p, mark, idx in self.ind:
            lines.append({"file": p, "line": self.files[p].marks[mark][idx]})
        truth = dict(truth)
        truth["indicating_lines"] = lines
        with open(os.path.join(d, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=2)
            fh.write("\n")
        check(d, truth)


def check(d, truth):
    size = 0
    for dp, _, fns in os.walk(d):
        for fn in fns:
            size += os.path.getsize(os.path.join(dp, fn))
    print(f"== {os.path.basename(d)}  ({size/1024:.1f} KB)  fault={truth['fault']}  nodes={truth['faulty_nodes']}")
    assert size < 150 * 1024, "bundle too large"
    assert 1 <= len(truth["indicating_lines"]) <= 6
    for il in truth["indicating_lines"]:
        raw = open(os.path.join(d, il["file"]), "rb").read().decode("utf-8", "replace")
        by_nl = raw.split("\n")
        by_split = raw.splitlines()
        n = il["line"]
        text = by_nl[n - 1]
        assert text.strip(), f"empty indicating line {il}"
        if n - 1 >= len(by_split) or by_split[n - 1] != text:
            print("   !! splitlines() disagrees on", il)
        print(f"   {il['file']}:{n}: {text[:200]}")


def ts(t, fmt):
    return t.strftime(fmt)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def ms(t):
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def glog(t):  # PyTorch c10 glog prefix time: E1127 03:34:41.512367918
    return t.strftime("%m%d %H:%M:%S.") + f"{t.microsecond:06d}" + "%03d" % (t.microsecond % 997)


def nodes_yaml(nodes):
    out = []
    for h, ip, ranks in nodes:
        out.append(f"  - {{host: {h}, ip: {ip}, ranks: [{', '.join(map(str, ranks))}]}}")
    return "\n".join(out)


# =========================================================================== 1
def inc_deepspeed_host_oom():
    """DeepSpeed ZeRO-3 with CPU offload, pdsh launcher: host OOM killer on one node."""
    rng = random.Random(11)
    b = Bundle("pdsh-deepspeed-hostoom-4node")
    hosts = ["gpu-c10", "gpu-c11", "gpu-c12", "gpu-c13"]
    ips = ["10.20.0.10", "10.20.0.11", "10.20.0.12", "10.20.0.13"]
    bad = 3
    t0 = datetime(2026, 11, 27, 2, 10, 4, 218000, tzinfo=UTC)
    step_s = 2.93
    fault_step = 1731  # step in progress
    pids = {h: 48200 + 131 * i for i, h in enumerate(hosts)}
    logs = {h: b.f(f"logs/{h}/deepspeed-pdsh.log") for h in hosts}

    def L(h, text, mark=None):
        for part in text.split("\n"):
            logs[h].add(f"{h}: {part}")
        if mark:
            logs[h].marks.setdefault(mark, []).append(len(logs[h].lines))

    head = logs[hosts[0]]
    head.add(f"[{ms(t0 - timedelta(seconds=9))}] [INFO] [runner.py:463:main] Using IP address of {ips[0]} for node {hosts[0]}")
    head.add(f"[{ms(t0 - timedelta(seconds=9))}] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: {','.join(hosts)}")
    head.add(f"[{ms(t0 - timedelta(seconds=9))}] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w {','.join(hosts)} export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5; export PYTHONPATH=/home/svc-llm/src/sft; cd /home/svc-llm/src/sft; /usr/bin/python -u -m deepspeed.launcher.launch --world_info=eyJncHUtYzEwIjogWzAsIDEsIDIsIDMsIDQsIDUsIDYsIDddfQ== --node_rank=%n --master_addr={ips[0]} --master_port=29500 train.py --deepspeed ds_zero3_offload.json --model /models/llama-3-70b --seq-len 8192")
    for i, h in enumerate(hosts):
        t = t0 + timedelta(milliseconds=40 * i)
        L(h, f"[{ms(t)}] [INFO] [launch.py:146:main] WORLD INFO DICT: {{'gpu-c10': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-c11': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-c12': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-c13': [0, 1, 2, 3, 4, 5, 6, 7]}}")
        L(h, f"[{ms(t)}] [INFO] [launch.py:152:main] nnodes=4, num_local_procs=8, node_rank={i}")
        L(h, f"[{ms(t)}] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {{'gpu-c10': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-c11': [8, 9, 10, 11, 12, 13, 14, 15], 'gpu-c12': [16, 17, 18, 19, 20, 21, 22, 23], 'gpu-c13': [24, 25, 26, 27, 28, 29, 30, 31]}})")
        L(h, f"[{ms(t)}] [INFO] [launch.py:164:main] dist_world_size=32")
        L(h, f"[{ms(t)}] [INFO] [launch.py:168:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
        for lr in range(8):
            L(h, f"[{ms(t + timedelta(milliseconds=3 + lr))}] [INFO] [launch.py:256:main] process {pids[h] + lr} spawned with command: ['/usr/bin/python', '-u', 'train.py', '--local_rank={lr}', '--deepspeed', 'ds_zero3_offload.json', '--model', '/models/llama-3-70b', '--seq-len', '8192']")
    for i, h in enumerate(hosts):
        t = t0 + timedelta(seconds=14)
        for lr in range(8):
            L(h, "/usr/local/lib/python3.10/dist-packages/transformers/utils/generic.py:441: FutureWarning: `torch.utils._pytree._register_pytree_node` is deprecated. Please use `torch.utils._pytree.register_pytree_node` instead.")
            L(h, "  _torch_pytree._register_pytree_node(")
        L(h, f"[{ms(t)}] [INFO] [comm.py:637:init_distributed] cdb=None")
        if i == 0:
            L(h, f"[{ms(t)}] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl")
        for lr in range(0, 8, 3):
            pid = pids[h] + lr
            L(h, f"{h}:{pid}:{pid} [{lr}] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_3,mlx5_4,mlx5_5")
            L(h, f"{h}:{pid}:{pid} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB ; OOB bond0:{ips[i]}<0>")
            L(h, f"{h}:{pid}:{pid} [{lr}] NCCL INFO Using network IB")
    t = t0 + timedelta(seconds=95)
    L(hosts[0], f"[{ms(t)}] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.14.4, git-hash=unknown, git-branch=unknown")
    L(hosts[0], f"[{ms(t)}] [INFO] [logging.py:96:log_dist] [Rank 0] Creating ZeRO Offload")
    L(hosts[0], f"[{ms(t)}] [INFO] [stage3.py:130:__init__] Reduce bucket size 500000000")
    L(hosts[0], f"[{ms(t)}] [INFO] [stage3.py:131:__init__] Prefetch bucket size 50000000")
    L(hosts[0], f"[{ms(t + timedelta(seconds=2))}] [INFO] [utils.py:779:see_memory_usage] Stage 3 initialize beginning")
    L(hosts[0], f"[{ms(t + timedelta(seconds=2))}] [INFO] [utils.py:780:see_memory_usage] MA 4.31 GB         Max_MA 5.02 GB         CA 5.12 GB         Max_CA 5 GB ")
    L(hosts[0], f"[{ms(t + timedelta(seconds=2))}] [INFO] [utils.py:787:see_memory_usage] CPU Virtual Memory:  used = 612.44 GB, percent = 30.4%")
    for h in hosts:
        L(h, "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the existing behavior, pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.")
        L(h, "  warnings.warn(")
    L(hosts[0], f"[{ms(t + timedelta(seconds=61))}] [INFO] [utils.py:787:see_memory_usage] CPU Virtual Memory:  used = 1204.87 GB, percent = 59.8%")
    L(hosts[0], f"[{ms(t + timedelta(seconds=61))}] [INFO] [config.py:984:print_user_config]   json = {{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 4, \"bf16\": {{\"enabled\": true}}, \"zero_optimization\": {{\"stage\": 3, \"offload_optimizer\": {{\"device\": \"cpu\", \"pin_memory\": true}}, \"offload_param\": {{\"device\": \"cpu\", \"pin_memory\": true}}}}}}")
    start = t + timedelta(seconds=70)
    # rank 0 logs every 10 steps; DeepSpeed timers on rank 0
    loss = 1.92
    cur = start
    ck_at = {}
    for s in range(10, fault_step, 10):
        cur = start + timedelta(seconds=s * step_s + rng.uniform(-0.4, 0.4))
        loss = max(0.9, loss - rng.uniform(-0.004, 0.006))
        L(hosts[0], f"[{ms(cur)}] [INFO] [logging.py:96:log_dist] [Rank 0] step={s}, skipped=0, lr=[1.9999{rng.randint(10,99)}e-05], mom=[(0.9, 0.95)]")
        L(hosts[0], f"[{ms(cur)}] [INFO] [timer.py:260:stop] epoch=0/micro_step={s*4}/global_step={s}, RunningAvgSamplesPerSec={10.9 + rng.uniform(-0.05, 0.05):.6f}, CurrSamplesPerSec={10.9 + rng.uniform(-0.3, 0.3):.6f}, MemAllocated=21.47GB, MaxMemAllocated=58.{rng.randint(10,40)}GB")
        L(hosts[0], f"{{'loss': {loss:.4f}, 'grad_norm': {0.3 + rng.random()*0.2:.4f}, 'learning_rate': 1.9999e-05, 'epoch': {s/8600:.2f}}}")
        if s % 500 == 0:
            L(hosts[0], f"[{ms(cur + timedelta(seconds=1))}] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step{s} is about to be saved!")
            for h in hosts:
                L(h, f"[{ms(cur + timedelta(seconds=2))}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving /ckpt/sft-70b/checkpoint-{s}/global_step{s}/zero_pp_rank_{hosts.index(h)*8}_mp_rank_00_optim_states.pt...")
                L(h, f"[{ms(cur + timedelta(seconds=49))}] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved /ckpt/sft-70b/checkpoint-{s}/global_step{s}/zero_pp_rank_{hosts.index(h)*8}_mp_rank_00_optim_states.pt.")
            ck_at[s] = cur + timedelta(seconds=51)
            L(hosts[0], f"[{ms(cur + timedelta(seconds=51))}] [INFO] [engine.py:3536:_save_zero_checkpoint] zero checkpoint saved /ckpt/sft-70b/checkpoint-{s}/global_step{s}/zero_pp_rank_0_mp_rank_00_optim_states.pt")
            start += timedelta(seconds=52)
        if s == 820:
            L(hosts[2], f"[{ms(cur)}] [WARNING] [stage3.py:2069:step] 1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance. if this is happening frequently consider adjusting settings to reduce memory consumption. If you are unable to make the cache flushes go away consider adding get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches at the same time")
    tk = cur + timedelta(seconds=step_s * 0.6)
    victim_pid = pids[hosts[bad]] + 2
    # faulty node: launcher notices the SIGKILLed child
    hb = hosts[bad]
    L(hb, f"[{ms(tk + timedelta(seconds=1.1))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {pids[hb]}")
    for lr in [1, 3, 4, 5, 6, 7]:
        L(hb, f"[{ms(tk + timedelta(seconds=1.1))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {pids[hb] + lr}")
    L(hb, f"[{ms(tk + timedelta(seconds=1.2))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=2', '--deepspeed', 'ds_zero3_offload.json', '--model', '/models/llama-3-70b', '--seq-len', '8192'] exits with return code = -9", mark="rc9")
    # healthy nodes: cascade
    for i, h in enumerate(hosts):
        if i == bad:
            continue
        tc = tk + timedelta(seconds=2.4 + 0.1 * i)
        for lr in (0, 5):
            r = i * 8 + lr
            pid = pids[h] + lr
            L(h, f"{h}:{pid}:{pid + 811} [{lr}] NCCL INFO [Service thread] Connection closed by localRank {lr}")
            L(h, f"{h}:{pid}:{pid + 809} [{lr}] NCCL WARN NET/IB : Got completion from peer {ips[bad]}<{39875 + lr}> with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:{ips[i]} remoteGid ::ffff:{ips[bad]}")
            L(h, f"[E{glog(tc)} ProcessGroupNCCL.cpp:1515] [PG 0 Rank {r}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.20.5")
            L(h, "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
            L(h, "Last error:")
            L(h, f"NET/IB : Got completion from peer {ips[bad]}<{39875 + lr}> with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:{ips[i]} remoteGid ::ffff:{ips[bad]}")
            L(h, f"Exception raised from checkForNCCLErrorsInternal at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1723 (most recent call first):")
            L(h, "terminate called after throwing an instance of 'c10::DistBackendError'")
        L(h, f"[{ms(tc + timedelta(seconds=3))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {pids[h]}")
        L(h, f"[{ms(tc + timedelta(seconds=3))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0', '--deepspeed', 'ds_zero3_offload.json', '--model', '/models/llama-3-70b', '--seq-len', '8192'] exits with return code = -6")
    tend = tk + timedelta(seconds=9)
    head.add(f"pdsh@{hosts[0]}: {hb}: ssh exited with exit code 247")
    for h in hosts[:3]:
        head.add(f"pdsh@{hosts[0]}: {h}: ssh exited with exit code 250")

    # probes: dmesg -T on every node; OOM only on the faulty one
    boot = "Fri Nov 27"
    for i, h in enumerate(hosts):
        d = b.f(f"probes/{h}/dmesg.txt")
        base = datetime(2026, 11, 20, 7, 1, 2, tzinfo=UTC)
        for k, msg in enumerate([
            "nvidia-nvlink: Nvlink Core is being initialized, major device number 509",
            "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024",
            "nvidia-peermem nv_mem_init:  nvidia-peermem initialized",
            "mlx5_core 0000:1a:00.0 mlx5_0: Port module event: module 0, Cable plugged",
            f"bond0: (slave enp63s0f0np0): Enslaving as a backup interface with an up link",
            "mlx5_core 0000:1a:00.0: mlx5_pcie_event:301:(pid 1211): PCIe slot advertised sufficient power (75W).",
        ]):
            d.add(f"[{(base + timedelta(seconds=12 + k)).strftime('%a %b %d %H:%M:%S %Y')}] {msg}")
        if i == bad:
            tt = tk.strftime("%a %b %d %H:%M:%S %Y")
            tp = tk - timedelta(seconds=1)
            tp = tp.strftime("%a %b %d %H:%M:%S %Y")
            d.add(f"[{tp}] pt_data_worker invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0")
            d.add(f"[{tp}] CPU: 91 PID: {victim_pid + 4410} Comm: pt_data_worker Not tainted 5.15.0-119-generic #129-Ubuntu")
            d.add(f"[{tp}] Hardware name: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 04/10/2024")
            d.add(f"[{tp}] Call Trace:")
            for fr in ["<TASK>", "dump_stack_lvl+0x4a/0x63", "dump_header+0x4a/0x1f4", "oom_kill_process.cold+0xb/0x10",
                       "out_of_memory+0x106/0x2e0", "__alloc_pages_slowpath.constprop.0+0x993/0xa70", "__alloc_pages+0x30b/0x320",
                       "alloc_pages_vma+0x9d/0x380", "do_anonymous_page+0xef/0x3b0", "handle_mm_fault+0xd8/0x2c0",
                       "do_user_addr_fault+0x1c9/0x670", "exc_page_fault+0x77/0x170", "asm_exc_page_fault+0x27/0x30", "</TASK>"]:
                d.add(f"[{tp}]  {fr}")
            d.add(f"[{tp}] Mem-Info:")
            d.add(f"[{tp}] active_anon:1218400 inactive_anon:497712188 isolated_anon:0")
            d.add(f"[{tp}]  active_file:1733 inactive_file:1120 isolated_file:0")
            d.add(f"[{tp}]  unevictable:9331 dirty:0 writeback:0")
            d.add(f"[{tp}]  slab_reclaimable:95122 slab_unreclaimable:388790")
            d.add(f"[{tp}]  mapped:140022 shmem:4181229 pagetables:1021877 bounce:0")
            d.add(f"[{tp}]  free:3212590 free_pcp:1203 free_cma:0")
            d.add(f"[{tp}] Tasks state (memory values in pages):")
            d.add(f"[{tp}] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name")
            for lr in range(8):
                rss = 61200000 + rng.randint(0, 900000) if lr != 2 else 66912331
                d.add(f"[{tp}] [{pids[hb] + lr:>7}]  1001 {pids[hb] + lr:>5} {rss + 38000000:>9} {rss:>9} {rss // 120 * 8:>11}        0             0 python")
            d.add(f"[{tt}] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/user.slice/user-1001.slice/session-57.scope,task=python,pid={victim_pid},uid=1001", mark="oomk")
            d.add(f"[{tt}] Out of memory: Killed process {victim_pid} (python) total-vm:419649324kB, anon-rss:267541020kB, file-rss:108272kB, shmem-rss:0kB, UID:1001 pgtables:4461384kB oom_score_adj:0", mark="oom")
            d.add(f"[{(tk + timedelta(seconds=3)).strftime('%a %b %d %H:%M:%S %Y')}] oom_reaper: reaped process {victim_pid} (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB")
    b.indicate(f"probes/{hb}/dmesg.txt", "oom")
    b.indicate(f"probes/{hb}/dmesg.txt", "oomk")
    b.indicate(f"logs/{hb}/deepspeed-pdsh.log", "rc9")
    nodes = [(h, ips[i], list(range(8 * i, 8 * i + 8))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "ds-3391"
name: llama3-70b-sft-zero3-offload
framework: deepspeed
launcher: pdsh
status: failed
started_at: {iso(t0 - timedelta(seconds=10))}
ended_at: {iso(tend)}
exit_code: 247
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 5e91c0a, at: 2026-11-12T16:22:00Z, message: "sft: add chat template v3"}}
  - {{commit: b83f2d7, at: 2026-11-19T10:05:00Z, message: "data: dedupe by minhash"}}
checkpoints:
  - {{step: 500, at: {iso(ck_at[500] + timedelta(seconds=0*1700))}, path: /ckpt/sft-70b/checkpoint-500, valid: true}}
  - {{step: 1000, at: {iso(ck_at[1000] + timedelta(seconds=0*3270))}, path: /ckpt/sft-70b/checkpoint-1000, valid: true}}
  - {{step: 1500, at: {iso(ck_at[1500] + timedelta(seconds=0*4790))}, path: /ckpt/sft-70b/checkpoint-1500, valid: true}}
spares: 1
history: [ds-3350, ds-3377]
"""
    truth = {
        "fault": "host_oom_killed",
        "category": "infrastructure",
        "root_cause": f"the Linux OOM killer on {hb} killed local rank 2 (global rank 26, pid {victim_pid}) when host RAM ran out under ZeRO-3 CPU offload of optimizer and parameters; the launcher reported return code -9 and the other nodes' NCCL peers then failed",
        "faulty_nodes": [hb],
        "stage": "training",
        "iteration": fault_step,
        "actions": [{"kind": "restart", "from_step": 1500}],
    }
    b.write(job, truth)


# =========================================================================== 2
def inc_nemo_ckpt_quota():
    """NeMo 2 on Kubernetes (kubectl logs --timestamps): torch_dist checkpoint save hits the project quota."""
    rng = random.Random(22)
    b = Bundle("k8s-nemo-ckpt-quota-4node")
    hosts = ["k8s-gpu-021", "k8s-gpu-022", "k8s-gpu-023", "k8s-gpu-024"]
    ips = ["10.64.3.21", "10.64.3.22", "10.64.3.23", "10.64.3.24"]
    pods = [f"nemotron-15b-worker-{i}" for i in range(4)]
    t0 = datetime(2026, 11, 27, 9, 0, 3, 511000, tzinfo=UTC)
    logs = {h: b.f(f"logs/{h}/{pods[i]}.log") for i, h in enumerate(hosts)}

    last_ns = {}

    def K(h, t, text, mark=None):
        for part in text.split("\n"):
            ns = int(t.timestamp() * 1e6) * 1000 + rng.randint(100, 999)
            ns = max(ns, last_ns.get(h, 0) + rng.randint(3000, 40000))
            last_ns[h] = ns
            tt = datetime.fromtimestamp(ns // 1000000000, tz=UTC)
            logs[h].add(tt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ns % 1000000000:09d}Z {part}")
        if mark:
            logs[h].marks.setdefault(mark, []).append(len(logs[h].lines))

    for i, h in enumerate(hosts):
        t = t0 + timedelta(milliseconds=130 * i)
        K(h, t, "W1127 09:00:03.611000 1 torch/distributed/run.py:793] ")
        K(h, t, "W1127 09:00:03.611000 1 torch/distributed/run.py:793] *****************************************")
        K(h, t, "W1127 09:00:03.611000 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        K(h, t, "W1127 09:00:03.611000 1 torch/distributed/run.py:793] *****************************************")
        t = t + timedelta(seconds=21)
        K(h, t, "[NeMo W 2026-11-27 09:00:25 nemo_logging:405] /usr/local/lib/python3.10/dist-packages/pyannote/core/notebook.py:134: MatplotlibDeprecationWarning: The get_cmap function was deprecated in Matplotlib 3.7 and will be removed two minor releases later. Use ``matplotlib.colormaps[name]`` or ``matplotlib.colormaps.get_cmap(obj)`` or ``pyplot.get_cmap(obj)`` instead.")
        K(h, t, "      cm = get_cmap(\"Set1\")")
        K(h, t, "    ")
        for lr in range(8):
            r = i * 8 + lr
            K(h, t + timedelta(milliseconds=lr * 9), f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/32")
        if i == 0:
            K(h, t + timedelta(seconds=1), "----------------------------------------------------------------------------------------------------")
            K(h, t + timedelta(seconds=1), "distributed_backend=nccl")
            K(h, t + timedelta(seconds=1), "All distributed processes registered. Starting with 32 processes")
            K(h, t + timedelta(seconds=1), "----------------------------------------------------------------------------------------------------")
            K(h, t + timedelta(seconds=1), "")
        K(h, t + timedelta(seconds=2), f"[NeMo I 2026-11-27 09:00:27 nemo_logging:393] Rank {i*8} has data parallel group : {[(i*8) % 4 + 4*k for k in range(8)]}")
        K(h, t + timedelta(seconds=2), "[NeMo I 2026-11-27 09:00:27 nemo_logging:393] All tensor model parallel group ranks: [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23], [24, 25, 26, 27], [28, 29, 30, 31]]")
        K(h, t + timedelta(seconds=3), f"{pods[i]}:{80 + i}:{80 + i} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE [RO]; OOB eth0:{ips[i]}<0>")
    h0 = hosts[0]
    t = t0 + timedelta(seconds=40)
    K(h0, t, "[NeMo I 2026-11-27 09:00:43 nemo_logging:393] Padded vocab_size: 256000, original vocab_size: 256000, dummy tokens: 0.")
    K(h0, t, "[NeMo W 2026-11-27 09:00:43 nemo_logging:405] Recommend using CUDA_DEVICE_MAX_CONNECTIONS=1 for best performance                         but get None")
    K(h0, t, "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
    K(h0, t, "[NeMo I 2026-11-27 09:00:44 nemo_logging:393] Copying Trainer's 'max_steps' (100000) to LR scheduler's 'max_steps'.")
    K(h0, t, "[NeMo I 2026-11-27 09:00:44 nemo_logging:393]  > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 3927552000")
    K(h0, t + timedelta(seconds=80), "[NeMo I 2026-11-27 09:02:04 nemo_logging:393] Restoring states from checkpoint /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.3012-step=3999-consumed_samples=2048000.0")
    K(h0, t + timedelta(seconds=80), "Restored all states from the checkpoint at /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.3012-step=3999-consumed_samples=2048000.0")
    step_s = 4.31
    tt = t + timedelta(seconds=95)
    loss = 2.298
    for s in range(4000, 5000):
        tt = tt + timedelta(seconds=step_s + rng.uniform(-0.05, 0.05))
        loss = loss - rng.uniform(-0.012, 0.0125)
        if s % 10 == 0 or s == 4999:
            K(h0, tt, f"Training epoch 0, iteration {s}/99999 | lr: {2.997e-4 - s*1e-9:.4e} | global_batch_size: 512 | global_step: {s} | reduced_train_loss: {loss:.4f} | train_step_timing in s: {step_s + rng.uniform(-0.04, 0.04):.2f} | consumed_samples: {(s + 1) * 512}")
        if s == 4499:
            K(h0, tt + timedelta(seconds=1), f"[NeMo I 2026-11-27 {(tt + timedelta(seconds=1)).strftime('%H:%M:%S')} nemo_logging:393] Global Checkpoint Save : Rank: 0 : Iteration: 4499 : Start time: {tt.timestamp():.3f}s : Save duration: 46.812s")
            for h in hosts:
                K(h, tt + timedelta(seconds=47), f"[NeMo I 2026-11-27 {(tt + timedelta(seconds=47)).strftime('%H:%M:%S')} nemo_logging:393] Successfully saved checkpoint from iteration    4500 to /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.2750-step=4499-consumed_samples=2304000.0")
            tt += timedelta(seconds=47)
        if s == 4731:
            K(hosts[2], tt, f"[NeMo W 2026-11-27 {tt.strftime('%H:%M:%S')} nemo_logging:405] /opt/megatron-lm/megatron/core/tensor_parallel/layers.py:609: UserWarning: async_grad_allreduce is deprecated, not in use anymore and will be removed in Megatron Core v0.10.0. Please use allreduce_dgrad instead.")
    # save at step 5000 (global_step 4999 -> checkpoint named step=4999) fails on every rank
    tf = tt + timedelta(seconds=2)
    K(h0, tf, f"[NeMo I 2026-11-27 {tf.strftime('%H:%M:%S')} nemo_logging:393] Saving checkpoint to /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.2617-step=4999-consumed_samples=2560000.0-unfinished")
    te = tf + timedelta(seconds=38)
    for i, h in enumerate(hosts):
        lr0 = i * 8
        p = f"[rank{lr0}]: "
        K(h, te, f"{p}Traceback (most recent call last):")
        frames = [
            ("/opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py", 42, "main", "trainer.fit(model)"),
            ("/usr/local/lib/python3.10/dist-packages/lightning/pytorch/trainer/trainer.py", 538, "fit", "call._call_and_handle_interrupt("),
            ("/usr/local/lib/python3.10/dist-packages/lightning/pytorch/loops/training_epoch_loop.py", 277, "advance", "call._call_callback_hooks(trainer, \"on_train_batch_end\", batch_output, batch, batch_idx)"),
            ("/usr/local/lib/python3.10/dist-packages/lightning/pytorch/callbacks/model_checkpoint.py", 303, "on_train_batch_end", "self._save_topk_checkpoint(trainer, monitor_candidates)"),
            ("/opt/NeMo/nemo/utils/callbacks/nemo_model_checkpoint.py", 560, "_save_checkpoint", "super()._save_checkpoint(trainer, filepath)"),
            ("/opt/NeMo/nemo/utils/callbacks/dist_ckpt_io.py", 161, "save_checkpoint", "dist_checkpointing.save("),
            ("/opt/megatron-lm/megatron/core/dist_checkpointing/serialization.py", 394, "save", "sharded_strategy.save(sharded_state_dict, checkpoint_dir)"),
            ("/opt/megatron-lm/megatron/core/dist_checkpointing/strategies/torch.py", 630, "save", "save_state_dict_async_finalize(*save_state_dict_ret)"),
            ("/opt/megatron-lm/megatron/core/dist_checkpointing/strategies/state_dict_saver.py", 127, "save_state_dict_async_finalize", "raise CheckpointException(\"write\", node_failures)"),
        ]
        for fn, ln, fu, src in frames:
            K(h, te, f'{p}  File "{fn}", line {ln}, in {fu}')
            K(h, te, f"{p}    {src}")
        ranks = ", ".join(str(k) for k in range(32))
        K(h, te, f"{p}torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([{ranks}])", mark="cpe")
        for rr in (0, 1) if i == 0 else (lr0,):
            K(h, te, f"{p}Traceback (most recent call last): (RANK {rr})")
            K(h, te, f'{p}  File "/opt/megatron-lm/megatron/core/dist_checkpointing/strategies/filesystem_async.py", line 226, in write_preloaded_data')
            K(h, te, f"{p}    stream.write(data)")
            K(h, te, f"{p}OSError: [Errno 122] Disk quota exceeded", mark="quota")
        K(h, te, "")
        K(h, te + timedelta(seconds=6), f"E1127 {(te + timedelta(seconds=6)).strftime('%H:%M:%S')}.418000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: {212 + i}) of binary: /usr/bin/python")
        K(h, te + timedelta(seconds=6), "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
        K(h, te + timedelta(seconds=6), "============================================================")
        K(h, te + timedelta(seconds=6), "/opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py FAILED")
        K(h, te + timedelta(seconds=6), "------------------------------------------------------------")
        K(h, te + timedelta(seconds=6), "Root Cause (first observed failure):")
        K(h, te + timedelta(seconds=6), "[0]:")
        K(h, te + timedelta(seconds=6), f"  time      : {(te + timedelta(seconds=5)).strftime('%Y-%m-%d_%H:%M:%S')}")
        K(h, te + timedelta(seconds=6), f"  host      : {pods[i]}")
        K(h, te + timedelta(seconds=6), f"  rank      : {lr0} (local_rank: 0)")
        K(h, te + timedelta(seconds=6), f"  exitcode  : 1 (pid: {212 + i})")
        K(h, te + timedelta(seconds=6), "  error_file: <N/A>")
        K(h, te + timedelta(seconds=6), "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        K(h, te + timedelta(seconds=6), "============================================================")
    b.indicate(f"logs/{h0}/{pods[0]}.log", "quota", 0)
    b.indicate(f"logs/{h0}/{pods[0]}.log", "cpe", 0)
    b.indicate(f"logs/{hosts[2]}/{pods[2]}.log", "quota", 0)
    # events (kubectl get events) for the job
    ev = b.f(f"logs/{h0}/events.txt")
    ev.add("LAST SEEN   TYPE      REASON             OBJECT                           MESSAGE")
    ev.add("58m         Normal    Scheduled          pod/nemotron-15b-worker-0        Successfully assigned llm-train/nemotron-15b-worker-0 to k8s-gpu-021")
    ev.add("58m         Normal    Pulled             pod/nemotron-15b-worker-0        Container image \"nvcr.io/nvidia/nemo:24.07\" already present on machine")
    ev.add("58m         Normal    Started            pod/nemotron-15b-worker-0        Started container pytorch")
    ev.add("41m         Warning   FailedMount        pod/nemotron-15b-worker-3        MountVolume.SetUp failed for volume \"dshm\" : rpc error: code = DeadlineExceeded desc = context deadline exceeded")
    ev.add("40m         Normal    Started            pod/nemotron-15b-worker-3        Started container pytorch")
    ev.add("2m          Normal    ExitedWithCode     pytorchjob/nemotron-15b          PyTorchJob nemotron-15b is failed because 4 Worker replica(s) failed.")
    # a quota probe
    q = b.f(f"probes/{h0}/lfs-quota.json")
    q.add(json.dumps({"probe": "lfs quota -h -p 4102 /mnt/ckpt", "status": "fail",
                      "detail": "Disk quotas for prj 4102 (pid 4102):\n     Filesystem    used   quota   limit   grace   files   quota   limit   grace\n      /mnt/ckpt  40.01T*    40T     40T       -  118210       0       0       -",
                      "metrics": {"used_tb": 40.01, "limit_tb": 40}}, indent=2))
    nodes = [(h, ips[i], list(range(8 * i, 8 * i + 8))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "nemotron-15b-r7"
name: nemotron-15b-pretrain
framework: nemo
scheduler: kubernetes (kubeflow PyTorchJob)
status: failed
started_at: {iso(t0)}
ended_at: {iso(te + timedelta(seconds=7))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 4, pp: 1, dp: 8, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: a1d09f3, at: 2026-11-02T12:00:00Z, message: "cfg: 15b, seq 4096"}}
  - {{commit: 7c2e6b1, at: 2026-11-16T09:30:00Z, message: "data: add code blend"}}
checkpoints:
  - {{step: 3500, at: 2026-11-27T07:41:00Z, path: /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.3391-step=3499-consumed_samples=1792000.0, valid: true}}
  - {{step: 4000, at: 2026-11-27T08:18:00Z, path: /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.3012-step=3999-consumed_samples=2048000.0, valid: true}}
  - {{step: 4500, at: {iso(t0 + timedelta(seconds=2330))}, path: /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.2750-step=4499-consumed_samples=2304000.0, valid: true}}
  - {{step: 5000, at: {iso(tf)}, path: /mnt/ckpt/nemotron-15b/checkpoints/model_name--val_loss=2.2617-step=4999-consumed_samples=2560000.0-unfinished, valid: false}}
spares: 0
"""
    truth = {
        "fault": "storage_checkpoint_write_failure",
        "category": "infrastructure",
        "root_cause": "the distributed checkpoint of step 5000 could not be written: the shared checkpoint volume /mnt/ckpt hit its project quota (OSError: [Errno 122] Disk quota exceeded) on every rank's writer, so the save raised CheckpointException and all four pods failed; the step-5000 checkpoint is incomplete",
        "faulty_nodes": [],
        "stage": "checkpoint",
        "iteration": 5000,
        "actions": [{"kind": "restart", "from_step": 4500}],
    }
    b.write(job, truth)


# =========================================================================== 3
def inc_megatron_cuda_oom_commit():
    """Megatron-LM under srun -l (task-id prefix, no timestamps on most lines): every rank OOMs after a new commit."""
    rng = random.Random(33)
    b = Bundle("srun-megatron-cudaoom-newcommit-4node")
    hosts = ["hgx-e01", "hgx-e02", "hgx-e03", "hgx-e04"]
    ips = ["10.31.8.1", "10.31.8.2", "10.31.8.3", "10.31.8.4"]
    jid = 884213
    logs = {h: b.f(f"logs/{h}/slurm-{jid}-{h}.out") for h in hosts}
    t0 = datetime(2026, 11, 27, 6, 2, 40, tzinfo=UTC)

    def S(r, text, mark=None):
        h = hosts[r // 8]
        for part in text.split("\n"):
            logs[h].add(f"{r}: {part}")
        if mark:
            logs[h].marks.setdefault(mark, []).append(len(logs[h].lines))

    S(0, "using world size: 32, data-parallel size: 4, context-parallel size: 1, tensor-model-parallel size: 4, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 2, encoder-pipeline-model-parallel size: 0")
    S(0, "WARNING: Setting args.overlap_p2p_comm and args.align_param_gather to False since non-interleaved schedule does not support overlapping p2p communication and aligned param AG")
    S(0, "using torch.bfloat16 for parameters ...")
    S(0, "------------------------ arguments ------------------------")
    for k, v in [("global_batch_size", "1024"), ("hidden_size", "8192"), ("load", "/lustre/ckpt/gpt-39b"),
                 ("micro_batch_size", "2"), ("num_layers", "48"), ("num_attention_heads", "64"),
                 ("pipeline_model_parallel_size", "2"), ("recompute_granularity", "None"), ("recompute_method", "None"),
                 ("save_interval", "500"), ("seq_length", "8192"), ("sequence_parallel", "True"),
                 ("tensor_model_parallel_size", "4"), ("use_distributed_optimizer", "True"), ("vocab_size", "128256")]:
        S(0, f"  {k} {'.' * (48 - len(k))} {v}")
    S(0, "-------------------- end of arguments ---------------------")
    S(0, "setting number of micro-batches to constant 128")
    S(0, "> building HuggingFaceTokenizer tokenizer ...")
    S(0, "> initializing torch distributed ...")
    S(0, "> initialized tensor model parallel with size 4")
    S(0, "> initialized pipeline model parallel with size 2")
    S(0, "> setting random seeds to 1234 ...")
    S(0, "> compiling dataset index builder ...")
    S(0, ">>> done with dataset index builder. Compilation time: 0.093 seconds")
    S(0, "time to initialize megatron (seconds): 38.412")
    S(0, "[after megatron is initialized] datetime: 2026-11-27 06:03:21 ")
    S(0, "building GPT model ...")
    for r in range(32):
        if r % 4 == 0 and (r // 4) % 4 == 0:
            S(r, f" > number of parameters on (tensor, pipeline) model parallel rank (0, {r // 16}): {4881203200 if r < 16 else 4880941056}")
    for r in range(32):
        h = hosts[r // 8]
        pid = 70100 + r * 7
        if r % 8 in (0, 4):
            S(r, f"{h}:{pid}:{pid} [{r % 8}] NCCL INFO Bootstrap : Using bond0:{ips[r // 8]}<0>")
            S(r, f"{h}:{pid}:{pid} [{r % 8}] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)")
            S(r, f"{h}:{pid}:{pid} [{r % 8}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB ; OOB bond0:{ips[r // 8]}<0>")
        S(r, "/usr/local/lib/python3.10/dist-packages/transformer_engine/pytorch/cpu_offload.py:595: DeprecationWarning: Offloading weights is deprecated. Using offload_weights=True does not have any effect.")
        S(r, "  warnings.warn(")
    S(0, "INFO:megatron.core.distributed.distributed_data_parallel:Setting up DistributedDataParallel with config DistributedDataParallelConfig(grad_reduce_in_fp32=True, overlap_grad_reduce=True, overlap_param_gather=False, align_param_gather=False, use_distributed_optimizer=True, check_for_nan_in_grad=True, bucket_size=40000000, average_in_collective=False, fp8_param_gather=False)")
    S(0, "INFO:megatron.core.optimizer:Setting up optimizer with config OptimizerConfig(optimizer='adam', lr=0.00015, min_lr=1.5e-05, decoupled_lr=None, decoupled_min_lr=None, weight_decay=0.1, fp16=False, bf16=True, params_dtype=torch.bfloat16, loss_scale=None, initial_loss_scale=4294967296, min_loss_scale=1.0, loss_scale_window=1000, hysteresis=2, adam_beta1=0.9, adam_beta2=0.95, adam_eps=1e-08, sgd_momentum=0.9, use_distributed_optimizer=True, overlap_grad_reduce=True, overlap_param_gather=False, clip_grad=1.0, log_num_zeros_in_grad=False, barrier_with_L1_time=True, timers=<megatron.core.timers.Timers object at 0x7f5e2c3a1b40>)")
    S(0, " loading distributed checkpoint from /lustre/ckpt/gpt-39b at iteration 20000")
    S(0, " successfully loaded checkpoint from /lustre/ckpt/gpt-39b [ t 0, p 0 ] at iteration 20000")
    S(0, "(min, max) time across ranks (ms):")
    S(0, "    load-checkpoint ................................: (51231.17, 51240.52)")
    S(0, "[after model, optimizer, and learning rate scheduler are built] datetime: 2026-11-27 06:04:19 ")
    S(0, "> building train, validation, and test datasets ...")
    S(0, " > datasets target sizes (minimum size):")
    S(0, "    train:      51200000")
    S(0, "    validation: 10250240")
    S(0, "    test:       10240")
    S(0, "INFO:megatron.core.datasets.blended_megatron_dataset_config:Let split_matrix = [(0, 0.99), (0.99, 0.999), (0.999, 1.0)]")
    S(0, "INFO:megatron.core.datasets.blended_megatron_dataset_builder:Building dataset splits with cls=GPTDataset, sizes=(51200000, 10250240, 10240), and config=GPTDatasetConfig(...)")
    S(0, "> finished creating GPT datasets ...")
    S(0, "[after dataloaders are built] datetime: 2026-11-27 06:05:02 ")
    S(0, "done with setup ...")
    S(0, "(min, max) time across ranks (ms):")
    S(0, "    model-and-optimizer-setup ......................: (57912.40, 57933.81)")
    S(0, "    train/valid/test-data-iterators-setup ..........: (42311.09, 42602.77)")
    S(0, "training ...")
    S(0, "[before the start of training step] datetime: 2026-11-27 06:05:03 ")
    S(8, "/usr/local/lib/python3.10/dist-packages/torch/autograd/graph.py:825: UserWarning: c10d::broadcast_: an autograd kernel was not registered to the Autograd key(s) but we are trying to backprop through it. This may lead to silently incorrect behavior. This behavior is deprecated and will be removed in a future version of PyTorch. If your operator is differentiable, please ensure you have registered an autograd kernel to the correct Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or to squelch this warning and use the previous behavior, please register torch::CppFunction::makeFallthrough() to DispatchKey::Autograd. (Triggered internally at /opt/pytorch/pytorch/torch/csrc/autograd/autograd_not_implemented_fallback.cpp:63.)")
    S(8, "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")
    order = list(range(32))
    rng.shuffle(order)
    M = "/workspace/megatron-lm"
    for r in order:
        stage = r // 16
        tp = r % 4
        free = rng.uniform(0.4, 2.9)
        use = 79.1 - free
        alloc = use - rng.uniform(2.0, 5.5)
        res = use - alloc - 0.55
        S(r, "Traceback (most recent call last):")
        S(r, f'  File "{M}/pretrain_gpt.py", line 278, in <module>')
        S(r, "    pretrain(")
        S(r, f'  File "{M}/megatron/training/training.py", line 347, in pretrain')
        S(r, "    iteration, num_floating_point_operations_so_far = train(")
        S(r, f'  File "{M}/megatron/training/training.py", line 1277, in train')
        S(r, "    train_step(forward_step_func,")
        S(r, f'  File "{M}/megatron/training/training.py", line 718, in train_step')
        S(r, "    losses_reduced = forward_backward_func(")
        S(r, f'  File "{M}/megatron/core/pipeline_parallel/schedules.py", line 1333, in forward_backward_pipelining_without_interleaving')
        S(r, "    output_tensor, num_tokens = forward_step(")
        S(r, f'  File "{M}/megatron/core/pipeline_parallel/schedules.py", line 275, in forward_step')
        S(r, "    output_tensor, loss_func = forward_step_func(data_iterator, model)")
        if stage == 0:
            S(r, f'  File "{M}/megatron/core/transformer/transformer_block.py", line 493, in forward')
            S(r, "    hidden_states, context = layer(")
            S(r, f'  File "{M}/megatron/core/transformer/mlp.py", line 120, in forward')
            S(r, "    intermediate_parallel = self.activation_func(intermediate_parallel)")
            S(r, f'  File "{M}/megatron/core/fusions/fused_bias_swiglu.py", line 17, in swiglu')
            S(r, "    return F.silu(y_1) * y_2")
            want = "1.75 GiB"
        else:
            S(r, f'  File "{M}/megatron/core/models/gpt/gpt_model.py", line 269, in forward')
            S(r, "    loss = self.compute_language_model_loss(labels, logits)")
            S(r, f'  File "{M}/megatron/core/tensor_parallel/cross_entropy.py", line 143, in forward')
            S(r, "    exp_logits = torch.exp(vocab_parallel_logits)")
            want = "3.91 GiB"
        S(r, f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {want}. GPU {r % 8} has a total capacity of 79.10 GiB of which {free:.2f} GiB is free. Including non-PyTorch memory, this process has {use:.2f} GiB memory in use. Of the allocated memory {alloc:.2f} GiB is allocated by PyTorch, and {res:.2f} GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)", mark=f"oom{r}")
    tend = datetime(2026, 11, 27, 6, 5, 41, tzinfo=UTC)
    f0 = logs[hosts[0]]
    for i, h in enumerate(hosts):
        f0.add(f"srun: error: {h}: tasks {8*i}-{8*i+7}: Exited with exit code 1")
    b.indicate(f"logs/{hosts[0]}/slurm-{jid}-{hosts[0]}.out", "oom0")
    b.indicate(f"logs/{hosts[2]}/slurm-{jid}-{hosts[2]}.out", "oom16")
    b.indicate(f"logs/{hosts[3]}/slurm-{jid}-{hosts[3]}.out", "oom29")
    nodes = [(h, ips[i], list(range(8 * i, 8 * i + 8))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "{jid}"
name: gpt-39b-continued-pretrain
framework: megatron
scheduler: slurm
status: failed
started_at: {iso(t0)}
ended_at: {iso(tend)}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 4, pp: 2, dp: 4, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 3b7f1e2, at: 2026-11-10T11:20:00Z, message: "ckpt: async torch_dist save"}}
  - {{commit: e04a9c5, at: 2026-11-26T18:12:00Z, message: "perf: drop --recompute-granularity selective from the launch defaults (12% faster on H100)"}}
last_successful_run: {{job: "883950", ended_at: 2026-11-26T14:03:00Z, commit: 3b7f1e2}}
history: ["883950"]
checkpoints:
  - {{step: 19000, at: 2026-11-26T09:12:00Z, path: /lustre/ckpt/gpt-39b/iter_0019000, valid: true}}
  - {{step: 19500, at: 2026-11-26T11:40:00Z, path: /lustre/ckpt/gpt-39b/iter_0019500, valid: true}}
  - {{step: 20000, at: 2026-11-26T14:01:00Z, path: /lustre/ckpt/gpt-39b/iter_0020000, valid: true}}
spares: 2
"""
    truth = {
        "fault": "cuda_oom",
        "category": "user_code",
        "root_cause": "commit e04a9c5 removed selective activation recompute from the launch defaults (recompute_granularity None); on resume from iteration 20000 every rank on every node ran out of GPU memory in its first training step (MLP activations on pipeline stage 0, the fp32 vocab-parallel cross-entropy on stage 1)",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": 20001,
        "actions": [{"kind": "rollback", "to_commit": "3b7f1e2"}],
    }
    b.write(job, truth)


# =========================================================================== 4
def inc_accelerate_keyerror_journald():
    """HF accelerate run as a systemd unit; journald lines; KeyError on every rank after a new commit."""
    rng = random.Random(44)
    b = Bundle("journald-accelerate-keyerror-2node")
    hosts = ["a100-n01", "a100-n02"]
    ips = ["172.16.40.11", "172.16.40.12"]
    apid = {hosts[0]: 23145, hosts[1]: 18802}
    logs = {h: b.f(f"logs/{h}/journal-finetune.log") for h in hosts}
    t0 = datetime(2026, 11, 27, 8, 31, 10, tzinfo=UTC)

    def J(h, t, text, ident=None, mark=None):
        ident = ident or f"accelerate[{apid[h]}]"
        for part in text.split("\n"):
            logs[h].add(f"{t.strftime('%b %d %H:%M:%S')} {h} {ident}: {part}")
        if mark:
            logs[h].marks.setdefault(mark, []).append(len(logs[h].lines))

    for i, h in enumerate(hosts):
        t = t0 + timedelta(seconds=i)
        J(h, t, "Started finetune.service - Mistral-7B domain SFT (accelerate, FSDP).", ident="systemd[1]")
        J(h, t + timedelta(seconds=3), "The following values were not passed to `accelerate launch` and had defaults used instead:")
        J(h, t + timedelta(seconds=3), "        `--dynamo_backend` was set to a value of `'no'`")
        J(h, t + timedelta(seconds=3), "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.")
        J(h, t + timedelta(seconds=4), f"W1127 {t.strftime('%H:%M:%S')}.204000 {apid[h]} torch/distributed/run.py:793] ")
        J(h, t + timedelta(seconds=4), f"W1127 {t.strftime('%H:%M:%S')}.204000 {apid[h]} torch/distributed/run.py:793] *****************************************")
        J(h, t + timedelta(seconds=4), f"W1127 {t.strftime('%H:%M:%S')}.204000 {apid[h]} torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        J(h, t + timedelta(seconds=4), f"W1127 {t.strftime('%H:%M:%S')}.204000 {apid[h]} torch/distributed/run.py:793] *****************************************")
        for lr in range(4):
            J(h, t + timedelta(seconds=12), "/usr/local/lib/python3.11/site-packages/transformers/training_args.py:1545: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead")
        if i == 1:
            J(h, t + timedelta(seconds=14), "'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: 5b1f6a0e-2d8c-4f71-9e55-0c9a71d3b2e4)')' thrown while requesting HEAD https://huggingface.co/mistralai/Mistral-7B-v0.3/resolve/main/config.json")
            J(h, t + timedelta(seconds=14), "Retrying in 1s [Retry 1/5].")
        for lr in (0,):
            pid = apid[h] + 14 + lr
            J(h, t + timedelta(seconds=20), f"{h}:{pid}:{pid} [{lr}] NCCL INFO Bootstrap : Using ens1f0np0:{ips[i]}<0>")
            J(h, t + timedelta(seconds=20), f"{h}:{pid}:{pid} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB ens1f0np0:{ips[i]}<0>")
    h0 = hosts[0]
    t = t0 + timedelta(seconds=31)
    J(h0, t, "Distributed environment: FSDP  Backend: nccl")
    J(h0, t, "Num processes: 8")
    J(h0, t, "Process index: 0")
    J(h0, t, "Local process index: 0")
    J(h0, t, "Device: cuda:0")
    J(h0, t, "")
    J(h0, t, "Mixed precision type: bf16")
    J(h0, t + timedelta(seconds=40), "loaded 412,880 stage-1 examples from /data/sft/domain-v4/stage1 (padded to 4096)")
    J(h0, t + timedelta(seconds=40), "total optimization steps = 3000, warmup = 200, per-device batch = 4, grad accum = 2")
    step_s = 2.61
    cur = t + timedelta(seconds=44)
    loss = 1.88
    for s in range(10, 501, 10):
        cur = cur + timedelta(seconds=10 * step_s + rng.uniform(-0.3, 0.3))
        loss = max(0.7, loss - rng.uniform(-0.01, 0.03))
        lr_ = 2e-5 * min(1, s / 200)
        J(h0, cur, f"step {s}/3000 | loss {loss:.4f} | lr {lr_:.2e} | {step_s + rng.uniform(-0.05, 0.05):.2f} s/it | tokens/s {int(8*8*4096/step_s + rng.uniform(-400, 400))}")
        if s == 250:
            J(h0, cur + timedelta(seconds=1), "saving checkpoint to /data/ckpt/mistral-domain-sft/step_250")
            J(h0, cur + timedelta(seconds=1), "/usr/local/lib/python3.11/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:690: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict(), which can support different parallelisms, FSDP1, FSDP2, DDP. API doc: https://pytorch.org/docs/stable/distributed.checkpoint.html#torch.distributed.checkpoint.state_dict.get_state_dict .Tutorial: https://pytorch.org/tutorials/recipes/distributed_checkpoint_recipe.html .")
            J(h0, cur + timedelta(seconds=1), "  warnings.warn(")
            cur += timedelta(seconds=38)
            J(h0, cur, "checkpoint saved in 37.6s")
    J(h0, cur + timedelta(seconds=1), "saving checkpoint to /data/ckpt/mistral-domain-sft/step_500")
    cur += timedelta(seconds=39)
    J(h0, cur, "checkpoint saved in 38.1s")
    J(h0, cur, "curriculum: entering stage 2 at step 500 -> /data/sft/domain-v4/stage2-packed (packed to 8192 tokens)")
    tf = cur + timedelta(seconds=6)
    for r in [0, 5, 1, 4, 2, 6, 3, 7]:
        h = hosts[r // 4]
        p = f"[rank{r}]:"
        J(h, tf, f"{p} Traceback (most recent call last):")
        J(h, tf, f'{p}   File "/srv/sft/train.py", line 226, in <module>')
        J(h, tf, f"{p}     main()")
        J(h, tf, f'{p}   File "/srv/sft/train.py", line 183, in main')
        J(h, tf, f"{p}     loss = compute_loss(model, batch, accelerator)")
        J(h, tf, f"{p}            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^")
        J(h, tf, f'{p}   File "/srv/sft/sft/loss.py", line 41, in compute_loss')
        J(h, tf, f'{p}     attention_mask=batch["attention_mask"],')
        J(h, tf, f"{p}                    ~~~~~^^^^^^^^^^^^^^^^^^")
        J(h, tf, f'{p}   File "/usr/local/lib/python3.11/site-packages/transformers/tokenization_utils_base.py", line 255, in __getitem__')
        J(h, tf, f"{p}     return self.data[item]")
        J(h, tf, f"{p}            ~~~~~~~~~^^^^^^")
        J(h, tf, f"{p} KeyError: 'attention_mask'", mark=f"ke{r}")
    for i, h in enumerate(hosts):
        tt = tf + timedelta(seconds=2)
        base = apid[h] + 14
        for lr in (1, 2, 3):
            J(h, tt, f"W1127 {tt.strftime('%H:%M:%S')}.553000 {apid[h]} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {base + lr} closing signal SIGTERM")
        J(h, tt + timedelta(seconds=1), f"E1127 {tt.strftime('%H:%M:%S')}.902000 {apid[h]} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: {base}) of binary: /usr/bin/python3.11")
        J(h, tt + timedelta(seconds=1), "Traceback (most recent call last):")
        J(h, tt + timedelta(seconds=1), '  File "/usr/local/bin/accelerate", line 8, in <module>')
        J(h, tt + timedelta(seconds=1), "    sys.exit(main())")
        J(h, tt + timedelta(seconds=1), '  File "/usr/local/lib/python3.11/site-packages/accelerate/commands/launch.py", line 1159, in launch_command')
        J(h, tt + timedelta(seconds=1), "    multi_gpu_launcher(args)")
        J(h, tt + timedelta(seconds=1), '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 260, in launch_agent')
        J(h, tt + timedelta(seconds=1), "    raise ChildFailedError(")
        J(h, tt + timedelta(seconds=1), "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
        J(h, tt + timedelta(seconds=1), "============================================================")
        J(h, tt + timedelta(seconds=1), "/srv/sft/train.py FAILED")
        J(h, tt + timedelta(seconds=1), "------------------------------------------------------------")
        J(h, tt + timedelta(seconds=1), "Failures:")
        J(h, tt + timedelta(seconds=1), "  <NO_OTHER_FAILURES>")
        J(h, tt + timedelta(seconds=1), "------------------------------------------------------------")
        J(h, tt + timedelta(seconds=1), "Root Cause (first observed failure):")
        J(h, tt + timedelta(seconds=1), "[0]:")
        J(h, tt + timedelta(seconds=1), f"  time      : {tt.strftime('%Y-%m-%d_%H:%M:%S')}")
        J(h, tt + timedelta(seconds=1), f"  host      : {h}")
        J(h, tt + timedelta(seconds=1), f"  rank      : {4 * i} (local_rank: 0)")
        J(h, tt + timedelta(seconds=1), f"  exitcode  : 1 (pid: {base})")
        J(h, tt + timedelta(seconds=1), "  error_file: <N/A>")
        J(h, tt + timedelta(seconds=1), "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        J(h, tt + timedelta(seconds=1), "============================================================")
        J(h, tt + timedelta(seconds=2), "finetune.service: Main process exited, code=exited, status=1/FAILURE", ident="systemd[1]")
        J(h, tt + timedelta(seconds=2), "finetune.service: Failed with result 'exit-code'.", ident="systemd[1]")
        J(h, tt + timedelta(seconds=2), "finetune.service: Consumed 2h 4min 51.337s CPU time.", ident="systemd[1]")
    b.indicate(f"logs/{hosts[0]}/journal-finetune.log", "ke0")
    b.indicate(f"logs/{hosts[1]}/journal-finetune.log", "ke5")
    nodes = [(h, ips[i], list(range(4 * i, 4 * i + 4))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "sft-20261127-0831"
name: mistral-7b-domain-sft
framework: other
launcher: accelerate launch (FSDP) under systemd
status: failed
started_at: {iso(t0)}
ended_at: {iso(tf + timedelta(seconds=5))}
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 41aa0de, at: 2026-11-21T15:02:00Z, message: "sft: warmup 200 steps"}}
  - {{commit: c9d3e12, at: 2026-11-26T21:40:00Z, message: "data: stage-2 packed mixture, collator emits position_ids instead of padding masks"}}
last_successful_run: {{job: "sft-20261126-0910", ended_at: 2026-11-26T19:02:00Z, commit: 41aa0de}}
history: ["sft-20261126-0910"]
checkpoints:
  - {{step: 250, at: {iso(t0 + timedelta(seconds=760))}, path: /data/ckpt/mistral-domain-sft/step_250, valid: true}}
  - {{step: 500, at: {iso(cur)}, path: /data/ckpt/mistral-domain-sft/step_500, valid: true}}
spares: 0
"""
    truth = {
        "fault": "user_code_exception",
        "category": "user_code",
        "root_cause": "commit c9d3e12 made the stage-2 packed collator emit position_ids without attention_mask, while compute_loss still reads batch['attention_mask']; when the curriculum switched to stage 2 after step 500 every rank raised KeyError: 'attention_mask'",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": 501,
        "actions": [{"kind": "rollback", "to_commit": "41aa0de"}],
    }
    b.write(job, truth)


# =========================================================================== 5
def inc_torchtitan_nan():
    """torchtitan (torchrun --local-ranks-filter 0 on each node): loss diverges to NaN."""
    rng = random.Random(55)
    b = Bundle("torchtitan-nan-divergence-4node")
    hosts = ["titan-n01", "titan-n02", "titan-n03", "titan-n04"]
    ips = ["10.70.1.1", "10.70.1.2", "10.70.1.3", "10.70.1.4"]
    jid = 5512
    logs = {h: b.f(f"logs/{h}/torchrun-{jid}.log") for h in hosts}
    t0 = datetime(2026, 11, 27, 1, 14, 2, 77000, tzinfo=UTC)

    def T(i, t, text, mark=None):
        r = 8 * i
        logs[hosts[i]].add(f"[rank{r}]:[titan] {ms(t)} - root - {text}")
        if mark:
            logs[hosts[i]].marks.setdefault(mark, []).append(len(logs[hosts[i]].lines))

    for i, h in enumerate(hosts):
        f = logs[h]
        t = t0 + timedelta(milliseconds=70 * i)
        f.add(f"W1127 {t.strftime('%H:%M:%S')}.311000 {3301 + i} torch/distributed/run.py:793] ")
        f.add(f"W1127 {t.strftime('%H:%M:%S')}.311000 {3301 + i} torch/distributed/run.py:793] *****************************************")
        f.add(f"W1127 {t.strftime('%H:%M:%S')}.311000 {3301 + i} torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        f.add(f"W1127 {t.strftime('%H:%M:%S')}.311000 {3301 + i} torch/distributed/run.py:793] *****************************************")
        t += timedelta(seconds=9)
        T(i, t, "INFO - Starting job: Llama 3 70B training")
        T(i, t, "WARNING - ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden to 3 based on job config")
        T(i, t, "INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory")
        T(i, t, "INFO - Peak FLOPS used for computing MFU: 9.890e+14")
        T(i, t, "INFO - Building 2-D device mesh with ['dp_shard', 'tp'], [16, 2]")
        T(i, t, "INFO - [GC] Initial GC collection. 0.00 seconds.")
        T(i, t, "INFO - Building tiktoken tokenizer locally from ./assets/tokenizer/original/tokenizer.model")
        T(i, t, "INFO - TikTokenizer built: #words 128256, BOS ID 128000, EOS ID 128001")
        T(i, t, "INFO - Preparing fineweb_edu dataset from /datasets/fineweb-edu/sample-350BT")
        T(i, t + timedelta(seconds=4), "INFO - Building llama3 70B with ModelArgs(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, vocab_size=128256, multiple_of=4096, ffn_dim_multiplier=1.3, norm_eps=1e-05, rope_theta=500000, max_seq_len=8192, depth_init=True, norm_type='rmsnorm')")
        T(i, t + timedelta(seconds=4), "INFO - Model llama3 70B size: 70,553,706,496 total parameters")
        T(i, t + timedelta(seconds=5), "INFO - Applied Tensor Parallelism to the model")
        T(i, t + timedelta(seconds=5), "INFO - Applied selective activation checkpointing to the model")
        T(i, t + timedelta(seconds=5), "INFO - Applied FSDP to the model")
        T(i, t + timedelta(seconds=6), "INFO - CUDA memory usage for model: 8.43GiB(10.66%)")
        T(i, t + timedelta(seconds=6), "INFO - Checkpointing active. Checkpoints will be loaded from and saved to /lustre/titan/llama3-70b/checkpoint")
        T(i, t + timedelta(seconds=6), "INFO - Loading the checkpoint at step 7300.")
        T(i, t + timedelta(seconds=49), "INFO - [GC] GC collection for checkpoint loading. 0.05 seconds.")
        T(i, t + timedelta(seconds=49), "INFO - Finished loading the checkpoint in 43.12 seconds.")
        T(i, t + timedelta(seconds=49), "INFO - Training starts at step 7301, with local batch size 2, global batch size 32, sequence length 8192, total steps 20000 (warmup 2000)")
        T(i, t + timedelta(seconds=49), "INFO - Profiling active. Traces will be saved at ./outputs/profile_trace")
        if i == 2:
            f.add(f"[rank16]:/usr/local/lib/python3.11/site-packages/torch/distributed/tensor/_redistribute.py:203: UserWarning: Redistribute from Shard(dim=1) to Replicate() for a bf16 tensor of 1 GiB is slow on this topology; consider setting TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=1")
    tstart = t0 + timedelta(seconds=60)
    step_s = 19.6
    losses = {}
    base = 2.031
    for s in range(7301, 7441):
        if s < 7404:
            losses[s] = (base - (s - 7301) * 0.00004 + rng.uniform(-0.035, 0.035), 0.21 + rng.uniform(-0.04, 0.06))
        else:
            spike = {7404: (2.118, 0.93), 7405: (2.364, 2.41), 7406: (2.907, 7.80), 7407: (3.866, 19.4), 7408: (5.512, 61.7),
                     7409: (8.034, 212.9), 7410: (12.718, 831.0), 7411: (27.402, 4406.3)}
            losses[s] = spike.get(s, (float("nan"), float("nan")))
    cur = tstart
    ck = {}
    for s in range(7301, 7441):
        cur = cur + timedelta(seconds=step_s + rng.uniform(-0.3, 0.3))
        lo, gn = losses[s]
        tps = 417 + rng.randint(-6, 6)
        for i in range(4):
            mark = "nan" if s == 7412 else None
            T(i, cur + timedelta(milliseconds=3 * i), f"INFO - step: {s:2}  loss: {lo:7.4f}  grad_norm: {gn:7.4f}  memory: 61.93GiB(78.29%)  tps: {tps:,}  tflops: 183.{rng.randint(10, 99)}  mfu: 18.5{rng.randint(0, 9)}%", mark=mark)
        if s % 50 == 0:
            for i in range(4):
                T(i, cur + timedelta(seconds=1), "INFO - Saving the checkpoint (or staging if async is enabled).")
                T(i, cur + timedelta(seconds=1), "INFO - [GC] GC collection invoked by checkpointer. 0.04 seconds.")
                T(i, cur + timedelta(seconds=54), f"INFO - Finished saving the checkpoint (or staging if async is enabled)in {52.1 + rng.random()*3:.2f} seconds.")
            ck[s] = cur + timedelta(seconds=55)
            cur += timedelta(seconds=55)
        if s % 100 == 0:
            for i in range(4):
                T(i, cur, f"INFO - [GC] Peforming periodical GC collection. 0.0{rng.randint(5, 8)} seconds.")
    tc = cur + timedelta(seconds=11)
    for i, h in enumerate(hosts):
        f = logs[h]
        f.add(f"slurmstepd: error: *** STEP {jid}.0 ON {hosts[0]} CANCELLED AT {tc.strftime('%Y-%m-%dT%H:%M:%S')} ***" if i == 0 else f"W1127 {tc.strftime('%H:%M:%S')}.120000 {3301 + i} torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers")
        if i == 0:
            f.add(f"W1127 {tc.strftime('%H:%M:%S')}.119000 3301 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers")
        for lr in range(8):
            f.add(f"W1127 {tc.strftime('%H:%M:%S')}.12{lr}000 {3301 + i} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {3320 + i * 40 + lr} closing signal SIGTERM")
        f.add("Traceback (most recent call last):")
        f.add('  File "/usr/local/bin/torchrun", line 8, in <module>')
        f.add("    sys.exit(main())")
        f.add('  File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/api.py", line 84, in _terminate_process_handler')
        f.add("    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)")
        f.add(f"torch.distributed.elastic.multiprocessing.api.SignalException: Process {3301 + i} got signal: 15")
    b.indicate(f"logs/{hosts[0]}/torchrun-{jid}.log", "nan")
    b.indicate(f"logs/{hosts[1]}/torchrun-{jid}.log", "nan")
    nodes = [(h, ips[i], list(range(8 * i, 8 * i + 8))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "{jid}"
name: llama3-70b-fineweb-edu
framework: torchtitan
scheduler: slurm
status: failed
started_at: {iso(t0)}
ended_at: {iso(tc)}
exit_code: 143
gpus_per_node: 8
parallelism: {{tp: 2, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 0d4be19, at: 2026-11-14T08:00:00Z, message: "train: fineweb-edu 350BT sample"}}
checkpoints:
  - {{step: 7000, at: 2026-11-26T21:02:00Z, path: /lustre/titan/llama3-70b/checkpoint/step-7000, valid: true}}
  - {{step: 7250, at: 2026-11-27T00:31:00Z, path: /lustre/titan/llama3-70b/checkpoint/step-7250, valid: true}}
  - {{step: 7300, at: 2026-11-27T01:02:00Z, path: /lustre/titan/llama3-70b/checkpoint/step-7300, valid: true}}
  - {{step: 7350, at: {iso(ck[7350])}, path: /lustre/titan/llama3-70b/checkpoint/step-7350, valid: true}}
  - {{step: 7400, at: {iso(ck[7400])}, path: /lustre/titan/llama3-70b/checkpoint/step-7400, valid: false, note: "post-save verify: .metadata missing on 3 of 32 shards"}}
spares: 1
"""
    truth = {
        "fault": "nan_loss_divergence",
        "category": "data",
        "root_cause": "training diverged: loss and grad_norm climbed from step 7404 (grad_norm 0.9 -> 4406 at 7411) and became NaN at step 7412 on every rank; the user cancelled the job at step 7440",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": 7412,
        "actions": [{"kind": "restart", "from_step": 7350}],
    }
    b.write(job, truth)


# =========================================================================== 6
def inc_ray_corrupt_sample():
    """Ray Train TorchTrainer: one worker's DataLoader hits a corrupt JPEG."""
    rng = random.Random(66)
    b = Bundle("raytrain-corrupt-jpeg-4node")
    hosts = ["rtx-g01", "rtx-g02", "rtx-g03", "rtx-g04"]
    ips = ["10.4.0.11", "10.4.0.12", "10.4.0.13", "10.4.0.14"]
    drv = b.f(f"logs/{hosts[0]}/driver.log")
    t0 = datetime(2026, 11, 27, 11, 0, 2, 123000, tzinfo=UTC)
    wpid = {r: 41800 + 17 * r + rng.randint(0, 9) for r in range(16)}
    bad = 9
    def P(r):
        return f"(RayTrainWorker pid={wpid[r]}, ip={ips[r // 4]})"
    drv.add(f"{ms(t0)}\tINFO worker.py:1540 -- Connecting to existing Ray cluster at address: {ips[0]}:6379...")
    drv.add(f"{ms(t0 + timedelta(milliseconds=16))}\tINFO worker.py:1715 -- Connected to Ray cluster. View the dashboard at \x1b[1m\x1b[32mhttp://{ips[0]}:8265 \x1b[39m\x1b[22m")
    drv.add(f"{ms(t0 + timedelta(milliseconds=279))}\tINFO tune.py:583 -- [output] This will use the new output engine with verbosity 1. To disable the new output and use the legacy output engine, set the environment variable RAY_AIR_NEW_OUTPUT=0. For more information, please see https://github.com/ray-project/ray/issues/36949")
    drv.add("")
    drv.add("View detailed results here: /mnt/shared/ray_results/clip-vith14-laion")
    drv.add("To visualize your results with TensorBoard, run: `tensorboard --logdir /tmp/ray/session_2026-11-27_10-58-41_203311_4120/artifacts/2026-11-27_11-00-02/clip-vith14-laion/driver_artifacts`")
    drv.add("")
    drv.add("Training started with configuration:")
    drv.add("╭────────────────────────────────────────────────╮")
    drv.add("│ Training config                                │")
    drv.add("├────────────────────────────────────────────────┤")
    drv.add("│ train_loop_config/batch_size_per_worker    256 │")
    drv.add("│ train_loop_config/epochs                    10 │")
    drv.add("│ train_loop_config/lr                    0.0005 │")
    drv.add("│ train_loop_config/num_workers               10 │")
    drv.add("╰────────────────────────────────────────────────╯")
    drv.add("(TrainTrainable pid=4411) /usr/local/lib/python3.10/dist-packages/ray/train/_internal/session.py:652: UserWarning: `ray.train.get_context().get_trial_dir()` is deprecated and will be removed in a future release.")
    drv.add("(TorchTrainer pid=4411) Started distributed worker processes: ")
    for r in range(16):
        drv.add(f"(TorchTrainer pid=4411) - (ip={ips[r // 4]}, pid={wpid[r]}) world_rank={r}, local_rank={r % 4}, node_rank={r // 4}")
    for r in [0, 5, 9, 3, 12, 1, 14, 6, 10, 2, 15, 7, 4, 8, 11, 13]:
        drv.add(f"{P(r)} Setting up process group for: env:// [rank={r}, world_size=16]")
    drv.add("(autoscaler +21s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set RAY_SCHEDULER_EVENTS=0.")
    for r in [0, 4, 8, 12]:
        drv.add(f"{P(r)} {hosts[r // 4]}:{wpid[r]}:{wpid[r] + 211} [{r % 4}] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB ens5f0:{ips[r // 4]}<0>")
    for r in range(16):
        drv.add(f"{P(r)} [rank{r}]:[W1127 11:00:31.{220113 + r * 31} ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {r}]  using GPU {r % 4} to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a particular device,or call init_process_group() with a device_id.")
    drv.add(f"{P(0)} Moving model to device: cuda:0")
    drv.add(f"{P(0)} Wrapping provided model in DistributedDataParallel.")
    drv.add(f"{P(0)} [data] 1,536 LAION shards, 23,040,116 image-text pairs; 900 steps per epoch per worker at batch 256")
    step_s = 3.02
    cur = t0 + timedelta(seconds=64)
    loss = 6.2
    fault_step = 2011
    for s in range(10, fault_step, 10):
        cur += timedelta(seconds=10 * step_s + rng.uniform(-0.5, 0.5))
        loss = max(1.5, loss * 0.9985 - rng.uniform(-0.01, 0.01))
        ep = s // 900
        drv.add(f"{P(0)} [epoch {ep} step {s}] loss={loss:.4f} lr={5e-4 * min(1, s / 500):.2e} img/s={int(16 * 256 / step_s + rng.uniform(-40, 40))}")
        if s == 1250:
            drv.add(f"{P(6)} retrying GET s3://laion-shards/train/shard-00811.tar (attempt 2/5) after ReadTimeoutError: Read timed out. (read timeout=60)")
            drv.add(f"{P(6)} GET s3://laion-shards/train/shard-00811.tar ok on attempt 2")
        if s % 900 == 0:
            it = s // 900
            drv.add("")
            drv.add(f"Training finished iteration {it} at {cur.strftime('%Y-%m-%d %H:%M:%S')}. Total running time: {int((cur - t0).total_seconds() // 60)}min {int((cur - t0).total_seconds() % 60)}s")
            drv.add("╭────────────────────────────────────╮")
            drv.add("│ Training result                    │")
            drv.add("├────────────────────────────────────┤")
            drv.add(f"│ checkpoint_dir_name checkpoint_00000{it - 1} │")
            drv.add(f"│ time_this_iter_s            {2718.4 + rng.random()*20:.2f} │")
            drv.add(f"│ time_total_s                {(cur - t0).total_seconds():.2f} │")
            drv.add(f"│ training_iteration                {it} │")
            drv.add(f"│ epoch                             {it - 1} │")
            drv.add(f"│ loss                         {loss:.5f} │")
            drv.add("╰────────────────────────────────────╯")
            drv.add(f"Training saved a checkpoint for iteration {it} at: (local)/mnt/shared/ray_results/clip-vith14-laion/TorchTrainer_3f1c2_00000_0_2026-11-27_11-00-02/checkpoint_00000{it - 1}")
            drv.add("")
    tf = cur + timedelta(seconds=step_s * 0.7)
    drv.add(f"{ms(tf + timedelta(seconds=1))}\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_3f1c2_00000")
    drv.add("Traceback (most recent call last):")
    R = "/usr/local/lib/python3.10/dist-packages"
    for fn, ln, fu, src in [
        (f"{R}/ray/air/execution/_internal/event_manager.py", 110, "resolve_future", "result = ray.get(future)"),
        (f"{R}/ray/_private/auto_init_hook.py", 21, "auto_init_wrapper", "return fn(*args, **kwargs)"),
        (f"{R}/ray/_private/client_mode_hook.py", 103, "wrapper", "return func(*args, **kwargs)"),
        (f"{R}/ray/_private/worker.py", 2667, "get", "values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)"),
        (f"{R}/ray/_private/worker.py", 864, "get_objects", "raise value.as_instanceof_cause()")]:
        drv.add(f'  File "{fn}", line {ln}, in {fu}')
        drv.add(f"    {src}")
    drv.add(f"ray.exceptions.RayTaskError(UnidentifiedImageError): \x1b[36mray::_Inner.train()\x1b[39m (pid=4411, ip={ips[0]}, actor_id=3e2c9a61f0b4d1e7a56c3f2801000000, repr=TorchTrainer)")
    for fn, ln, fu, src in [
        (f"{R}/ray/tune/trainable/trainable.py", 342, "train", "raise skipped from exception_cause(skipped)"),
        (f"{R}/ray/train/_internal/utils.py", 43, "check_for_failure", "ray.get(object_ref)")]:
        drv.add(f'  File "{fn}", line {ln}, in {fu}')
        drv.add(f"    {src}")
    drv.add(f"ray.exceptions.RayTaskError(UnidentifiedImageError): \x1b[36mray::_RayTrainWorker__execute.get_next()\x1b[39m (pid={wpid[bad]}, ip={ips[bad // 4]}, actor_id=b7d04e5a2c91f63e08a1d4c901000000, repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f2c1c2b7d30>)", mark="rte")
    for fn, ln, fu, src in [
        (f"{R}/ray/train/_internal/worker_group.py", 33, "__execute", "raise skipped from exception_cause(skipped)"),
        (f"{R}/ray/train/_internal/utils.py", 129, "discard_return_wrapper", "train_func(*args, **kwargs)"),
        ("/srv/clip/train_ray.py", 141, "train_loop_per_worker", "for step, (images, texts) in enumerate(loader):"),
        (f"{R}/torch/utils/data/dataloader.py", 701, "__next__", "data = self._next_data()"),
        (f"{R}/torch/utils/data/dataloader.py", 1465, "_next_data", "return self._process_data(data)"),
        (f"{R}/torch/utils/data/dataloader.py", 1491, "_process_data", "data.reraise()"),
        (f"{R}/torch/_utils.py", 715, "reraise", "raise exception")]:
        drv.add(f'  File "{fn}", line {ln}, in {fu}')
        drv.add(f"    {src}")
    drv.add("PIL.UnidentifiedImageError: Caught UnidentifiedImageError in DataLoader worker process 5.", mark="caught")
    drv.add("Original Traceback (most recent call last):")
    for fn, ln, fu, src in [
        (f"{R}/torch/utils/data/_utils/worker.py", 351, "_worker_loop", "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]"),
        (f"{R}/torch/utils/data/_utils/fetch.py", 52, "fetch", "data = [self.dataset[idx] for idx in possibly_batched_index]"),
        (f"{R}/torch/utils/data/_utils/fetch.py", 52, "<listcomp>", "data = [self.dataset[idx] for idx in possibly_batched_index]"),
        ("/srv/clip/data/laion_pairs.py", 77, "__getitem__", 'img = Image.open(io.BytesIO(rec["jpg"])).convert("RGB")'),
        (f"{R}/PIL/Image.py", 3339, "open", "raise UnidentifiedImageError(msg)")]:
        drv.add(f'  File "{fn}", line {ln}, in {fu}')
        drv.add(f"    {src}")
    drv.add("PIL.UnidentifiedImageError: cannot identify image file <_io.BytesIO object at 0x7f1d7c2a9e90>", mark="pil")
    drv.add("")
    drv.add(f"Training errored after 2 iterations at {tf.strftime('%Y-%m-%d %H:%M:%S')}. Total running time: 1hr {int(((tf - t0).total_seconds() - 3600) // 60)}min {int((tf - t0).total_seconds() % 60)}s")
    drv.add("Error file: /tmp/ray/session_2026-11-27_10-58-41_203311_4120/artifacts/2026-11-27_11-00-02/clip-vith14-laion/driver_artifacts/TorchTrainer_3f1c2_00000_0_2026-11-27_11-00-02/error.txt")
    drv.add("")
    drv.add(f"{ms(tf + timedelta(seconds=2))}\tERROR tune.py:1035 -- Trials did not complete: [TorchTrainer_3f1c2_00000]")
    drv.add("Traceback (most recent call last):")
    drv.add('  File "/srv/clip/train_ray.py", line 212, in <module>')
    drv.add("    result = trainer.fit()")
    drv.add(f'  File "{R}/ray/train/base_trainer.py", line 638, in fit')
    drv.add("    raise TrainingFailedError(")
    drv.add("ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause. After fixing the issue (assuming that the error is not caused by your own application logic, but rather an error such as OOM), you can restart the run from scratch or continue this run.")
    drv.add("To continue this run, you can use: `trainer = TorchTrainer.restore(\"/mnt/shared/ray_results/clip-vith14-laion\")`.")
    drv.add("To start a new run that will retry on training failures, set `train.RunConfig(failure_config=train.FailureConfig(max_failures))` in the Trainer's `run_config` with `max_failures > 0`, or `max_failures = -1` for unlimited retries.")
    # per-worker .out files as Ray writes them on each node
    for r in range(16):
        h = hosts[r // 4]
        wf = b.f(f"logs/{h}/worker-{rng.getrandbits(112):028x}-01000000-{wpid[r]}.out")
        wf.add(":actor_name:RayTrainWorker")
        wf.add(f"Setting up process group for: env:// [rank={r}, world_size=16]")
        if r % 4 == 0:
            wf.add(f"{h}:{wpid[r]}:{wpid[r] + 211} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB ens5f0:{ips[r // 4]}<0>")
        if r == 0:
            wf.add("Moving model to device: cuda:0")
            wf.add("Wrapping provided model in DistributedDataParallel.")
        if r == 6:
            wf.add("retrying GET s3://laion-shards/train/shard-00811.tar (attempt 2/5) after ReadTimeoutError: Read timed out. (read timeout=60)")
            wf.add("GET s3://laion-shards/train/shard-00811.tar ok on attempt 2")
    b.indicate(f"logs/{hosts[0]}/driver.log", "caught")
    b.indicate(f"logs/{hosts[0]}/driver.log", "pil")
    b.indicate(f"logs/{hosts[0]}/driver.log", "rte")
    nodes = [(h, ips[i], list(range(4 * i, 4 * i + 4))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "raysubmit_Vq8kq2cP4sWbY1nd"
name: clip-vith14-laion
framework: other
launcher: ray train (TorchTrainer, DDP)
status: failed
started_at: {iso(t0)}
ended_at: {iso(tf + timedelta(seconds=3))}
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 6f0aa31, at: 2026-11-18T13:45:00Z, message: "clip: vit-h/14 recipe"}}
checkpoints:
  - {{step: 900, at: {iso(t0 + timedelta(seconds=64 + 900 * step_s))}, path: /mnt/shared/ray_results/clip-vith14-laion/TorchTrainer_3f1c2_00000_0_2026-11-27_11-00-02/checkpoint_000000, valid: true}}
  - {{step: 1800, at: {iso(t0 + timedelta(seconds=64 + 1800 * step_s))}, path: /mnt/shared/ray_results/clip-vith14-laion/TorchTrainer_3f1c2_00000_0_2026-11-27_11-00-02/checkpoint_000001, valid: true}}
spares: 0
"""
    truth = {
        "fault": "dataloader_corrupt_sample",
        "category": "data",
        "root_cause": f"a corrupt (undecodable) JPEG in the LAION shards: DataLoader worker 5 of Ray Train rank {bad} ({hosts[bad // 4]}) raised PIL.UnidentifiedImageError in laion_pairs.__getitem__, which failed the worker group and the whole run",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": fault_step,
        "actions": [{"kind": "none"}],
    }
    b.write(job, truth)


# =========================================================================== 7
def inc_horovod_sigkill():
    """Horovod (PyTorch) under mpirun --tag-output: one rank SIGKILLed, nothing says by whom."""
    rng = random.Random(77)
    b = Bundle("mpirun-horovod-sigkill-4node")
    hosts = ["hvd-n01", "hvd-n02", "hvd-n03", "hvd-n04"]
    ips = ["10.3.0.11", "10.3.0.12", "10.3.0.13", "10.3.0.14"]
    bad_rank = 11
    hb = hosts[bad_rank // 4]
    t0 = datetime(2026, 11, 27, 14, 2, 11, tzinfo=UTC)
    rf = {r: b.f(f"logs/{hosts[r // 4]}/rank-{r}.log") for r in range(16)}
    pid = {r: 30211 + 9 * (r % 4) + 1000 * (r // 4) for r in range(16)}

    def O(r, text, err=False, mark=None):
        tag = "stderr" if err else "stdout"
        for part in text.split("\n"):
            rf[r].add(f"[1,{r}]<{tag}>:{part}")
        if mark:
            rf[r].marks.setdefault(mark, []).append(len(rf[r].lines))

    for r in range(16):
        h = hosts[r // 4]
        O(r, "/usr/local/lib/python3.8/dist-packages/torchvision/models/_utils.py:208: UserWarning: The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please use 'weights' instead.", err=True)
        O(r, "  warnings.warn(", err=True)
        O(r, "/usr/local/lib/python3.8/dist-packages/torchvision/models/_utils.py:223: UserWarning: Arguments other than a weight enum or `None` for 'weights' are deprecated since 0.13 and may be removed in the future. The current behavior is equivalent to passing `weights=None`.", err=True)
        O(r, "  warnings.warn(msg)", err=True)
        if r % 4 == 0:
            O(r, f"{h}:{pid[r]}:{pid[r] + 57} [0] NCCL INFO Bootstrap : Using eth0:{ips[r // 4]}<0>")
            O(r, f"{h}:{pid[r]}:{pid[r] + 57} [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation")
            O(r, f"{h}:{pid[r]}:{pid[r] + 57} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:{ips[r // 4]}<0>")
        if r == 0:
            O(r, f"{h}:{pid[r]}:{pid[r] + 57} [0] NCCL INFO NCCL version 2.18.5+cuda12.1")
        O(r, f"{h}:{pid[r]}:{pid[r] + 57} [{r % 4}] NCCL INFO comm 0x7f3c4c00{r:02x}90 rank {r} nranks 16 cudaDev {r % 4} busId {['1b000', '3d000', 'b1000', 'db000'][r % 4]} commId 0x5e1f03a9c2b7d114 - Init COMPLETE")
    O(0, "resnet152 | horovod 0.28.1 | world size 16 | batch 128/gpu | lr 0.8 (scaled) | fp16 allreduce compression")
    O(0, "train: 1,281,167 images, 625 steps/epoch/rank; val: 50,000 images")
    step_s = 0.46
    cur = t0 + timedelta(seconds=40)
    loss = 6.9
    fault_step = 2151
    for s in range(10, fault_step, 10):
        cur += timedelta(seconds=10 * step_s)
        loss = max(0.9, loss * 0.9981 - rng.uniform(-0.01, 0.012))
        ep = s // 625
        O(0, f"Train Epoch: {ep} [{(s % 625) * 2048:>7}/1281167 ({(s % 625) / 6.25:3.0f}%)]\tLoss: {loss:.4f}\tlr: {0.8 * min(1, s / 3125):.4f}\timg/s: {int(16 * 128 / step_s + rng.uniform(-90, 90))}")
        if s % 625 == 0:
            cur += timedelta(seconds=21)
            O(0, f"Validation epoch {ep - 1}: top1 {18 + 14 * (s // 625) + rng.random():.2f}%  top5 {39 + 17 * (s // 625) + rng.random():.2f}%")
            O(0, f"saved /nfs/ckpt/resnet152-hvd/checkpoint-{ep - 1}.pth.tar")
    tk = cur + timedelta(seconds=step_s * 0.5)
    # the killed rank: its file just stops, the last buffered line cut short
    O(bad_rank, "rank 11: epoch 3 shard cache warm (625 batches, 10 workers, prefetch 4)")
    rf[bad_rank].add(f"[1,{bad_rank}]<stdout>:rank 11: epoch 3 shard cache wa")
    rf[bad_rank].cut = True
    tg = (tk + timedelta(seconds=1)).strftime("%Y-%m-%d %H:%M:%S") + ".118221"
    for r in range(16):
        if r == bad_rank:
            continue
        if r // 4 == bad_rank // 4 or r in (0, 5, 9, 14):
            O(r, f"[{tg}: E /tmp/pip-install-q1v8s5b2/horovod_1f0e/horovod/common/operations.cc:697] Horovod background loop uncaught exception: [/tmp/pip-install-q1v8s5b2/horovod_1f0e/third_party/compatible_gloo/gloo/transport/tcp/pair.cc:589] Read error [{ips[bad_rank // 4]}]:{52833 + r}: Connection reset by peer", err=True)
        O(r, "Traceback (most recent call last):", err=True)
        O(r, '  File "/usr/local/lib/python3.8/dist-packages/horovod/torch/mpi_ops.py", line 957, in synchronize', err=True)
        O(r, "    mpi_lib.horovod_torch_wait_and_clear(handle)", err=True)
        O(r, "RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.", err=True)
        O(r, "", err=True)
        O(r, "During handling of the above exception, another exception occurred:", err=True)
        O(r, "", err=True)
        O(r, "Traceback (most recent call last):", err=True)
        O(r, '  File "train_resnet_hvd.py", line 298, in <module>', err=True)
        O(r, "    train(epoch)", err=True)
        O(r, '  File "train_resnet_hvd.py", line 201, in train', err=True)
        O(r, "    optimizer.step()", err=True)
        O(r, '  File "/usr/local/lib/python3.8/dist-packages/horovod/torch/optimizer.py", line 263, in step', err=True)
        O(r, "    self.synchronize()", err=True)
        O(r, '  File "/usr/local/lib/python3.8/dist-packages/horovod/torch/optimizer.py", line 226, in synchronize', err=True)
        O(r, "    output = synchronize(handle) if not callable(handle) else handle()", err=True)
        O(r, '  File "/usr/local/lib/python3.8/dist-packages/horovod/torch/mpi_ops.py", line 962, in synchronize', err=True)
        O(r, "    raise HorovodInternalError(e)", err=True)
        O(r, "horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.", err=True)
    m = b.f(f"logs/{hosts[0]}/mpirun.log")
    m.add("Warning: Permanently added 'hvd-n02,10.3.0.12' (ECDSA) to the list of known hosts.")
    m.add("Warning: Permanently added 'hvd-n04,10.3.0.14' (ECDSA) to the list of known hosts.")
    m.add("--------------------------------------------------------------------------")
    m.add("WARNING: There was an error initializing an OpenFabrics device.")
    m.add("")
    m.add(f"  Local host:   {hosts[2]}")
    m.add("  Local device: mlx5_1")
    m.add("--------------------------------------------------------------------------")
    m.add(f"[{hosts[0]}:30190] 15 more processes have sent help message help-mpi-btl-openib.txt / error in device init")
    m.add(f"[{hosts[0]}:30190] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages")
    m.add("--------------------------------------------------------------------------")
    m.add("Primary job  terminated normally, but 1 process returned")
    m.add("a non-zero exit code. Per user-direction, the job has been aborted.")
    m.add("--------------------------------------------------------------------------")
    m.add("--------------------------------------------------------------------------")
    m.add(f"mpirun noticed that process rank {bad_rank} with PID 0 on node {hb} exited on signal 9 (Killed).", mark="noticed")
    m.add("--------------------------------------------------------------------------")
    # probes: dmesg -T of every node, nothing about the kill
    for i, h in enumerate(hosts):
        d = b.f(f"probes/{h}/dmesg.txt")
        base = datetime(2026, 11, 22, 3, 11, 40, tzinfo=UTC)
        for k, msg in enumerate([
            "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024",
            "nvidia-uvm: Loaded the UVM driver, major device number 507.",
            "mlx5_core 0000:5e:00.0: E-Switch: Total vports 2, per vport: max uc(128) max mc(2048)",
            "mlx5_core 0000:5e:00.0 ib0: enabling device in port 1",
            "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready",
            "nfs: server nfs-ckpt.cluster OK",
        ]):
            d.add(f"[{(base + timedelta(seconds=7 * k + i)).strftime('%a %b %d %H:%M:%S %Y')}] {msg}")
        if i == 2:
            d.add(f"[{(tk - timedelta(minutes=52)).strftime('%a %b %d %H:%M:%S %Y')}] nfs: server nfs-ckpt.cluster not responding, still trying")
            d.add(f"[{(tk - timedelta(minutes=52, seconds=-9)).strftime('%a %b %d %H:%M:%S %Y')}] nfs: server nfs-ckpt.cluster OK")
    b.indicate(f"logs/{hosts[0]}/mpirun.log", "noticed")
    nodes = [(h, ips[i], list(range(4 * i, 4 * i + 4))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "hvd-resnet152-1127a"
name: resnet152-imagenet-horovod
framework: other
launcher: mpirun --tag-output (Open MPI 4.1.5) + horovod 0.28.1
status: failed
started_at: {iso(t0)}
ended_at: {iso(tk + timedelta(seconds=4))}
exit_code: 137
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 9ab2c07, at: 2026-10-30T10:00:00Z, message: "resnet152 fp16 compression"}}
checkpoints:
  - {{step: 1250, at: {iso(t0 + timedelta(seconds=40 + 1250 * step_s + 42))}, path: /nfs/ckpt/resnet152-hvd/checkpoint-1.pth.tar, valid: true}}
  - {{step: 1875, at: {iso(t0 + timedelta(seconds=40 + 1875 * step_s + 63))}, path: /nfs/ckpt/resnet152-hvd/checkpoint-2.pth.tar, valid: true}}
spares: 1
"""
    truth = {
        "fault": "process_killed_unknown",
        "category": "infrastructure",
        "root_cause": f"rank {bad_rank} on {hb} was killed by SIGKILL (mpirun: exited on signal 9) with no error of its own; dmesg on {hb} shows no OOM kill and no scheduler log is in the bundle, so what sent the signal is unknown; the other ranks then failed with Horovod shut-down / connection reset errors",
        "faulty_nodes": [hb],
        "stage": "training",
        "iteration": fault_step,
        "actions": [{"kind": "none"}],
    }
    b.write(job, truth)


# =========================================================================== 8
def inc_lightning_collective_mismatch_hang():
    """Lightning DDP: silent hang; py-spy shows rank 0 in a rank-0-only all_gather_object, the rest in the checkpoint barrier."""
    rng = random.Random(88)
    b = Bundle("lightning-hang-pyspy-mismatch-2node")
    hosts = ["dgx-h07", "dgx-h08"]
    ips = ["10.9.7.7", "10.9.7.8"]
    t0 = datetime(2026, 11, 27, 12, 5, 31, tzinfo=UTC)
    logs = {h: b.f(f"logs/{h}/train.log") for h in hosts}
    for i, h in enumerate(hosts):
        f = logs[h]
        if i == 0:
            f.add("Using bfloat16 Automatic Mixed Precision (AMP)")
            f.add("GPU available: True (cuda), used: True")
            f.add("TPU available: False, using: 0 TPU cores")
            f.add("HPU available: False, using: 0 HPUs")
        for lr in range(8):
            r = 8 * i + lr
            f.add(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/16")
        if i == 0:
            f.add("----------------------------------------------------------------------------------------------------")
            f.add("distributed_backend=nccl")
            f.add("All distributed processes registered. Starting with 16 processes")
            f.add("----------------------------------------------------------------------------------------------------")
            f.add("")
        f.add(f"{h}:{20411 + 100 * i}:{20411 + 100 * i} [0] NCCL INFO Bootstrap : Using enp90s0np0:{ips[i]}<0>")
        f.add(f"{h}:{20411 + 100 * i}:{20411 + 100 * i} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB [4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB [RO]; OOB enp90s0np0:{ips[i]}<0>")
        f.add("You are using a CUDA device ('NVIDIA H100 80GB HBM3') that has Tensor Cores. To properly utilize them, you should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision for performance. For more details, read https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html#torch.set_float32_matmul_precision")
        for lr in range(8):
            f.add(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        if i == 0:
            f.add("")
            f.add("  | Name      | Type              | Params | Mode ")
            f.add("--------------------------------------------------------")
            f.add("0 | model     | VisionTransformer | 632 M  | train")
            f.add("1 | criterion | CrossEntropyLoss  | 0      | train")
            f.add("--------------------------------------------------------")
            f.add("632 M     Trainable params")
            f.add("0         Non-trainable params")
            f.add("632 M     Total params")
            f.add("2,528.531 Total estimated model params size (MB)")
            f.add("412       Modules in train mode")
            f.add("0         Modules in eval mode")
        f.add("/usr/local/lib/python3.11/site-packages/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=23` in the `DataLoader` to improve performance.")
    # rank 0's tqdm bar: one long line of \r-separated updates, cut off by the hang
    step_s = 1.24
    segs = []
    loss = 6.91
    for s in range(0, 3000, 25):
        el = s * step_s
        rem = (20000 - s) * step_s
        loss = max(2.0, loss * 0.9965 - rng.uniform(-0.01, 0.012))
        fmt = lambda x: f"{int(x // 3600)}:{int(x % 3600 // 60):02d}:{int(x % 60):02d}"
        pct = int(100 * s / 20000)
        bar = "█" * (pct // 10) + " " * (10 - pct // 10)
        segs.append(f"Epoch 0:  {pct:2d}%|{bar}| {s}/20000 [{fmt(el)}<{fmt(rem)},  {1 / step_s:.2f}it/s, v_num=3, train_loss={loss:.3f}]")
    segs.append(f"Epoch 0:  14%|█▍        | 2999/20000 [1:01:58<5:51:21,  0.81it/s, v_num=3, train_loss={loss:.3f}]")
    logs[hosts[0]].add("\r" + "\r".join(segs))
    logs[hosts[0]].cut = True
    logs[hosts[1]].add("[rank12]:[W1127 12:27:11.551207 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 12]  using GPU 4 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a particular device,or call init_process_group() with a device_id.")
    # stacks
    tail = [
        "_call_callback_hooks (lightning/pytorch/trainer/call.py:218)",
        "advance (lightning/pytorch/loops/training_epoch_loop.py:276)",
        "run (lightning/pytorch/loops/training_epoch_loop.py:140)",
        "advance (lightning/pytorch/loops/fit_loop.py:355)",
        "run (lightning/pytorch/loops/fit_loop.py:205)",
        "_run_stage (lightning/pytorch/trainer/trainer.py:1025)",
        "_run (lightning/pytorch/trainer/trainer.py:981)",
        "_fit_impl (lightning/pytorch/trainer/trainer.py:575)",
        "launch (lightning/pytorch/strategies/launchers/subprocess_script.py:105)",
        "_call_and_handle_interrupt (lightning/pytorch/trainer/call.py:46)",
        "fit (lightning/pytorch/trainer/trainer.py:539)",
        "main (train.py:88)",
        "<module> (train.py:92)",
    ]
    for r in range(16):
        h = hosts[r // 8]
        p = 20411 + 100 * (r // 8) + 13 * (r % 8)
        st = b.f(f"stacks/{h}/rank-{r}.txt")
        st.add(f"Process {p}: /usr/bin/python3 -u train.py fit --config configs/vit_h14_in22k.yaml --trainer.num_nodes 2")
        st.add("Python v3.11.9 (/usr/bin/python3.11)")
        st.add("")
        st.add(f'Thread {p} (idle): "MainThread"')
        if r == 0:
            st.add("    all_gather_object (torch/distributed/distributed_c10d.py:2729)", mark="ago")
            st.add("    wrapper (torch/distributed/c10d_logger.py:83)")
            st.add("    on_train_batch_end (vitfm/callbacks/run_meta.py:47)", mark="cb")
        else:
            st.add("    barrier (torch/distributed/distributed_c10d.py:4164)")
            st.add("    wrapper (torch/distributed/c10d_logger.py:83)")
            st.add("    barrier (lightning/pytorch/strategies/ddp.py:304)")
            st.add("    save_checkpoint (lightning/pytorch/trainer/trainer.py:1368)")
            st.add("    _save_checkpoint (lightning/pytorch/callbacks/model_checkpoint.py:390)")
            st.add("    _save_none_monitor_checkpoint (lightning/pytorch/callbacks/model_checkpoint.py:713)")
            st.add("    _save_topk_checkpoint (lightning/pytorch/callbacks/model_checkpoint.py:368)")
            st.add("    on_train_batch_end (lightning/pytorch/callbacks/model_checkpoint.py:303)")
        for fr in tail:
            st.add("    " + fr)
        st.add("")
        st.add(f'Thread {p + 61} (idle): "Thread-2 (_pin_memory_loop)"')
        for fr in ["select (selectors.py:415)", "wait (multiprocessing/connection.py:1136)", "_poll (multiprocessing/connection.py:439)",
                   "poll (multiprocessing/connection.py:257)", "get (multiprocessing/queues.py:113)",
                   "do_one_step (torch/utils/data/_utils/pin_memory.py:31)", "_pin_memory_loop (torch/utils/data/_utils/pin_memory.py:54)",
                   "run (threading.py:982)", "_bootstrap_inner (threading.py:1045)", "_bootstrap (threading.py:1002)"]:
            st.add("    " + fr)
        if r == 0:
            st.add("")
            st.add(f'Thread {p + 77} (idle): "Thread-5"')
            for fr in ["wait (threading.py:331)", "get (queue.py:180)", "run (tensorboard/summary/writer/event_file_writer.py:269)",
                       "_bootstrap_inner (threading.py:1045)", "_bootstrap (threading.py:1002)"]:
                st.add("    " + fr)
    b.indicate(f"stacks/{hosts[0]}/rank-0.txt", "ago")
    b.indicate(f"stacks/{hosts[0]}/rank-0.txt", "cb")
    nodes = [(h, ips[i], list(range(8 * i, 8 * i + 8))) for i, h in enumerate(hosts)]
    job = f"""
job_id: "771940"
name: vit-h14-in22k-pretrain
framework: other
launcher: lightning 2.4 (DDP, srun)
scheduler: slurm
status: hung
started_at: {iso(t0)}
stacks_taken_at: {iso(t0 + timedelta(seconds=60 + 3000 * step_s + 47 * 60))}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
{nodes_yaml(nodes)}
code:
  - {{commit: 2c81f5e, at: 2026-11-19T09:10:00Z, message: "vit-h: layer-wise lr decay 0.8"}}
  - {{commit: 8e7d4a0, at: 2026-11-26T22:31:00Z, message: "callbacks: add RunMeta (host/driver inventory in the run metadata)"}}
last_successful_run: {{job: "771402", ended_at: 2026-11-26T17:20:00Z, commit: 2c81f5e}}
history: ["771402"]
checkpoints:
  - {{step: 1000, at: {iso(t0 + timedelta(seconds=60 + 1000 * step_s))}, path: /ckpt/vit-h14/epoch=0-step=1000.ckpt, valid: true}}
  - {{step: 2000, at: {iso(t0 + timedelta(seconds=60 + 2000 * step_s))}, path: /ckpt/vit-h14/epoch=0-step=2000.ckpt, valid: true}}
spares: 1
nccl_timeout_s: 7200
"""
    truth = {
        "fault": "collective_mismatch_deadlock",
        "category": "user_code",
        "root_cause": "commit 8e7d4a0's RunMeta callback calls all_gather_object only on global rank 0 (every 3000 steps); at step 3000 rank 0 blocked in that collective while the 15 other ranks went on to ModelCheckpoint's barrier, so the collectives never matched and the job hung silently (NCCL timeout 2 h)",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": 3000,
        "actions": [{"kind": "rollback", "to_commit": "2c81f5e"}],
    }
    b.write(job, truth)


if __name__ == "__main__":
    for fn in [inc_deepspeed_host_oom, inc_nemo_ckpt_quota, inc_megatron_cuda_oom_commit, inc_accelerate_keyerror_journald,
               inc_torchtitan_nan, inc_ray_corrupt_sample, inc_horovod_sigkill, inc_lightning_collective_mismatch_hang]:
        fn()
