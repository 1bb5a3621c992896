#!/usr/bin/env python3
"""Builds hand-made incident bundles under this directory. stdlib only.
Indicating lines are computed from the text written (Mark objects), never by hand."""
import json, os, random, shutil, sys
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc


class Mark(str):
    """A line that is an indicating line of the truth."""


def T(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


class Bundle:
    def __init__(self, iid):
        self.iid = iid
        self.dir = os.path.join(ROOT, iid)
        self.files = {}

    def add(self, rel, lines):
        self.files.setdefault(rel, CutList() if isinstance(lines, CutList) else []).extend(lines)

    def write(self, job_yaml, truth):
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        ind = []
        for rel, lines in self.files.items():
            p = os.path.join(self.dir, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            text = "\n".join(lines)
            if not getattr(lines, "cut", False):
                text += "\n"
            with open(p, "w", newline="") as f:
                f.write(text)
            for i, l in enumerate(lines):
                if isinstance(l, Mark):
                    ind.append({"file": rel, "line": i + 1})
        with open(os.path.join(self.dir, "job.yaml"), "w") as f:
            f.write(job_yaml)
        truth = dict(truth)
        truth["indicating_lines"] = ind
        with open(os.path.join(self.dir, "truth.json"), "w") as f:
            json.dump(truth, f, indent=2)
            f.write("\n")
        # check
        print("=" * 100)
        print(self.iid, truth["fault"], truth["faulty_nodes"])
        assert 1 <= len(ind) <= 6, ind
        for e in ind:
            with open(os.path.join(self.dir, e["file"]), newline="") as f:
                ls = f.read().split("\n")
            txt = ls[e["line"] - 1]
            assert txt.strip(), e
            assert "\r" not in txt, e
            print("  %s:%d: %s" % (e["file"], e["line"], txt[:170]))
        size = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(self.dir) for fn in fns)
        print("  size: %.1f KB" % (size / 1024))
        assert size < 150 * 1024, size


class CutList(list):
    cut = True


def nodes_yaml(nodes):
    return "".join("  - {host: %s, ip: %s, ranks: [%s]}\n" % (h, ip, ", ".join(map(str, r))) for h, ip, r in nodes)


def mk_nodes(hosts, ips, gpn):
    return [(h, ip, list(range(i * gpn, (i + 1) * gpn))) for i, (h, ip) in enumerate(zip(hosts, ips))]


def torch_ts(d):
    # PyTorch c10 glog-style stamp: MMDD HH:MM:SS.uuuuuu
    return d.strftime("%m%d %H:%M:%S.") + "%06d" % d.microsecond


def ibstat(cas, bad=None, lid0=100):
    out = []
    for i, ca in enumerate(cas):
        guid = "0x946dae0300%02x%04x" % (lid0 % 256, 0x3a10 + i)
        down = (ca == bad)
        out += ["CA '%s'" % ca,
                "\tCA type: MT4129",
                "\tNumber of ports: 1",
                "\tFirmware version: 28.41.1000",
                "\tHardware version: 0",
                "\tNode GUID: %s" % guid,
                "\tSystem image GUID: %s" % guid,
                "\tPort 1:"]
        if down:
            out += [Mark("\t\tState: Down"), Mark("\t\tPhysical state: Disabled"), "\t\tRate: 10",
                    "\t\tBase lid: 65535", "\t\tLMC: 0", "\t\tSM lid: 1"]
        else:
            out += ["\t\tState: Active", "\t\tPhysical state: LinkUp", "\t\tRate: 400",
                    "\t\tBase lid: %d" % (lid0 + i), "\t\tLMC: 0", "\t\tSM lid: 1"]
        out += ["\t\tCapability mask: 0xa751e848", "\t\tPort GUID: %s" % guid, "\t\tLink layer: InfiniBand"]
    return out


def dmesg_boot(d0, host, extra=()):
    """A few benign dmesg -T lines."""
    f = lambda d: d.strftime("[%a %b %d %H:%M:%S %Y]").replace(" 0", "  ", 1) if False else d.strftime("[%a %b %e %H:%M:%S %Y]")
    out = [f(d0) + " nvidia-nvlink: Nvlink Core is being initialized, major device number 508",
           f(d0) + " NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:22:07 UTC 2024",
           f(d0 + timedelta(seconds=2)) + " nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.127.05  Tue Oct  8 02:56:05 UTC 2024",
           f(d0 + timedelta(seconds=9)) + " mlx5_core 0000:18:00.0: E-Switch: Total vports 2, per vport: max uc(128) max mc(2048)",
           f(d0 + timedelta(seconds=40)) + " nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"]
    for d, s in extra:
        out.append(f(d) + " " + s)
    return out


def dm(d):
    return d.strftime("[%a %b %e %H:%M:%S %Y]")


# ---------------------------------------------------------------------------------------------
# 1. torchtitan, silent GPU hang, per-rank torchrun log files, py-spy stacks
# ---------------------------------------------------------------------------------------------
def titan_hang():
    b = Bundle("titan-silent-hang-pyspy-4node")
    rnd = random.Random(11)
    hosts = ["a3-gpu-0a", "a3-gpu-0b", "a3-gpu-0c", "a3-gpu-0d"]
    ips = ["10.128.0.21", "10.128.0.22", "10.128.0.23", "10.128.0.24"]
    nodes = mk_nodes(hosts, ips, 8)
    bad_host, bad_rank = "a3-gpu-0c", 21
    t0 = T("2026-11-24T06:00:05")
    start_step, last_step = 4001, 4212
    step_s = 5.62
    for h, ip, ranks in nodes:
        for r in ranks:
            lr = r % 8
            L = []
            ts = lambda d: "[titan] " + d.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % (d.microsecond // 1000)
            d = t0
            L.append(ts(d) + " - root - INFO - Starting job: Llama 3 8B continued pretraining (fsdp=32)")
            if lr == 0:
                L.append("/opt/conda/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_loader.py:161: UserWarning: "
                         "torch.distributed is disabled, unavailable or uninitialized, assuming the intent is to load in a single process.")
            L.append(ts(d) + " - root - INFO - Building 1-D device mesh with ['dp_shard'], [32]")
            L.append(ts(d) + " - root - INFO - [GC] Initial GC collection. 0.00 seconds.")
            d += timedelta(seconds=3)
            L.append("%s:%d:%d [%d] NCCL INFO cudaDriverVersion 12040" % (h, 7200 + lr, 7200 + lr, lr))
            L.append("%s:%d:%d [%d] NCCL INFO Bootstrap : Using enp0s12:%s<0>" % (h, 7200 + lr, 7200 + lr, lr, ip))
            L.append("%s:%d:%d [%d] NCCL INFO NCCL version 2.21.5+cuda12.4" % (h, 7200 + lr, 7200 + lr, lr))
            L.append("%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB enp0s12:%s<0>" % (h, 7200 + lr, 7290 + lr, lr, ip))
            L.append("%s:%d:%d [%d] NCCL INFO comm 0x5581f3a0c2d0 rank %d nRanks 32 nNodes 4 localRanks 8 localRank %d MNNVL 0" % (h, 7200 + lr, 7290 + lr, lr, r, lr))
            L.append("%s:%d:%d [%d] NCCL INFO Init COMPLETE comm 0x5581f3a0c2d0 rank %d nranks 32 cudaDev %d nvmlDev %d busId %s - Init START" % (h, 7200 + lr, 7290 + lr, lr, r, lr, lr, "%x000" % (0x18 + 0x10 * lr)))
            L.append(ts(d) + " - root - INFO - Model llama3 8B size: 8,030,261,248 total parameters")
            L.append(ts(d) + " - root - INFO - Applied selective activation checkpointing to the model")
            L.append(ts(d) + " - root - INFO - Applied FSDP to the model")
            L.append(ts(d) + " - root - INFO - CUDA memory usage for model: 0.94GiB(1.18%)")
            d += timedelta(seconds=41)
            L.append(ts(d) + " - root - INFO - Loading the checkpoint at step 4000.")
            L.append(ts(d) + " - root - INFO - Finished loading the checkpoint in 38.12 seconds.")
            L.append(ts(d) + " - root - INFO - Training starts at step 4001, with local batch size 2, global batch size 64, sequence length 8192, total steps 20000 (warmup 200)")
            L.append(ts(d) + " - root - INFO - Profiling active. Traces will be saved at ./outputs/profile_trace")
            if lr == 0 and r == 0:
                L.append("/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:1399: FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.")
                L.append("  with device_autocast_ctx, torch.cpu.amp.autocast(**cpu_autocast_kwargs), recompute_context:  # type: ignore[attr-defined]")
            loss = 2.31
            for s in range(start_step, last_step + 1):
                d += timedelta(seconds=step_s + rnd.uniform(-0.05, 0.05))
                loss = max(1.6, loss - 0.0007 + rnd.uniform(-0.02, 0.02))
                if s == start_step or s % 30 == 0 or s == last_step:
                    L.append(ts(d) + " - root - INFO - step: %d  loss: %7.4f  memory: 61.34GiB(77.45%%)  tps: %s  tflops: %.2f  mfu: %.2f%%"
                             % (s, loss, format(int(2915 + rnd.uniform(-25, 25)), ","), 412.3 + rnd.uniform(-3, 3), 41.69 + rnd.uniform(-0.3, 0.3)))
                if s % 150 == 0:
                    L.append(ts(d) + " - root - INFO - [GC] Peforming periodical GC collection. 0.05 seconds.")
            b.add("logs/%s/torchrun_rank_%d.log" % (h, r), L)
    hang_at = d
    # py-spy dumps, 14 minutes into the hang
    dump_t = hang_at + timedelta(minutes=14)
    for h, ip, ranks in nodes:
        for r in ranks:
            lr = r % 8
            pid = 7200 + lr
            S = ["Process %d: /opt/conda/bin/python3.11 -u -m torchtitan.train --job.config_file ./torchtitan/models/llama3/train_configs/llama3_8b.toml" % pid,
                 "Python v3.11.10 (/opt/conda/bin/python3.11)",
                 ""]
            if r == bad_rank:
                S += ["Thread %d (active): \"MainThread\"" % pid,
                      "    cuStreamSynchronize (libcuda.so.550.127.05)",
                      "    0x7f3c1b2a4c31 (libcudart.so.12)",
                      "    cudaStreamSynchronize (libcudart.so.12)",
                      "    at::native::_local_scalar_dense_cuda (libtorch_cuda.so)",
                      Mark("    synchronize (torch/cuda/__init__.py:954)"),
                      "    forward_backward_step (torchtitan/train.py:372)",
                      "    train_step (torchtitan/train.py:401)",
                      "    train (torchtitan/train.py:488)",
                      "    wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
                      "    <module> (torchtitan/train.py:561)",
                      "    _run_code (<frozen runpy>:88)",
                      "    _run_module_as_main (<frozen runpy>:198)"]
            else:
                S += ["Thread %d (idle): \"MainThread\"" % pid,
                      "    cuStreamSynchronize (libcuda.so.550.127.05)",
                      "    cudaStreamSynchronize (libcudart.so.12)",
                      "    c10d::ProcessGroupNCCL::WorkNCCL::synchronizeStream (libtorch_cuda.so)",
                      "    all_reduce (torch/distributed/distributed_c10d.py:2501)",
                      "    wrapper (torch/distributed/c10d_logger.py:83)",
                      "    _dist_reduce (torchtitan/distributed/utils.py:36)",
                      "    dist_max (torchtitan/distributed/utils.py:43)",
                      "    train_step (torchtitan/train.py:420)",
                      "    train (torchtitan/train.py:488)",
                      "    wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
                      "    <module> (torchtitan/train.py:561)",
                      "    _run_code (<frozen runpy>:88)",
                      "    _run_module_as_main (<frozen runpy>:198)"]
            S += [] if r not in (0, bad_rank, 20) else ["Thread %d (idle): \"Thread-1 (_pin_memory_loop)\"" % (pid + 61),
                  "    select (selectors.py:415)",
                  "    wait (multiprocessing/connection.py:1136)",
                  "    _poll (multiprocessing/connection.py:440)",
                  "    poll (multiprocessing/connection.py:257)",
                  "    get (multiprocessing/queues.py:113)",
                  "    do_one_step (torch/utils/data/_utils/pin_memory.py:33)",
                  "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:55)",
                  "    run (threading.py:982)",
                  "    _bootstrap_inner (threading.py:1045)",
                  "    _bootstrap (threading.py:1002)"]
            b.add("stacks/%s/rank-%d.txt" % (h, r), S)
    for h, ip, ranks in nodes:
        b.add("probes/%s/dmesg.txt" % h, dmesg_boot(T("2026-11-20T02:14:09"), h))
        b.add("probes/%s/nvidia-smi-query.txt" % h,
              ["# nvidia-smi --query-gpu=index,pci.bus_id,utilization.gpu,temperature.gpu,power.draw,ecc.errors.uncorrected.volatile.total,clocks_throttle_reasons.active --format=csv"
               , "index, pci.bus_id, utilization.gpu [%], temperature.gpu, power.draw [W], ecc.errors.uncorrected.volatile.total, clocks_throttle_reasons.active"]
              + ["%d, 00000000:%02X:00.0, 100 %%, %d, %.2f W, 0, 0x0000000000000000" % (i, 0x18 + 0x10 * i, 41 + i % 3, 118.0 + i) for i in range(8)])
    job = """job_id: "tt-8b-cpt-0193"
name: llama3-8b-continued-pretrain
framework: torchtitan
status: hung
started_at: %s
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}
launcher: torchrun --nnodes 4 --nproc-per-node 8 --log-dir /scratch/tt/logs --tee 3 --redirects 3
nodes:
%scode:
  - {commit: 5d71e0a, at: 2026-11-12T16:40:00Z, message: "train: log dist_max of loss every step"}
  - {commit: c02b9f4, at: 2026-11-19T09:05:00Z, message: "data: switch to code-mix-v3 shards"}
checkpoints:
  - {step: 3500, at: 2026-11-23T23:48:10Z, path: /scratch/tt/ckpt/step-3500, valid: true}
  - {step: 4000, at: 2026-11-24T05:41:22Z, path: /scratch/tt/ckpt/step-4000, valid: true}
spares: 1
stacks_taken_at: %s
history: [tt-8b-cpt-0191]
""" % (iso(t0), nodes_yaml(nodes), iso(dump_t))
    truth = {"fault": "gpu_hang", "category": "hardware",
             "root_cause": "GPU 5 of a3-gpu-0c (rank 21) stopped making progress in a compute kernel: its py-spy stack sits in torch.cuda.synchronize inside the forward/backward step while the 31 other ranks wait in the loss all_reduce; no error was printed anywhere",
             "faulty_nodes": [bad_host], "stage": "training", "iteration": last_step + 1,
             "actions": [{"kind": "evict", "nodes": [bad_host]}, {"kind": "restart", "from_step": 4000}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 2. DeepSpeed with hostfile, IB port disabled on one node
# ---------------------------------------------------------------------------------------------
def ds_nic_down():
    b = Bundle("ds-hostfile-ib-port-disabled-3node")
    rnd = random.Random(22)
    hosts = ["dgx-h01", "dgx-h02", "dgx-h03"]
    ips = ["10.40.1.11", "10.40.1.12", "10.40.1.13"]
    nodes = mk_nodes(hosts, ips, 8)
    bad = "dgx-h03"
    t0 = T("2026-11-25T13:02:11")
    hca = ["mlx5_%d" % i for i in range(8)]
    fail_t = None
    last = 2838
    ds = lambda d: d.strftime("[%Y-%m-%d %H:%M:%S,") + "%03d]" % (d.microsecond // 1000)
    for ni, (h, ip, ranks) in enumerate(nodes):
        L = []
        d = t0
        L.append(ds(d) + " [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda (auto detect)")
        L.append(ds(d) + " [INFO] [launch.py:146:main] WORLD INFO DICT: {'dgx-h01': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-h02': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-h03': [0, 1, 2, 3, 4, 5, 6, 7]}")
        L.append(ds(d) + " [INFO] [launch.py:152:main] nnodes=3, num_local_procs=8, node_rank=%d" % ni)
        L.append(ds(d) + " [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {'dgx-h01': [0, 1, 2, 3, 4, 5, 6, 7], 'dgx-h02': [8, 9, 10, 11, 12, 13, 14, 15], 'dgx-h03': [16, 17, 18, 19, 20, 21, 22, 23]})")
        L.append(ds(d) + " [INFO] [launch.py:164:main] dist_world_size=24")
        L.append(ds(d) + " [INFO] [launch.py:168:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
        L.append(ds(d) + " [INFO] [launch.py:256:main] process %d spawned with command: ['/usr/bin/python', '-u', 'pretrain_mistral.py', '--local_rank=0', '--deepspeed', '--deepspeed_config', 'ds_zero3.json', '--resume', '/mnt/weka/ckpt/mistral-12b']" % (51200 + ni))
        d += timedelta(seconds=6)
        for r in ranks:
            lr = r % 8
            L.append(ds(d) + " [INFO] [comm.py:652:init_distributed] cdb=None")
        if ni == 0:
            L.append(ds(d) + " [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl")
        for r in ranks:
            lr = r % 8
            L.append("%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB bond0:%s<0>" % (h, 51210 + lr, 51210 + lr, lr, ip))
        L.append("/usr/local/lib/python3.10/dist-packages/transformers/utils/hub.py:127: FutureWarning: Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.")
        L.append("  warnings.warn(")
        d += timedelta(seconds=50)
        L.append(ds(d) + " [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: version=0.15.4, git-hash=unknown, git-branch=unknown" if ni == 0 else ds(d) + " [INFO] [config.py:733:__init__] Config mesh_device None world_size = 24")
        L.append(ds(d) + " [INFO] [engine.py:1581:_configure_zero_optimizer] Creating ZeRO stage 3 optimizer" if ni == 0 else ds(d) + " [INFO] [partition_parameters.py:348:__exit__] finished initializing model - num_params = 363, num_elems = 12.25B")
        d += timedelta(seconds=95)
        L.append(ds(d) + " [INFO] [torch_checkpoint_engine.py:27:load] [Torch] Loading checkpoint from /mnt/weka/ckpt/mistral-12b/global_step2500/zero_pp_rank_%d_mp_rank_00_model_states.pt..." % ranks[0])
        L.append(ds(d) + " [INFO] [engine.py:3043:_get_all_zero_checkpoint_state_dicts] successfully read 24 ZeRO state_dicts for rank %d" % ranks[0])
        L.append(ds(d) + " [INFO] [engine.py:2993:_load_zero_checkpoint] loading 24 zero partition checkpoints for rank %d" % ranks[0])
        if ni == 1:
            L.append(ds(d) + " [WARNING] [stage3.py:2114:step] 1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance. if this is happening frequently consider adjusting settings to reduce memory consumption. If you are unable to make the cache flushes go away consider adding get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches at the same time")
        loss = 1.98
        for s in range(2501, last + 1):
            d += timedelta(seconds=4.31 + rnd.uniform(-0.04, 0.04))
            loss = loss - 0.0002 + rnd.uniform(-0.015, 0.015)
            if s % 10 == 0 and ni == 0:
                L.append(ds(d) + " [INFO] [logging.py:128:log_dist] [Rank 0] step=%d, skipped=0, lr=[0.00017%04d], mom=[(0.9, 0.95)]" % (s, 9000 - s))
                L.append(ds(d) + " [INFO] [timer.py:264:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.6f, CurrSamplesPerSec=%.6f, MemAllocated=21.37GB, MaxMemAllocated=58.91GB" % (s * 4, s, 44.51 + rnd.uniform(-0.2, 0.2), 44.5 + rnd.uniform(-0.8, 0.8)))
                L.append("step %d | loss %.4f | tokens/s/gpu 7412 | grad_norm %.3f" % (s, loss, 0.21 + rnd.uniform(0, 0.05)))
            if s == 2600 and ni == 2:
                L.append(ds(d) + " [WARNING] [comm.py:157:warn_once] Retrying barrier after transient store error (attempt 1/3): Connection reset by peer")
                L.append(ds(d) + " [INFO] [comm.py:161:warn_once] barrier succeeded on retry")
        fail_t = d + timedelta(seconds=2.7)
        if h == bad:
            for lr in [4, 4, 4]:
                L.append("")
                L.append(Mark("%s:%d:%d [%d] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error" % (h, 51214, 51402, lr)) if not any(isinstance(x, Mark) for x in L) else
                         "%s:%d:%d [%d] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error" % (h, 51214, 51402, lr))
            L.append("")
            L.append("%s:51214:51399 [4] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.40.1.12<41870> with status=5 opcode=0 len=0 vendor err 249 (Send) localGid fe80::946d:ae03:f3:3a14 remoteGids::ffff:10.40.1.12" % h)
            L.append("%s:51214:51399 [4] NCCL INFO transport/net.cc:1298 -> 6" % h)
            L.append("%s:51214:51399 [4] NCCL INFO proxy.cc:694 -> 6" % h)
            L.append("%s:51214:51399 [4] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]" % h)
        else:
            peer_lr = 4
            L.append("")
            L.append("%s:%d:%d [%d] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.40.1.13<52341> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::946d:ae03:f3:%04x remoteGids::ffff:10.40.1.13" % (h, 51214, 51395, peer_lr, 0x3a14))
            L.append("%s:%d:%d [%d] NCCL INFO transport/net.cc:1298 -> 6" % (h, 51214, 51395, peer_lr))
            L.append("%s:%d:%d [%d] NCCL INFO proxy.cc:694 -> 6" % (h, 51214, 51395, peer_lr))
            L.append("%s:%d:%d [%d] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]" % (h, 51214, 51395, peer_lr))
        d2 = fail_t + timedelta(seconds=1.3)
        for r in ranks:
            lr = r % 8
            L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank %d] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5" % (r, torch_ts(d2), 51210 + lr + 380, r))
            L.append("[rank%d]:ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely." % r)
            L.append("[rank%d]:Last error:" % r)
            if h == bad:
                L.append("[rank%d]:NET/IB : Got completion from peer 10.40.1.12<41870> with status=5 opcode=0 len=0 vendor err 249 (Send) localGid fe80::946d:ae03:f3:3a14 remoteGids::ffff:10.40.1.12" % r)
            else:
                L.append("[rank%d]:NET/IB : Got completion from peer 10.40.1.13<52341> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::946d:ae03:f3:3a14 remoteGids::ffff:10.40.1.13" % r)
            if lr == 0:
                L += ["[rank%d]:Exception raised from checkForNCCLErrorsInternal at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2027 (most recent call first):" % r,
                      "[rank%d]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f8e1a56c446 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)" % r,
                      "[rank%d]:frame #1: c10d::ProcessGroupNCCL::checkForNCCLErrorsInternal(std::shared_ptr<c10d::NCCLComm>&) + 0x220 (0x7f8e1b8a5c50 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)" % r,
                      "[rank%d]:frame #2: c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException() + 0x7c (0x7f8e1b8a5e9c in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)" % r,
                      "[rank%d]:frame #3: c10d::ProcessGroupNCCL::watchdogHandler() + 0x213 (0x7f8e1b8ad0f3 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)" % r,
                      "[rank%d]:frame #4: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f8e1b8ae42c in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)" % r]
        d3 = d2 + timedelta(seconds=4)
        for r in ranks:
            L.append(ds(d3) + " [INFO] [launch.py:319:sigkill_handler] Killing subprocess %d" % (51210 + r % 8))
        L.append(ds(d3) + " [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'pretrain_mistral.py', '--local_rank=%d', '--deepspeed', '--deepspeed_config', 'ds_zero3.json', '--resume', '/mnt/weka/ckpt/mistral-12b'] exits with return code = -6" % (4 if h == bad else 0))
        b.add("logs/%s/deepspeed-node%d.log" % (h, ni), L)
    for ni, h in enumerate(hosts):
        b.add("probes/%s/ibstat.txt" % h, ibstat(hca, bad="mlx5_4" if h == bad else None, lid0=100 + 10 * ni))
        c = ["# Port counters: Lid %d port 1 (CapMask: 0x5A00)" % (104 + 10 * ni),
             "PortSelect:......................1", "CounterSelect:...................0x0000",
             "SymbolErrorCounter:..............%d" % (0 if h != bad else 65535),
             "LinkErrorRecoveryCounter:........%d" % (0 if h != bad else 255),
             "LinkDownedCounter:...............%d" % (0 if h != bad else 17),
             "PortRcvErrors:...................0", "PortRcvRemotePhysicalErrors:.....0", "PortRcvSwitchRelayErrors:........0",
             "PortXmitDiscards:................%d" % (0 if h != bad else 3312), "PortXmitConstraintErrors:........0",
             "PortRcvConstraintErrors:.........0", "LocalLinkIntegrityErrors:........%d" % (0 if h != bad else 14),
             "ExcessiveBufferOverrunErrors:....0", "VL15Dropped:.....................0",
             "PortXmitData:....................4294967295", "PortRcvData:.....................4294967295",
             "PortXmitPkts:....................3117742611", "PortRcvPkts:.....................3119012245"]
        b.add("probes/%s/ib-counters.txt" % h, c)
    job = """job_id: "ds-mistral12b-7781"
name: mistral-12b-zero3-pretrain
framework: deepspeed
status: failed
started_at: %s
ended_at: %s
exit_code: 250
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 24, cp: 1, ep: 1}
launcher: deepspeed --hostfile /etc/deepspeed/hostfile (slots=8 each)
nodes:
%scode:
  - {commit: 41be09d, at: 2026-11-10T11:20:00Z, message: "zero3: bump reduce_bucket_size"}
checkpoints:
  - {step: 2000, at: 2026-11-24T22:10:00Z, path: /mnt/weka/ckpt/mistral-12b/global_step2000, valid: true}
  - {step: 2500, at: 2026-11-25T12:58:41Z, path: /mnt/weka/ckpt/mistral-12b/global_step2500, valid: true}
spares: 2
""" % (iso(t0), iso(fail_t + timedelta(seconds=9)), nodes_yaml(nodes))
    truth = {"fault": "nic_down", "category": "network",
             "root_cause": "InfiniBand HCA mlx5_4 on dgx-h03 went down for good (ibstat State: Down, Physical state: Disabled; NCCL got an async port error there); the ranks that used that rail lost their connections and every peer failed with NCCL remote errors",
             "faulty_nodes": [bad], "stage": "training", "iteration": last + 1,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 2500}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 3. Megatron-LM, Slurm per-task output files, kernel panic (MCE) takes a node
# ---------------------------------------------------------------------------------------------
def megatron_panic():
    b = Bundle("megatron-slurm-pertask-kernel-panic-4node")
    rnd = random.Random(33)
    hosts = ["gpu-c-017", "gpu-c-018", "gpu-c-019", "gpu-c-020"]
    ips = ["172.16.8.17", "172.16.8.18", "172.16.8.19", "172.16.8.20"]
    nodes = mk_nodes(hosts, ips, 8)
    bad = "gpu-c-019"
    jobid = 551902
    t0 = T("2026-11-26T19:30:02")
    last = 18473
    crash_t = None
    for ti, (h, ip, ranks) in enumerate(nodes):
        L = [] if h != bad else CutList()
        d = t0
        L.append("W%s 812%d torch/distributed/run.py:793] " % (torch_ts(d), ti))
        L.append("W%s 812%d torch/distributed/run.py:793] *****************************************" % (torch_ts(d), ti))
        L.append("W%s 812%d torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % (torch_ts(d), ti))
        L.append("W%s 812%d torch/distributed/run.py:793] *****************************************" % (torch_ts(d), ti))
        if ti == 0:
            L += ["using world size: 32, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 2 ",
                  "WARNING: Setting args.overlap_p2p_comm to False since non-interleaved schedule does not support overlapping p2p communication",
                  "using torch.bfloat16 for parameters ...",
                  "> initializing torch distributed ...",
                  "> initialized tensor model parallel with size 8",
                  "> initialized pipeline model parallel with size 2",
                  "> setting random seeds to 1234 ...",
                  "> compiling dataset index builder ...",
                  ">>> done with dataset index builder. Compilation time: 0.071 seconds",
                  " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 2196357120",
                  " loading checkpoint from /lustre/ckpt/gpt-70b at iteration 18000",
                  " checkpoint version 3.0",
                  "  successfully loaded checkpoint from /lustre/ckpt/gpt-70b [ t 0, p 0 ] at iteration 18000",
                  "(min, max) time across ranks (ms):",
                  "    load-checkpoint ................................: (61402.13, 61409.77)",
                  "[after model, optimizer, and learning rate scheduler are built] datetime: %s " % (t0 + timedelta(seconds=80)).strftime("%Y-%m-%d %H:%M:%S"),
                  "> building train, validation, and test datasets for GPT ...",
                  "> finished creating GPT datasets ...",
                  "[after dataloaders are built] datetime: %s " % (t0 + timedelta(seconds=95)).strftime("%Y-%m-%d %H:%M:%S"),
                  "done with setup ...",
                  "training ..."]
        else:
            L += ["/opt/megatron-lm/megatron/core/tensor_parallel/layers.py:%d: UserWarning: When using sequence parallelism it is recommended to set the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1 for maximum speedup" % 278 for _ in range(2)]
            L += ["/usr/local/lib/python3.12/dist-packages/transformer_engine/pytorch/module/base.py:631: DeprecationWarning: torch.cuda.amp.custom_fwd(args...) is deprecated. Please use torch.amp.custom_fwd(args..., device_type='cuda') instead."]
        d = t0 + timedelta(seconds=96)
        for it in range(18001, last + 1):
            d += timedelta(seconds=6.93 + rnd.uniform(-0.05, 0.05))
            if it % 10 == 0 and ti == 3:  # last pipeline stage prints the loss (pp=2: nodes 2,3 host stage 1; node 3 prints)
                L.append(" [%s] iteration    %5d/  250000 | consumed samples:     %8d | elapsed time per iteration (ms): %.1f | learning rate: %.6E | global batch size:   512 | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | number of nan iterations:   0 |"
                         % (d.strftime("%Y-%m-%d %H:%M:%S"), it, it * 512, 6930 + rnd.uniform(-40, 40), 1.2e-4 - it * 1e-10, 1.745 + rnd.uniform(-0.04, 0.04), 0.18 + rnd.uniform(0, 0.04)))
            if it == 18200 and ti == 0:
                L.append("saving checkpoint at iteration   18200 to /lustre/ckpt/gpt-70b in torch_dist format")
                L.append("  successfully saved checkpoint from iteration   18200 to /lustre/ckpt/gpt-70b [ t 1/8, p 1/2 ]")
        crash_t = d + timedelta(seconds=3.1)
        if h == bad:
            # the node panics; the log stops mid-line (no trailing newline)
            L.append("/opt/megatron-lm/megatron/core/tensor_parallel/layers.py:278: UserWarning: When using sequence parallelism it is recommend")
        else:
            d2 = crash_t + timedelta(minutes=10, seconds=0.8)
            for r in ranks:
                lr = r % 8
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out."
                         % (r, torch_ts(d2 + timedelta(milliseconds=lr * 3)), 88100 + lr, r, 2881342 + lr % 2, "SEND" if ti == 1 else ("ALLREDUCE" if ti == 0 else "RECV"), 13107200, 13107200, rnd.randint(40, 900)))
            for r in ranks[:2]:
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:1785] [PG 3 Rank %d] Exception (either an error or timeout) detected by watchdog at work: 2881342, last enqueued NCCL work: 2881343, last completed NCCL work: 2881341." % (r, torch_ts(d2), 88100 + r % 8, r % 8))
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:630] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (r, torch_ts(d2), 88100 + r % 8, r))
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (r, torch_ts(d2), 88100 + r % 8, r))
            d3 = d2 + timedelta(seconds=3)
            L.append("W%s 812%d torch/distributed/elastic/multiprocessing/api.py:890] Sending process %d closing signal SIGTERM" % (torch_ts(d3), ti, 88101))
            L.append("E%s 812%d torch/distributed/elastic/multiprocessing/api.py:862] failed (exitcode: -6) local_rank: 0 (pid: 88100) of binary: /usr/bin/python" % (torch_ts(d3), ti))
            L += ["Traceback (most recent call last):",
                  "  File \"/usr/local/bin/torchrun\", line 33, in <module>",
                  "    sys.exit(load_entry_point('torch==2.5.0a0+e000cf0', 'console_scripts', 'torchrun')())",
                  "  File \"/usr/local/lib/python3.12/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 355, in wrapper",
                  "    return f(*args, **kwargs)",
                  "  File \"/usr/local/lib/python3.12/dist-packages/torch/distributed/run.py\", line 919, in main",
                  "    run(args)",
                  "  File \"/usr/local/lib/python3.12/dist-packages/torch/distributed/run.py\", line 910, in run",
                  "    elastic_launch(",
                  "  File \"/usr/local/lib/python3.12/dist-packages/torch/distributed/launcher/api.py\", line 138, in __call__",
                  "    return launch_agent(self._config, self._entrypoint, list(args))",
                  "  File \"/usr/local/lib/python3.12/dist-packages/torch/distributed/launcher/api.py\", line 269, in launch_agent",
                  "    raise ChildFailedError(",
                  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                  "============================================================",
                  "pretrain_gpt.py FAILED",
                  "------------------------------------------------------------",
                  "Failures:",
                  "  <NO_OTHER_FAILURES>",
                  "------------------------------------------------------------",
                  "Root Cause (first observed failure):",
                  "[0]:",
                  "  time      : %s" % d3.strftime("%Y-%m-%d_%H:%M:%S"),
                  "  host      : %s" % h,
                  "  rank      : %d (local_rank: 0)" % ranks[0],
                  "  exitcode  : -6 (pid: 88100)",
                  "  error_file: <N/A>",
                  "  traceback : Signal 6 (SIGABRT) received by PID 88100",
                  "============================================================"]
        b.add("logs/%s/gpt70b-%d-%d.out" % (h, jobid, ti), L)
    # batch script output on the head node
    d = crash_t
    B = ["+ srun --output=logs/gpt70b-%%j-%%t.out --kill-on-bad-exit=1 torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint gpu-c-017:29500 pretrain_gpt.py ...",
         "srun: error: Node failure on %s" % bad,
         "slurmstepd: error: *** JOB %d ON gpu-c-017 CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***" % (jobid, (crash_t + timedelta(seconds=611)).strftime("%Y-%m-%dT%H:%M:%S")),
         "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
         "srun: error: gpu-c-017: task 0: Exited with exit code 1",
         "srun: error: gpu-c-018: task 1: Exited with exit code 1",
         "srun: error: gpu-c-020: task 3: Exited with exit code 1"]
    b.add("logs/gpu-c-017/slurm-%d.out" % jobid, B)
    # kdump vmcore-dmesg from the crashed node (collected after it rebooted)
    k = "[%12.6f]"
    up = 604803.0
    V = [k % (up - 4000.1) + " nvidia 0000:19:00.0: Enabling HDA controller",
         k % (up - 12.3) + " mce: [Hardware Error]: Machine check events logged",
         k % (up - 0.41) + " mce: [Hardware Error]: CPU 37: Machine Check Exception: 5 Bank 13: be00000001010091",
         k % (up - 0.41) + " mce: [Hardware Error]: RIP !INEXACT! 10:<ffffffff9a2d1c7e> {native_queued_spin_lock_slowpath+0x1ae/0x2b0}",
         k % (up - 0.41) + " mce: [Hardware Error]: TSC 15c2a8bd7e23d ADDR 3f6c91d40 MISC 200000c020001086 ",
         k % (up - 0.41) + " mce: [Hardware Error]: PROCESSOR 0:806f8 TIME 1764214551 SOCKET 1 APIC 4b microcode 2b000590",
         Mark(k % (up - 0.41) + " mce: [Hardware Error]: Run the above through 'mcelog --ascii'"),
         Mark(k % (up - 0.40) + " Kernel panic - not syncing: Fatal machine check"),
         k % (up - 0.40) + " Kernel Offset: 0x18000000 from 0xffffffff81000000 (relocation range: 0xffffffff80000000-0xffffffffbfffffff)"]
    b.add("probes/%s/vmcore-dmesg.txt" % bad, ["# /var/crash/127.0.0.1-%s/vmcore-dmesg.txt" % (crash_t.strftime("%Y-%m-%d-%H:%M:%S"))] + V)
    b.add("probes/%s/ssh.json" % bad, [json.dumps({"probe": "ssh", "status": "fail", "detail": "ssh: connect to host gpu-c-019 port 22: No route to host (collected %s)" % iso(crash_t + timedelta(minutes=11))})])
    for h in hosts:
        if h != bad:
            b.add("probes/%s/dmesg.txt" % h, dmesg_boot(T("2026-11-19T19:25:40"), h))
    job = """job_id: "551902"
name: gpt-70b-pretrain
framework: megatron
status: failed
started_at: %s
ended_at: %s
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}
scheduler: slurm
nodes:
%scode:
  - {commit: e7a2910, at: 2026-11-02T14:00:00Z, message: "tp-comm-overlap on for 70b"}
  - {commit: 0c4d8b3, at: 2026-11-21T10:32:00Z, message: "logging: print grad norm every step"}
checkpoints:
  - {step: 18000, at: 2026-11-26T18:55:12Z, path: /lustre/ckpt/gpt-70b/iter_0018000, valid: true}
  - {step: 18200, at: %s, path: /lustre/ckpt/gpt-70b/iter_0018200, valid: true}
spares: 3
history: ["549877", "550411"]
""" % (iso(t0), iso(crash_t + timedelta(seconds=640)), nodes_yaml(nodes), iso(t0 + timedelta(seconds=96 + 200 * 6.93 + 30)))
    truth = {"fault": "node_crash", "category": "hardware",
             "root_cause": "gpu-c-019 took a fatal machine check (CPU 37, bank 13) and the kernel panicked; its log stops mid-line and the ranks on the other three nodes timed out in the NCCL watchdog ten minutes later",
             "faulty_nodes": [bad], "stage": "training", "iteration": last + 1,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 18200}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 4. HF accelerate on Azure ML (std_log_process_NN.txt per process), V100 Xid 48 DBE
# ---------------------------------------------------------------------------------------------
def aml_xid48():
    b = Bundle("azureml-accelerate-xid48-dbe-2node")
    rnd = random.Random(44)
    hosts = ["4a7c1d2e9f0b4c11a2b3c4d5e6f70001000000", "4a7c1d2e9f0b4c11a2b3c4d5e6f70001000001"]
    ips = ["10.0.0.4", "10.0.0.5"]
    nodes = mk_nodes(hosts, ips, 8)
    bad, bad_rank = hosts[1], 11
    t0 = T("2026-11-26T02:10:44")
    last = 3416
    for h, ip, ranks in nodes:
        for r in ranks:
            L = []
            d = t0
            L.append("/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/accelerate/utils/launch.py:253: FutureWarning: `fsdp_backward_prefetch_policy` is deprecated and will be removed in version 0.27.0 of 🤗 Accelerate. Use `fsdp_backward_prefetch` instead")
            L.append("  warnings.warn(")
            L.append("[INFO|configuration_utils.py:733] %s >> loading configuration file /mnt/azureml/cr/j/3f2a/cap/data-capability/wd/INPUT_model/config.json" % d.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3] if r == 0 else "Process rank: %d, device: cuda:%d, n_gpu: 1, distributed training: True, 16-bits training: True" % (r, r % 8))
            L.append("%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_ib0:1/IB ; OOB eth0:%s<0>" % (h[-12:], 3100 + r % 8, 3100 + r % 8, r % 8, ip))
            L.append("%s:%d:%d [%d] NCCL INFO comm 0x55d0c6a1e8a0 rank %d nRanks 16 nNodes 2 localRanks 8 localRank %d MNNVL 0" % (h[-12:], 3100 + r % 8, 3190 + r % 8, r % 8, r, r % 8))
            L.append("/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/transformers/trainer.py:3098: FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value), which uses the default pickle module implicitly. It is possible to construct malicious pickle data which will execute arbitrary code during unpickling (See https://github.com/pytorch/pytorch/blob/main/SECURITY.md#untrusted-models for more details). In a future release, the default value for `weights_only` will be flipped to `True`.")
            L.append("  torch.load(os.path.join(checkpoint, OPTIMIZER_NAME), map_location=map_location)")
            if r == 0:
                L += ["[INFO|trainer.py:2314] %s >> ***** Running training *****" % (t0 + timedelta(seconds=70)).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3],
                      "[INFO|trainer.py:2315] >>   Num examples = 1,536,000", "[INFO|trainer.py:2316] >>   Num Epochs = 1",
                      "[INFO|trainer.py:2317] >>   Instantaneous batch size per device = 4",
                      "[INFO|trainer.py:2320] >>   Total train batch size (w. parallel, distributed & accumulation) = 128",
                      "[INFO|trainer.py:2321] >>   Gradient Accumulation steps = 2", "[INFO|trainer.py:2322] >>   Total optimization steps = 12,000",
                      "[INFO|trainer.py:2347] >>   Continuing training from checkpoint, will skip to saved global_step",
                      "[INFO|trainer.py:2349] >>   Continuing training from global step 3000"]
                bar = []
                loss = 1.41
                for s in range(3001, last):
                    if s % 10 == 0:
                        loss += rnd.uniform(-0.03, 0.028)
                        bar.append("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}" % (loss, 0.6 + rnd.uniform(0, 0.3), 2e-5 * (1 - s / 12000), s / 12000))
                # tqdm bar redrawn with \r, one physical line per 50 steps
                line = ""
                for s in range(3001, last + 1):
                    el = (s - 3001) * 11.9
                    line += "\r %2d%%|%s%s| %d/12000 [%d:%02d:%02d<%d:%02d:%02d, 11.9%ss/it]" % (s * 100 // 12000, "█" * (s * 10 // 12000), " " * (10 - s * 10 // 12000), s, el // 3600 + 2, (el // 60) % 60, el % 60, 29, 10, 3, "")
                    if s % 50 == 0:
                        L.append(line)
                        line = ""
                        if bar:
                            L += bar[:5]
                            bar = bar[5:]
                L.append(line)
            if r == bad_rank:
                d = t0 + timedelta(seconds=70 + (last - 3001) * 11.9)
                L += ["Traceback (most recent call last):",
                      "  File \"/mnt/azureml/cr/j/3f2a/exe/wd/train_sft.py\", line 214, in <module>",
                      "    main()",
                      "  File \"/mnt/azureml/cr/j/3f2a/exe/wd/train_sft.py\", line 208, in main",
                      "    trainer.train(resume_from_checkpoint=args.resume)",
                      "  File \"/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/transformers/trainer.py\", line 2123, in train",
                      "    return inner_training_loop(",
                      "  File \"/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/transformers/trainer.py\", line 2481, in _inner_training_loop",
                      "    tr_loss_step = self.training_step(model, inputs)",
                      "  File \"/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/transformers/trainer.py\", line 3612, in training_step",
                      "    self.accelerator.backward(loss, **kwargs)",
                      "  File \"/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/accelerate/accelerator.py\", line 2241, in backward",
                      "    loss.backward(**kwargs)",
                      "  File \"/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/torch/_tensor.py\", line 521, in backward",
                      "    torch.autograd.backward(",
                      "  File \"/azureml-envs/azureml_8b1f/lib/python3.10/site-packages/torch/autograd/graph.py\", line 769, in _engine_run_backward",
                      "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
                      Mark("RuntimeError: CUDA error: uncorrectable ECC error encountered"),
                      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                      "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                      "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                      ""]
                fail_t = d
            elif h == bad:
                pass  # killed by the node's launcher (SIGTERM): nothing more printed
            else:
                d = t0 + timedelta(seconds=70 + (last - 3001) * 11.9 + 600.5)
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=_REDUCE_SCATTER_BASE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out."
                         % (r, torch_ts(d), 3300 + r, r, 1203311, 65536000, 4096000, rnd.randint(10, 99)))
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: 1203311, last enqueued NCCL work: 1203314, last completed NCCL work: 1203310." % (r, torch_ts(d), 3300 + r, r))
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:621] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (r, torch_ts(d), 3300 + r, r))
            b.add("logs/%s/std_log_process_%02d.txt" % (h, r), L)
    xt = fail_t - timedelta(seconds=1)
    b.add("probes/%s/dmesg.txt" % bad, dmesg_boot(T("2026-11-14T08:02:51"), bad) + [
        dm(xt) + " NVRM: GPU at PCI:0004:00:00: GPU-8c1e2f7a-44d0-1b3e-9a6c-2d5f0e7b3c91",
        dm(xt) + " NVRM: GPU Board Serial Number: 0323218062817",
        Mark(dm(xt) + " NVRM: Xid (PCI:0004:00:00): 48, pid=3314, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."),
        Mark(dm(xt + timedelta(seconds=1)) + " NVRM: Xid (PCI:0004:00:00): 63, pid=3314, name=python, Dynamic Page Retirement: New page retired, reboot to activate (0x00000000003a91f2)."),
        dm(xt + timedelta(seconds=3)) + " NVRM: Xid (PCI:0004:00:00): 45, pid=3314, name=python, Ch 00000010"])
    for h in hosts:
        G = ["==============NVSMI LOG==============", "", "Timestamp                                 : %s" % (fail_t + timedelta(minutes=12)).strftime("%a %b %d %H:%M:%S %Y"),
             "Driver Version                            : 535.216.01", "CUDA Version                              : 12.2", "", "Attached GPUs                             : 8"]
        for g in range(8):
            isbad = (h == bad and g == 3)
            G += ["GPU 000%d:00:00.0" % (g + 1), "    Product Name                          : Tesla V100-SXM2-32GB",
                  "    Serial Number                         : 03232180%05d" % (62800 + g + 20 * hosts.index(h)),
                  "    ECC Mode", "        Current                           : Enabled", "        Pending                           : Enabled",
                  "    ECC Errors", "        Volatile", "            Single Bit            ",
                  "                Device Memory             : 0", "                Register File             : 0", "                L1 Cache                  : 0",
                  "                L2 Cache                  : 0", "                Texture Memory            : N/A", "                Texture Shared            : N/A",
                  "                CBU                       : N/A", "                Total                     : 0",
                  "            Double Bit            ",
                  (Mark if isbad else str)("                Device Memory             : %d" % (1 if isbad else 0)),
                  "                Register File             : 0", "                L1 Cache                  : 0", "                L2 Cache                  : 0",
                  "                Texture Memory            : N/A", "                Texture Shared            : N/A", "                CBU                       : 0",
                  "                Total                     : %d" % (1 if isbad else 0),
                  "    Retired Pages", "        Single Bit ECC                    : 0",
                  "        Double Bit ECC                    : %d" % (1 if isbad else 0),
                  (Mark if isbad else str)("        Pending Page Blacklist            : %s" % ("Yes" if isbad else "No"))]
        b.add("probes/%s/nvidia-smi.txt" % h, G)
    job = """job_id: "sft-llama2-13b-hero-7g2k"
name: llama2-13b-sft-azureml
framework: other
launcher: accelerate launch (Azure ML command job, PyTorch distribution, process_count_per_instance=8)
status: failed
started_at: %s
ended_at: %s
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}
nodes:
%scode:
  - {commit: 9aa01c3, at: 2026-11-20T15:00:00Z, message: "sft: new chat template"}
checkpoints:
  - {step: 2500, at: 2026-11-25T23:30:00Z, path: outputs/checkpoint-2500, valid: true}
  - {step: 3000, at: 2026-11-26T02:05:10Z, path: outputs/checkpoint-3000, valid: true}
spares: 0
""" % (iso(t0), iso(fail_t + timedelta(seconds=640)), nodes_yaml(nodes))
    truth = {"fault": "gpu_ecc_uncorrectable", "category": "hardware",
             "root_cause": "uncorrectable double-bit ECC error (Xid 48) in the framebuffer of GPU 3 (PCI 0004:00:00) on the second Azure ML node; rank 11 died with 'uncorrectable ECC error encountered' and nvidia-smi shows a DBE retired page pending",
             "faulty_nodes": [bad], "stage": "training", "iteration": last + 1,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 3000}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 5. Lightning CLI, A100 row-remap failure (Xid 94 + Xid 64), per-node stdout files
# ---------------------------------------------------------------------------------------------
def lightning_rowremap():
    b = Bundle("lightning-cli-a100-rowremap-xid64-4node")
    rnd = random.Random(55)
    hosts = ["a100-n20", "a100-n21", "a100-n22", "a100-n23"]
    ips = ["192.168.50.20", "192.168.50.21", "192.168.50.22", "192.168.50.23"]
    nodes = mk_nodes(hosts, ips, 8)
    bad, bad_rank = "a100-n23", 30
    t0 = T("2026-11-27T01:00:12")
    last = 7431  # global_step completed; fault during 7432
    steps_per_epoch = 2500
    for ni, (h, ip, ranks) in enumerate(nodes):
        L = []
        for r in ranks:
            L.append("Initializing distributed: GLOBAL_RANK: %d, MEMBER: %d/32" % (r, r + 1))
        if ni == 0:
            L += ["----------------------------------------------------------------------------------------------------",
                  "distributed_backend=nccl", "All distributed processes registered. Starting with 32 processes",
                  "----------------------------------------------------------------------------------------------------", ""]
            L.append("GPU available: True (cuda), used: True")
            L.append("TPU available: False, using: 0 TPU cores")
            L.append("HPU available: False, using: 0 HPUs")
        L.append("/opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/connectors/checkpoint_connector.py:186: .fit(ckpt_path=\"last\") is set, but there is not yet a fault-tolerant checkpoint available. Restoring from the latest checkpoint in /data/runs/vit-h/checkpoints.")
        for r in ranks:
            L.append("LOCAL_RANK: %d - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]" % (r % 8))
        L.append("Restoring states from the checkpoint path at /data/runs/vit-h/checkpoints/epoch=2-step=7000.ckpt")
        if ni == 0:
            L += ["", "  | Name      | Type               | Params | Mode ", "---------------------------------------------------------",
                  "0 | model     | VisionTransformer  | 632 M  | train", "1 | criterion | SoftTargetCrossEntropy | 0  | train",
                  "2 | mixup     | Mixup              | 0      | train", "---------------------------------------------------------",
                  "632 M     Trainable params", "0         Non-trainable params", "632 M     Total params", "2,528.127 Total estimated model params size (MB)", ""]
            L.append("Restored all states from the checkpoint at /data/runs/vit-h/checkpoints/epoch=2-step=7000.ckpt")
            L.append("/opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=31` in the `DataLoader` to improve performance.")
            # rich/tqdm bar, \r redraws, Lightning TQDMProgressBar format
            line = ""
            loss = 3.12
            for g in range(7001, last + 1):
                i = g - 2 * steps_per_epoch
                loss += rnd.uniform(-0.02, 0.019)
                el = i * 1.33
                line += "\rEpoch 2:  %2d%%|%s%s| %d/%d [%02d:%02d<%02d:%02d,  1.33it/s, v_num=3, train_loss=%.3f]" % (
                    i * 100 // steps_per_epoch, "█" * (i * 10 // steps_per_epoch), " " * (10 - i * 10 // steps_per_epoch), i, steps_per_epoch,
                    el // 60, el % 60, ((steps_per_epoch - i) * 1.33) // 60, ((steps_per_epoch - i) * 1.33) % 60, loss)
                if g % 40 == 0:
                    L.append(line)
                    line = ""
            L.append(line)
        fail_t = t0 + timedelta(seconds=95 + (last - 7000) * 0.752)
        if h == bad:
            L += ["[rank%d]: Traceback (most recent call last):" % bad_rank,
                  "[rank%d]:   File \"/work/vit/main.py\", line 41, in <module>" % bad_rank,
                  "[rank%d]:     cli_main()" % bad_rank,
                  "[rank%d]:   File \"/work/vit/main.py\", line 37, in cli_main" % bad_rank,
                  "[rank%d]:     LightningCLI(ViTModule, ImageNetDataModule, save_config_kwargs={\"overwrite\": True})" % bad_rank,
                  "[rank%d]:   File \"/opt/venv/lib/python3.11/site-packages/lightning/pytorch/cli.py\", line 394, in __init__" % bad_rank,
                  "[rank%d]:     self._run_subcommand(self.subcommand)" % bad_rank,
                  "[rank%d]:   File \"/opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py\", line 538, in fit" % bad_rank,
                  "[rank%d]:     call._call_and_handle_interrupt(" % bad_rank,
                  "[rank%d]:   File \"/opt/venv/lib/python3.11/site-packages/lightning/pytorch/loops/optimization/automatic.py\", line 318, in _training_step" % bad_rank,
                  "[rank%d]:     training_step_output = call._call_strategy_hook(trainer, \"training_step\", *kwargs.values())" % bad_rank,
                  "[rank%d]:   File \"/work/vit/module.py\", line 88, in training_step" % bad_rank,
                  "[rank%d]:     self.log(\"train_loss\", loss.item(), prog_bar=True, sync_dist=False)" % bad_rank,
                  Mark("[rank%d]: RuntimeError: CUDA error: uncorrectable ECC error encountered" % bad_rank),
                  "[rank%d]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect." % bad_rank,
                  "[rank%d]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1" % bad_rank,
                  "[rank%d]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions." % bad_rank, ""]
        else:
            d = fail_t + timedelta(seconds=1800.4)
            for r in ranks[:3]:
                L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=158120961, NumelOut=158120961, Timeout(ms)=1800000) ran for 1800%03d milliseconds before timing out."
                         % (r, torch_ts(d), 40100 + r % 8, r, 29745, rnd.randint(10, 99)))
            L.append("[rank%d]:[E%s %d ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: 29745, last enqueued NCCL work: 29745, last completed NCCL work: 29744." % (ranks[0], torch_ts(d), 40100, ranks[0]))
            L.append("srun: error: %s: tasks %d-%d: Killed" % (h, ranks[0], ranks[-1]) if ni == 0 else "[rank%d]:[E%s %d ProcessGroupNCCL.cpp:621] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (ranks[0], torch_ts(d), 40100, ranks[0]))
        b.add("logs/%s/stdout-%s.log" % (h, h), L)
    xt = fail_t - timedelta(seconds=2)
    b.add("probes/%s/dmesg.txt" % bad, dmesg_boot(T("2026-11-21T11:40:03"), bad) + [
        dm(xt) + " NVRM: Xid (PCI:0000:c7:00): 94, pid=40137, name=python, Contained ECC error.",
        Mark(dm(xt) + " NVRM: Xid (PCI:0000:c7:00): 64, pid='<unknown>', name=<unknown>, Row Remapper: Failed to remap row"),
        dm(xt + timedelta(seconds=5)) + " NVRM: Xid (PCI:0000:c7:00): 45, pid=40137, name=python, Ch 00000008"])
    for h in hosts:
        G = ["==============NVSMI LOG==============", "", "Timestamp                                 : %s" % (fail_t + timedelta(minutes=40)).strftime("%a %b %d %H:%M:%S %Y"),
             "Driver Version                            : 550.127.05", "CUDA Version                              : 12.4", "", "Attached GPUs                             : 8"]
        for g, bus in enumerate([0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xc7]):
            isbad = (h == bad and g == 7)
            G += ["GPU 00000000:%02X:00.0" % bus, "    Product Name                          : NVIDIA A100-SXM4-80GB",
                  "    ECC Errors", "        Volatile", "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                  "            DRAM Correctable              : %d" % (212 if isbad else 0), "            DRAM Uncorrectable            : %d" % (1 if isbad else 0),
                  "    Retired Pages", "        Single Bit ECC                    : N/A", "        Double Bit ECC                    : N/A", "        Pending Page Blacklist            : N/A",
                  "    Remapped Rows", "        Correctable Error                 : %d" % (3 if isbad else 0),
                  "        Uncorrectable Error               : %d" % (8 if isbad else 0),
                  "        Pending                           : No",
                  (Mark if isbad else str)("        Remapping Failure Occurred        : %s" % ("Yes" if isbad else "No")),
                  "        Bank Remap Availability Histogram",
                  "            Max                           : %d bank(s)" % (632 if isbad else 640), "            High                          : 0 bank(s)",
                  "            Partial                       : 0 bank(s)", "            Low                           : %d bank(s)" % (7 if isbad else 0),
                  "            None                          : %d bank(s)" % (1 if isbad else 0)]
        b.add("probes/%s/nvidia-smi.txt" % h, G)
    job = """job_id: "vit-h-in22k-0311"
name: vit-huge-in22k
framework: other
launcher: sbatch + srun (one task per GPU), python main.py fit --config configs/vit_h.yaml (Lightning 2.4 CLI)
status: failed
started_at: %s
ended_at: %s
exit_code: 137
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}
nodes:
%scode:
  - {commit: 3e91c07, at: 2026-11-18T09:12:00Z, message: "mixup: cutmix prob 1.0"}
checkpoints:
  - {step: 6500, at: 2026-11-26T23:58:31Z, path: /data/runs/vit-h/checkpoints/epoch=2-step=6500.ckpt, valid: true}
  - {step: 7000, at: 2026-11-27T00:59:40Z, path: /data/runs/vit-h/checkpoints/epoch=2-step=7000.ckpt, valid: true}
spares: 1
""" % (iso(t0), iso(fail_t + timedelta(seconds=1830)), nodes_yaml(nodes))
    truth = {"fault": "gpu_row_remap_failure", "category": "hardware",
             "root_cause": "GPU 7 (PCI 0000:c7:00) of a100-n23 hit an uncorrectable DRAM error and the row remapper could not remap the row (Xid 64, nvidia-smi Remapping Failure Occurred: Yes); rank 30 died with an uncorrectable ECC CUDA error",
             "faulty_nodes": [bad], "stage": "training", "iteration": last + 1,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 7000}]}
    b.write(job, truth)
# ---------------------------------------------------------------------------------------------
# 6. NeMo-Run on Slurm, fabric manager down (CUDA error 802) at init
# ---------------------------------------------------------------------------------------------
def nemo_fm_down():
    b = Bundle("nemo-run-fabricmanager-802-init-4node")
    hosts = ["h100-b10", "h100-b11", "h100-b12", "h100-b13"]
    ips = ["10.60.2.10", "10.60.2.11", "10.60.2.12", "10.60.2.13"]
    nodes = mk_nodes(hosts, ips, 8)
    bad = "h100-b12"
    jobid = 990114
    t0 = T("2026-11-27T05:58:30")
    nm = lambda d, lvl="I": "[NeMo %s %s nemo_logging:393]" % (lvl, d.strftime("%Y-%m-%d %H:%M:%S"))
    for ti, (h, ip, ranks) in enumerate(nodes):
        L = []
        d = t0
        L.append("W%s 3310%d torch/distributed/run.py:793] *****************************************" % (torch_ts(d), ti))
        if h == bad:
            for r in ranks:
                lr = r % 8
                L.append("/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized (Triggered internally at /opt/pytorch/pytorch/c10/cuda/CUDAFunctions.cpp:108.)")
                L.append("  return torch._C._cuda_getDeviceCount() > 0")
            for r in ranks[:2]:
                L += ["[rank%d]: Traceback (most recent call last):" % r,
                      "[rank%d]:   File \"/opt/NeMo/nemo/collections/llm/recipes/run/pretrain.py\", line 61, in <module>" % r,
                      "[rank%d]:     llm.pretrain(model, data, trainer, log=log, resume=resume, optim=optim)" % r,
                      "[rank%d]:   File \"/opt/NeMo/nemo/lightning/pytorch/strategies/megatron_strategy.py\", line 311, in setup_environment" % r,
                      "[rank%d]:     super().setup_environment()" % r,
                      "[rank%d]:   File \"/usr/local/lib/python3.10/dist-packages/lightning/pytorch/strategies/ddp.py\", line 154, in setup_environment" % r,
                      "[rank%d]:     self.accelerator.setup_device(self.root_device)" % r,
                      "[rank%d]:   File \"/usr/local/lib/python3.10/dist-packages/lightning/pytorch/accelerators/cuda.py\", line 46, in setup_device" % r,
                      "[rank%d]:     torch.cuda.set_device(device)" % r,
                      "[rank%d]:   File \"/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py\", line 420, in set_device" % r,
                      "[rank%d]:     torch._C._cuda_setDevice(device)" % r,
                      "[rank%d]:   File \"/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py\", line 314, in _lazy_init" % r,
                      "[rank%d]:     torch._C._cuda_init()" % r,
                      (Mark if r == ranks[0] else str)("[rank%d]: RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized" % r)]
            d += timedelta(seconds=14)
            L.append("E%s 33102 torch/distributed/elastic/multiprocessing/api.py:862] failed (exitcode: 1) local_rank: 0 (pid: 33181) of binary: /usr/bin/python" % torch_ts(d))
            L += ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "============================================================",
                  "/opt/NeMo/nemo/collections/llm/recipes/run/pretrain.py FAILED", "------------------------------------------------------------", "Failures:"]
            for k, r in enumerate(ranks[1:]):
                L += ["[%d]:" % (k + 1), "  time      : %s" % d.strftime("%Y-%m-%d_%H:%M:%S"), "  host      : %s" % h, "  rank      : %d (local_rank: %d)" % (r, r % 8),
                      "  exitcode  : 1 (pid: %d)" % (33181 + r % 8), "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]
            L += ["------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
                  "  time      : %s" % d.strftime("%Y-%m-%d_%H:%M:%S"), "  host      : %s" % h, "  rank      : %d (local_rank: 0)" % ranks[0],
                  "  exitcode  : 1 (pid: 33181)", "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                  "============================================================"]
        else:
            L.append(nm(d) + " Experiments will be logged at /lustre/nemo/exp/llama31_70b/default/2026-11-27_05-58-31")
            L.append(nm(d, "W") + " \"update_logger_directory\" is True. Overwriting tensorboard logger \"save_dir\" to /lustre/nemo/exp/llama31_70b/default/2026-11-27_05-58-31/tb_logs")
            L.append(nm(d) + " Rank %d has data parallel group : [%s]" % (ranks[0], ", ".join(str(ranks[0] % 8 + 8 * k) for k in range(4))))
            L.append(nm(d) + " Rank %d has tensor model parallel group: [%s]" % (ranks[0], ", ".join(map(str, ranks))))
            L.append("Initializing distributed: GLOBAL_RANK: %d, MEMBER: %d/32" % (ranks[0], ranks[0] + 1))
            L.append("/usr/local/lib/python3.10/dist-packages/megatron/core/dist_checkpointing/strategies/torch.py:847: FutureWarning: `load_state_dict` is deprecated and will be removed in future versions. Please use `load` instead.")
            d += timedelta(seconds=1801)
            for r in ranks[:2]:
                L += ["[rank%d]: Traceback (most recent call last):" % r,
                      "[rank%d]:   File \"/usr/local/lib/python3.10/dist-packages/lightning/fabric/utilities/distributed.py\", line 297, in _init_dist_connection" % r,
                      "[rank%d]:     torch.distributed.init_process_group(torch_distributed_backend, rank=global_rank, world_size=world_size, **kwargs)" % r,
                      "[rank%d]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 1520, in init_process_group" % r,
                      "[rank%d]:     store, rank, world_size = next(rendezvous_iterator)" % r,
                      "[rank%d]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 24/32 clients joined." % r]
            L.append("E%s 3310%d torch/distributed/elastic/multiprocessing/api.py:862] failed (exitcode: 1) local_rank: 0 (pid: 33181) of binary: /usr/bin/python" % (torch_ts(d + timedelta(seconds=3)), ti))
        b.add("logs/%s/log-nemo.llama31_70b_pretrain_%d_%d.out" % (h, jobid, ti), L)
    boot = T("2026-11-27T05:31:12")
    b.add("probes/%s/dmesg.txt" % bad, dmesg_boot(boot, bad) + [
        dm(boot + timedelta(seconds=61)) + " nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 37 egress non-posted PRIV error (First)",
        Mark(dm(boot + timedelta(seconds=61)) + " nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}"),
        dm(boot + timedelta(seconds=62)) + " nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Severity 1 Engine instance 37 Sub-engine instance 00"])
    b.add("probes/%s/systemctl-status-nvidia-fabricmanager.txt" % bad, [
        "× nvidia-fabricmanager.service - NVIDIA fabric manager service",
        "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)",
        Mark("     Active: failed (Result: exit-code) since Fri 2026-11-27 05:32:19 UTC; 1h 02min ago"),
        "    Process: 4177 ExecStart=/usr/bin/nvidia-fabricmanager-start.sh --mode start --fm-config-file /usr/share/nvidia/nvswitch/fabricmanager.cfg (code=exited, status=1/FAILURE)",
        "        CPU: 1.204s", "",
        "Nov 27 05:32:05 h100-b12 systemd[1]: Starting NVIDIA fabric manager service...",
        "Nov 27 05:32:19 h100-b12 nvidia-fabricmanager-start.sh[4177]: Detected Pre-NVL5 system",
        "Nov 27 05:32:19 h100-b12 nvidia-fabricmanager-start.sh[4177]: \"/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg\" failed! Exit code: 1",
        "Nov 27 05:32:19 h100-b12 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
        "Nov 27 05:32:19 h100-b12 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.",
        "Nov 27 05:32:19 h100-b12 systemd[1]: Failed to start NVIDIA fabric manager service."])
    for h in hosts:
        st = "In Progress" if h == bad else "Completed"
        G = ["==============NVSMI LOG==============", "Driver Version                            : 550.127.05", "Attached GPUs                             : 8"]
        for g, bus in enumerate([0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]):
            G += ["GPU 00000000:%02X:00.0" % bus, "    Product Name                          : NVIDIA H100 80GB HBM3",
                  "    Fabric", "        State                             : %s" % st, "        Status                            : %s" % ("N/A" if h == bad else "Success")]
        b.add("probes/%s/nvidia-smi.txt" % h, G)
    job = """job_id: "990114"
name: llama31-70b-pretrain
framework: nemo
launcher: NeMo-Run SlurmExecutor (torchrun per node, nodes=4, ntasks_per_node=1)
status: failed
started_at: %s
ended_at: %s
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 8, pp: 1, dp: 4, cp: 1, ep: 1}
scheduler: slurm
nodes:
%scode:
  - {commit: b4e0d19, at: 2026-11-15T12:00:00Z, message: "recipe: seq_length 8192"}
checkpoints:
  - {step: 24500, at: 2026-11-26T21:40:00Z, path: /lustre/nemo/exp/llama31_70b/checkpoints/step=24500, valid: true}
  - {step: 25000, at: 2026-11-27T04:12:00Z, path: /lustre/nemo/exp/llama31_70b/checkpoints/step=25000, valid: true}
spares: 2
note: "h100-b12 was rebooted for maintenance at 05:31 and returned to the partition at 05:40"
""" % (iso(t0), iso(t0 + timedelta(seconds=1830)), nodes_yaml(nodes))
    truth = {"fault": "fabric_manager_down", "category": "infrastructure",
             "root_cause": "on h100-b12 nvidia-fabricmanager failed to start after the reboot (NVSwitch SXid 12028 at boot), the GPUs never registered with the NVLink fabric (Fabric State: In Progress), so CUDA init failed on all 8 local ranks with error 802 'system not yet initialized' and the other 24 ranks timed out in the rendezvous",
             "faulty_nodes": [bad], "stage": "init", "iteration": None,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 25000}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 7. JAX multi-host, plain Python logging with hostnames, PCIe AER fatal on one GPU
# ---------------------------------------------------------------------------------------------
def jax_aer():
    b = Bundle("jax-pylogging-pcie-aer-fatal-4node")
    rnd = random.Random(77)
    hosts = ["gpu-j-01", "gpu-j-02", "gpu-j-03", "gpu-j-04"]
    ips = ["10.9.0.11", "10.9.0.12", "10.9.0.13", "10.9.0.14"]
    nodes = mk_nodes(hosts, ips, 8)
    bad = "gpu-j-03"
    t0 = T("2026-11-27T08:20:00")
    last = 15236
    for pi, (h, ip, ranks) in enumerate(nodes):
        L = []
        lg = lambda d, lvl, name, msg: "%s,%03d %s %s %s: %s" % (d.strftime("%Y-%m-%d %H:%M:%S"), rnd.randint(0, 999), h, lvl, name, msg)
        d = t0
        L.append(lg(d, "INFO", "jax._src.distributed", "Connecting to JAX distributed service on gpu-j-01:8476"))
        L.append(lg(d, "INFO", "jax._src.xla_bridge", "Unable to initialize backend 'rocm': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'"))
        L.append(lg(d, "INFO", "jax._src.xla_bridge", "Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory"))
        L.append(lg(d, "INFO", "trainer", "process_index=%d process_count=4 local_devices=8 global_devices=32" % pi))
        L.append(lg(d, "INFO", "trainer", "mesh: {'data': 4, 'fsdp': 8}"))
        L.append(lg(d + timedelta(seconds=40), "INFO", "absl", "Restoring checkpoint from /gcs-fuse/ckpt/t5x-xxl-run7/15000."))
        L.append(lg(d + timedelta(seconds=40), "WARNING", "py.warnings", "/opt/venv/lib/python3.11/site-packages/orbax/checkpoint/type_handlers.py:1394: UserWarning: Couldn't find sharding info under RestoreArgs. Populating sharding info from sharding file. Please note restoration time will be slightly increased due to reading from file instead of directly from RestoreArgs."))
        L.append(lg(d + timedelta(seconds=95), "INFO", "absl", "Finished restoring checkpoint in 55.02 seconds from /gcs-fuse/ckpt/t5x-xxl-run7/15000."))
        d += timedelta(seconds=100)
        for s in range(15001, last + 1):
            d += timedelta(seconds=2.41 + rnd.uniform(-0.02, 0.02))
            if s % 5 == 0:
                L.append(lg(d, "INFO", "trainer", "step=%d loss=%.4f z_loss=%.5f grad_norm=%.3f learning_rate=%.3e steps_per_sec=%.3f"
                            % (s, 2.118 + rnd.uniform(-0.03, 0.03), 1.2e-4 + rnd.uniform(0, 2e-5), 0.34 + rnd.uniform(0, 0.05), 1e-3 / (s ** 0.5) * 100, 0.414 + rnd.uniform(-0.003, 0.003))))
            if s == 15100:
                L.append(lg(d, "WARNING", "gcsfuse_reader", "Retrying read of shard 0193 of /gcs-fuse/data/c4_en/train-00193-of-01024 after transient error (attempt 1/5)"))
                L.append(lg(d, "INFO", "gcsfuse_reader", "Read of shard 0193 succeeded on attempt 2"))
        fail_t = d + timedelta(seconds=1.9)
        if h == bad:
            L.append("E%s 4471 pjrt_stream_executor_client.cc:3085] Execution of replica 5 failed: INTERNAL: Failed to complete all kernels launched on stream 0x55f0c1a3d2e0: stream did not block host until done; was already in an error state"
                     % fail_t.strftime("%m%d %H:%M:%S.%f"))
            L.append(lg(fail_t, "ERROR", "trainer", "train step %d failed on process 2" % (last + 1)))
            L += ["Traceback (most recent call last):",
                  "  File \"/workspace/t5x/train.py\", line 612, in <module>",
                  "    app.run(main)",
                  "  File \"/workspace/t5x/train.py\", line 488, in train",
                  "    state, metrics = p_train_step(state, batch)",
                  "                     ^^^^^^^^^^^^^^^^^^^^^^^^^^",
                  Mark("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to complete all kernels launched on stream 0x55f0c1a3d2e0: stream did not block host until done; was already in an error state"),
                  "--------------------",
                  "For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these."]
        else:
            dd = fail_t + timedelta(seconds=100)
            L.append("E%s 5120 coordination_service_agent.cc:332] Polled an error from coordination service (this can be an error from this or another task)." % dd.strftime("%m%d %H:%M:%S.%f"))
            L.append("F%s 5120 client.h:77] Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):" % dd.strftime("%m%d %H:%M:%S.%f"))
            L.append("/job:jax_worker/replica:0/task:2")
            L.append("The tasks have crashed. Check the task logs for an earlier error to debug further.")
            L.append("*** Check failure stack trace: ***")
            L.append("    @     0x7f2b3c0e1a44  absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()")
        b.add("logs/%s/train.log" % h, L)
    xt = fail_t - timedelta(seconds=3)
    b.add("probes/%s/dmesg.txt" % bad, dmesg_boot(T("2026-11-22T16:02:33"), bad) + [
        Mark(dm(xt) + " pcieport 0000:98:01.0: AER: Uncorrected (Fatal) error received: 0000:9b:00.0"),
        Mark(dm(xt) + " nvidia 0000:9b:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)"),
        dm(xt) + " nvidia 0000:9b:00.0:   device [10de:2330] error status/mask=00004000/00000000",
        dm(xt) + " nvidia 0000:9b:00.0:    [14] CmpltTO                (First)",
        dm(xt) + " nvidia 0000:9b:00.0: AER: can't recover (no error_detected callback)",
        dm(xt + timedelta(seconds=1)) + " pcieport 0000:98:01.0: AER: Downstream Port link has been reset (0)",
        dm(xt + timedelta(seconds=1)) + " pcieport 0000:98:01.0: AER: device recovery failed"])
    for h in hosts:
        if h != bad:
            b.add("probes/%s/dmesg.txt" % h, dmesg_boot(T("2026-11-22T16:02:30"), h))
    job = """job_id: "t5x-xxl-run7"
name: t5-xxl-jax-pretrain
framework: other
launcher: jax.distributed.initialize (one process per node, 8 local devices), started by a shell loop over the hosts; python logging to train.log
status: failed
started_at: %s
ended_at: %s
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}
nodes:
%scode:
  - {commit: 77f0e2a, at: 2026-11-09T10:00:00Z, message: "z-loss 1e-4"}
checkpoints:
  - {step: 14000, at: 2026-11-26T23:10:00Z, path: /gcs-fuse/ckpt/t5x-xxl-run7/14000, valid: true}
  - {step: 15000, at: 2026-11-27T08:12:00Z, path: /gcs-fuse/ckpt/t5x-xxl-run7/15000, valid: true}
spares: 1
""" % (iso(t0), iso(fail_t + timedelta(seconds=104)), nodes_yaml(nodes))
    truth = {"fault": "pcie_aer_error", "category": "hardware",
             "root_cause": "the PCIe link of the GPU at 0000:9b:00.0 on gpu-j-03 took an uncorrected fatal AER error (completion timeout) that the kernel could not recover; JAX process 2 failed its train step with a CUDA stream error and the coordination service took the other processes down",
             "faulty_nodes": [bad], "stage": "training", "iteration": last + 1,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 15000}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 8. Ray Train, per-worker log files (no prefix), NCCL internal error on one node at init
# ---------------------------------------------------------------------------------------------
def ray_nccl_internal():
    b = Bundle("raytrain-workerfiles-nccl-internal-2node")
    hosts = ["ray-gpu-w0", "ray-gpu-w1"]
    ips = ["10.3.7.21", "10.3.7.22"]
    nodes = mk_nodes(hosts, ips, 4)
    bad = "ray-gpu-w1"
    t0 = T("2026-11-27T10:41:05")
    for h, ip, ranks in nodes:
        for r in ranks:
            lr = r % 4
            pid = 21840 + 17 * r
            L = [":job_id:03000000",
                 ":actor_name:RayTrainWorker",
                 "Setting up process group for: env:// [rank=%d, world_size=8]" % r,
                 "Moving model to device: cuda:%d" % lr,
                 "%s:%d:%d [%d] NCCL INFO Bootstrap : Using eth0:%s<0>" % (h, pid, pid, lr, ip),
                 "%s:%d:%d [%d] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)" % (h, pid, pid + 40, lr),
                 "%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:%s<0>" % (h, pid, pid + 40, lr, ip),
                 "%s:%d:%d [%d] NCCL INFO Using network IB" % (h, pid, pid + 40, lr)]
            if h == bad:
                L += ["",
                      "%s:%d:%d [%d] graph/xml.h:85 NCCL WARN Attribute busid of node nic not found" % (h, pid, pid + 40, lr),
                      "%s:%d:%d [%d] NCCL INFO graph/topo.cc:349 -> 3" % (h, pid, pid + 40, lr),
                      "%s:%d:%d [%d] NCCL INFO graph/topo.cc:411 -> 3" % (h, pid, pid + 40, lr),
                      "%s:%d:%d [%d] NCCL INFO graph/topo.cc:568 -> 3" % (h, pid, pid + 40, lr),
                      "%s:%d:%d [%d] NCCL INFO init.cc:854 -> 3" % (h, pid, pid + 40, lr),
                      "%s:%d:%d [%d] NCCL INFO init.cc:1548 -> 3" % (h, pid, pid + 40, lr),
                      "%s:%d:%d [%d] NCCL INFO group.cc:64 -> 3 [Async thread]" % (h, pid, pid + 40, lr),
                      "Traceback (most recent call last):",
                      "  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/train/_internal/utils.py\", line 57, in check_for_failure",
                      "    ray.get(object_ref)",
                      "  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/train/_internal/session.py\", line 175, in run",
                      "    train_func()",
                      "  File \"/home/ray/train_llm.py\", line 96, in train_loop_per_worker",
                      "    model = ray.train.torch.prepare_model(model, parallel_strategy=\"fsdp\")",
                      "  File \"/home/ray/anaconda3/lib/python3.11/site-packages/torch/distributed/fsdp/_init_utils.py\", line 650, in _sync_module_params_and_buffers",
                      "    _sync_params_and_buffers(",
                      "  File \"/home/ray/anaconda3/lib/python3.11/site-packages/torch/distributed/utils.py\", line 315, in _sync_params_and_buffers",
                      "    dist._broadcast_coalesced(",
                      (Mark if lr == 0 else str)("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2006, internal error - please report this issue to the NCCL developers, NCCL version 2.20.5"),
                      "ncclInternalError: Internal check failed.",
                      "Last error:",
                      (Mark if lr == 0 else str)("Attribute busid of node nic not found")]
            else:
                L += ["%s:%d:%d [%d] NCCL INFO comm 0x5627c8d1f0a0 rank %d nRanks 8 nNodes 2 localRanks 4 localRank %d MNNVL 0" % (h, pid, pid + 40, lr, r, lr),
                      "",
                      "%s:%d:%d [%d] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer ray-gpu-w1<57310>" % (h, pid, pid + 44, lr),
                      "%s:%d:%d [%d] NCCL INFO misc/socket.cc:750 -> 6" % (h, pid, pid + 44, lr),
                      "%s:%d:%d [%d] NCCL INFO bootstrap.cc:142 -> 6" % (h, pid, pid + 44, lr),
                      "[rank%d]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2006, remote process exited or there was a network error, NCCL version 2.20.5" % r,
                      "[rank%d]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely." % r,
                      "[rank%d]: Last error:" % r,
                      "[rank%d]: socketProgress: Connection closed by remote peer ray-gpu-w1<57310>" % r]
            b.add("logs/%s/worker-%s-03000000-%d.err" % (h, "%056x" % (0xa1b2c3 * (r + 7)), pid), L)
    # faulty node: NCCL topology dump shows the NIC entry without a PCI parent (probe)
    b.add("probes/%s/nccl-topo-check.json" % bad, [json.dumps({"probe": "nccl-topo-dump", "status": "fail",
        "detail": "NCCL_TOPO_DUMP_FILE on ray-gpu-w1: <nic> for mlx5_1 has no <pci> parent; /sys/class/infiniband/mlx5_1/device -> ../../../0000:c3:00.1 missing after mlx5_core reload at 10:22",
        "metrics": {"nics_with_pci": 1, "nics": 2}})])
    job = """job_id: "raysubmit_Lk3pTq9e1XvB"
name: llm-7b-fsdp-raytrain
framework: fsdp
launcher: "Ray Train TorchTrainer, ScalingConfig(num_workers=8, use_gpu=True, resources_per_worker={GPU: 1}); logs are the workers own worker-*.err files"
status: failed
started_at: %s
ended_at: %s
exit_code: 1
gpus_per_node: 4
parallelism: {tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}
nodes:
%scode:
  - {commit: 2b8d6fa, at: 2026-11-21T08:00:00Z, message: "fsdp: hybrid shard off"}
checkpoints:
  - {step: 6000, at: 2026-11-27T09:55:00Z, path: s3://ml-ckpt/llm-7b/checkpoint_000012, valid: true}
  - {step: 6500, at: 2026-11-27T10:35:12Z, path: s3://ml-ckpt/llm-7b/checkpoint_000013, valid: false}
spares: 0
""" % (iso(t0), iso(t0 + timedelta(seconds=95)), nodes_yaml(nodes))
    truth = {"fault": "nccl_internal_error", "category": "framework",
             "root_cause": "NCCL's topology detection failed on ray-gpu-w1 (ncclInternalError: Attribute busid of node nic not found) when the first communicator was built during FSDP parameter sync; the ranks on ray-gpu-w0 then saw the remote side close",
             "faulty_nodes": [bad], "stage": "init", "iteration": None,
             "actions": [{"kind": "restart", "from_step": 6000}]}
    b.write(job, truth)


if __name__ == "__main__":
    for fn in [titan_hang, ds_nic_down, megatron_panic, aml_xid48, lightning_rowremap, nemo_fm_down, jax_aer, ray_nccl_internal]:
        fn()
