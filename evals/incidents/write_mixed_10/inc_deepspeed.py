"""cuda_illegal_memory_access: DeepSpeed ZeRO-2 (deepspeed launcher, one log per node, DeepSpeed's
`[Rank 0]` log_dist lines).  The newest commit vendored a fused rotary+QK-RMSNorm Triton kernel; 137 steps
after the resume, rank 11 (trn-g08, GPU 3) faults in that kernel's backward (Xid 31 MMU fault in dmesg);
its launcher kills the node's ranks and the other nodes' all-reduce times out 10 minutes later."""
import random
from datetime import timedelta

from common import A100_BUS, Bundle, T, dmesg_boot, dmesg_t, nvidia_smi_q

ID = "deepspeed-rank0-logdist-fused-rope-ima-3node"
HOSTS = ["trn-g07", "trn-g08", "trn-g09"]
IPS = ["172.20.4.7", "172.20.4.8", "172.20.4.9"]
PY = "/opt/conda/lib/python3.11/site-packages"
BADN, BADL = 1, 3


def dst(d):
    return "[%s,%03d]" % (d.strftime("%Y-%m-%d %H:%M:%S"), d.microsecond // 1000)


def c10(d):
    return d.strftime("%m%d %H:%M:%S.%f") + "211"


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(31)
    start = T("2026-11-28T05:00:41") + timedelta(milliseconds=208)
    resume = 9000
    fail_step = 9137
    step_s = 3.42
    t0 = start + timedelta(seconds=131)
    t_fail = t0 + timedelta(seconds=(fail_step - resume - 1) * step_s + 2.1)
    world = 24
    marks = []
    cmd = "['/opt/conda/bin/python', '-u', 'train.py', '--local_rank=%d', '--deepspeed', '--deepspeed_config', 'configs/ds_zero2_bf16.json', '--model', 'llama-7b-code', '--resume', '/ckpt/code7b/global_step9000']"
    for n, host in enumerate(HOSTS):
        lg = b.log("logs/%s/ds_node%d.log" % (host, n))
        base = 58120 + 17 * n
        d = start
        lg.add("%s [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda (auto detect)" % dst(d))
        lg.add("%s [INFO] [launch.py:146:main] WORLD INFO DICT: {'trn-g07': [0, 1, 2, 3, 4, 5, 6, 7], 'trn-g08': [0, 1, 2, 3, 4, 5, 6, 7], 'trn-g09': [0, 1, 2, 3, 4, 5, 6, 7]}" % dst(d))
        lg.add("%s [INFO] [launch.py:152:main] nnodes=3, num_local_procs=8, node_rank=%d" % (dst(d), n))
        lg.add("%s [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {'trn-g07': [0, 1, 2, 3, 4, 5, 6, 7], 'trn-g08': [8, 9, 10, 11, 12, 13, 14, 15], 'trn-g09': [16, 17, 18, 19, 20, 21, 22, 23]})" % dst(d))
        lg.add("%s [INFO] [launch.py:164:main] dist_world_size=%d" % (dst(d), world))
        lg.add("%s [INFO] [launch.py:168:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7" % dst(d))
        lg.add("%s [INFO] [launch.py:256:main] process %d spawned with command: %s" % (dst(d), base, cmd % 0))
        for lr in range(1, 8):
            lg.add("%s [INFO] [launch.py:256:main] process %d spawned with command: %s" % (dst(d), base + lr, cmd % lr))
        d += timedelta(seconds=9)
        for lr in range(8):
            lg.add("%s [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda (auto detect)" % dst(d + timedelta(milliseconds=37 * lr)))
        for lr in range(8):
            lg.add("%s [INFO] [comm.py:652:init_distributed] cdb=None" % dst(d + timedelta(seconds=3, milliseconds=11 * lr)))
        if n == 0:
            lg.add("%s [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl" % dst(d + timedelta(seconds=3)))
        for lr in range(0, 8, 3):
            lg.add("%s/torch/utils/cpp_extension.py:2356: UserWarning: TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation. " % PY)
            lg.add("If this is not desired, please set os.environ['TORCH_CUDA_ARCH_LIST'].")
            lg.add("  warnings.warn(")
        d += timedelta(seconds=20)
        if n == 0:
            for m in [
                "[logging.py:128:log_dist] [Rank 0] DeepSpeed info: version=0.16.4, git-hash=unknown, git-branch=unknown",
                "[config.py:733:__init__] Config mesh_device None world_size = 24",
                "[logging.py:128:log_dist] [Rank 0] DeepSpeed Flops Profiler Enabled: False",
                "[logging.py:128:log_dist] [Rank 0] Using client Optimizer as basic optimizer",
                "[logging.py:128:log_dist] [Rank 0] Removing param_group that has no 'params' in the basic Optimizer",
                "[logging.py:128:log_dist] [Rank 0] DeepSpeed Basic Optimizer = FusedAdam",
                "[utils.py:59:is_zero_supported_optimizer] Checking ZeRO support for optimizer=FusedAdam type=<class 'deepspeed.ops.adam.fused_adam.FusedAdam'>",
                "[logging.py:128:log_dist] [Rank 0] Creating torch.bfloat16 ZeRO stage 2 optimizer",
                "[stage_1_and_2.py:149:__init__] Reduce bucket size 500000000",
                "[stage_1_and_2.py:150:__init__] Allgather bucket size 500000000",
                "[stage_1_and_2.py:151:__init__] CPU Offload: False",
                "[stage_1_and_2.py:152:__init__] Round robin gradient partitioning: False",
                "[utils.py:781:see_memory_usage] Before initializing optimizer states",
                "[utils.py:782:see_memory_usage] MA 13.52 GB         Max_MA 14.08 GB         CA 14.27 GB         Max_CA 14 GB ",
                "[utils.py:789:see_memory_usage] CPU Virtual Memory:  used = 96.41 GB, percent = 9.6%",
                "[stage_1_and_2.py:544:__init__] optimizer state initialized",
                "[logging.py:128:log_dist] [Rank 0] DeepSpeed Final Optimizer = DeepSpeedZeroOptimizer",
                "[logging.py:128:log_dist] [Rank 0] DeepSpeed using configured LR scheduler = WarmupCosineLR",
                "[logging.py:128:log_dist] [Rank 0] DeepSpeed LR Scheduler = <deepspeed.runtime.lr_schedules.WarmupCosineLR object at 0x7f8e2c1a4b50>",
                "[logging.py:128:log_dist] [Rank 0] step=0, skipped=0, lr=[3e-05], mom=[(0.9, 0.95)]",
                "[torch_checkpoint_engine.py:27:load] [Torch] Loading checkpoint from /ckpt/code7b/global_step9000/mp_rank_00_model_states.pt...",
                "[torch_checkpoint_engine.py:29:load] [Torch] Loaded checkpoint from /ckpt/code7b/global_step9000/mp_rank_00_model_states.pt.",
                "[engine.py:3136:_get_all_zero_checkpoint_state_dicts] successfully read 24 ZeRO state_dicts for rank 0",
                "[engine.py:3086:_load_zero_checkpoint] loading 24 zero partition checkpoints for rank 0",
            ]:
                lg.add("%s [INFO] %s" % (dst(d), m))
                d += timedelta(milliseconds=rnd.randint(3, 900))
            lg.add("[train.py] resumed from /ckpt/code7b/global_step9000 at step 9000; git=4be19c0 (kernels: fused rope+qk-rmsnorm triton kernel)")
        else:
            lg.add("%s [INFO] [engine.py:3086:_load_zero_checkpoint] loading 24 zero partition checkpoints for rank %d" % (dst(d), n * 8))
        # training
        loss = 1.384
        last = fail_step - 1
        for s in range(resume + 1, last + 1):
            ds = t0 + timedelta(seconds=(s - resume) * step_s)
            loss += rnd.uniform(-0.01, 0.0095)
            if n == 0 and s % 5 == 0:
                lg.add("[train.py] step %d | loss %.4f | lr %.3e | grad_norm %.3f | tok/s %d" % (s, loss, 2.7e-5 - (s - 9000) * 1e-9, rnd.uniform(0.21, 0.33), rnd.randint(114000, 118500)))
            if n == 0 and s % 10 == 0:
                lg.add("%s [INFO] [logging.py:128:log_dist] [Rank 0] step=%d, skipped=0, lr=[%.15g], mom=[(0.9, 0.95)]" % (dst(ds), s, 2.7e-5 - (s - 9000) * 1e-9))
                lg.add("%s [INFO] [timer.py:264:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.14g, CurrSamplesPerSec=%.14g, MemAllocated=31.12GB, MaxMemAllocated=52.61GB" % (
                    dst(ds + timedelta(milliseconds=2)), s * 4, s, 28.0 + rnd.uniform(-0.2, 0.2), 28.0 + rnd.uniform(-0.6, 0.6)))
        if n == BADN:
            pid = base + BADL
            rk = "[rank%d]:" % (n * 8 + BADL)
            tb = [
                "Traceback (most recent call last):",
                '  File "/workspace/code7b/train.py", line 318, in <module>',
                "    main()",
                '  File "/workspace/code7b/train.py", line 274, in main',
                "    model_engine.backward(loss)",
                '  File "%s/deepspeed/utils/nvtx.py", line 18, in wrapped_fn' % PY,
                "    ret_val = func(*args, **kwargs)",
                '  File "%s/deepspeed/runtime/engine.py", line 2126, in backward' % PY,
                "    self.optimizer.backward(loss, retain_graph=retain_graph)",
                '  File "%s/deepspeed/runtime/zero/stage_1_and_2.py", line 2063, in backward' % PY,
                "    self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)",
                '  File "%s/deepspeed/runtime/fp16/loss_scaler.py", line 63, in backward' % PY,
                "    scaled_loss.backward(retain_graph=retain_graph)",
                '  File "%s/torch/_tensor.py", line 647, in backward' % PY,
                "    torch.autograd.backward(",
                '  File "%s/torch/autograd/__init__.py", line 354, in backward' % PY,
                "    _engine_run_backward(",
                '  File "%s/torch/autograd/graph.py", line 829, in _engine_run_backward' % PY,
                "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
                '  File "%s/torch/autograd/function.py", line 311, in apply' % PY,
                "    return user_fn(self, *args)",
                '  File "/workspace/code7b/kernels/fused_rope_qknorm.py", line 214, in backward',
                "    dq = torch.empty_like(q)",
                "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
                "Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.",
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                "",
            ]
            for x in tb:
                k = lg.add(x)
                if x.startswith("torch.AcceleratorError"):
                    lg.marks["ima"] = k
                if "fused_rope_qknorm.py" in x:
                    lg.marks["frame"] = k
            lg.add("%s[E%s ProcessGroupNCCL.cpp:1899] [PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered" % (rk, c10(t_fail + timedelta(milliseconds=90)), n * 8 + BADL))
            lg.add("Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.")
            lg.add("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
            lg.add("For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
            lg.add("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
            lg.add("")
            lg.add("Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:42 (most recent call first):")
            lg.add("frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f6a3b97c5e8 in %s/torch/lib/libc10.so)" % PY)
            lg.add("frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0xe0 (0x7f6a3b9114a2 in %s/torch/lib/libc10.so)" % PY)
            lg.add("frame #2: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x3c2 (0x7f6a3ba27422 in %s/torch/lib/libc10_cuda.so)" % PY)
            lg.add("frame #3: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x56 (0x7f6a3c8e7456 in %s/torch/lib/libtorch_cuda.so)" % PY)
            lg.add("frame #4: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x70 (0x7f6a3c8f6c40 in %s/torch/lib/libtorch_cuda.so)" % PY)
            lg.add("frame #5: c10d::ProcessGroupNCCL::watchdogHandler() + 0x62c (0x7f6a3c8f87ec in %s/torch/lib/libtorch_cuda.so)" % PY)
            lg.add("")
            lg.add("terminate called after throwing an instance of 'c10::DistBackendError'")
            tk = t_fail + timedelta(seconds=2)
            for lr in range(8):
                lg.add("%s [INFO] [launch.py:335:sigkill_handler] Killing subprocess %d" % (dst(tk + timedelta(milliseconds=12 * lr)), base + lr))
            lg.add("%s [ERROR] [launch.py:341:sigkill_handler] %s exits with return code = 1" % (dst(tk + timedelta(milliseconds=140)), cmd % BADL), key="dsexit")
            marks += [(lg.rel, "ima"), (lg.rel, "frame")]
        else:
            tw = t_fail + timedelta(seconds=600.2 + n)
            r0 = n * 8
            wn = "WorkNCCL(SeqNum=302418, OpType=ALLREDUCE, NumelIn=250000000, NumelOut=250000000, Timeout(ms)=600000)"
            for lr in (0, 2, 5):
                r = r0 + lr
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: %s ran for 600071 milliseconds before timing out." % (r, c10(tw + timedelta(milliseconds=lr)), r, wn))
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank %d]  failure detected by watchdog at work sequence id: 302418 PG status: last enqueued work: 302418, last completed work: 302417" % (r, c10(tw + timedelta(milliseconds=lr + 1)), r))
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value." % (r, c10(tw + timedelta(milliseconds=lr + 1))))
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:684] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (r, c10(tw + timedelta(milliseconds=lr + 2)), r))
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:698] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (r, c10(tw + timedelta(milliseconds=lr + 2)), r))
            lg.add("terminate called after throwing an instance of 'c10::DistBackendError'")
            lg.add("  what():  [PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: %s ran for 600071 milliseconds before timing out." % (r0, r0, wn))
            tk = tw + timedelta(seconds=1)
            for lr in range(8):
                lg.add("%s [INFO] [launch.py:335:sigkill_handler] Killing subprocess %d" % (dst(tk + timedelta(milliseconds=9 * lr)), base + lr))
            lg.add("%s [ERROR] [launch.py:341:sigkill_handler] %s exits with return code = -6" % (dst(tk + timedelta(milliseconds=90)), cmd % 0))
    # probes
    bh = HOSTS[BADN]
    p = b.log("probes/%s/dmesg.txt" % bh)
    Lb, _ = dmesg_boot(T("2026-11-24T13:02:51"), bh, seed=8, bus=A100_BUS)
    p.extend(Lb)
    p.add("%s NVRM: GPU at PCI:0000:%s:00: GPU-7b3e21c4-9d0a-2f6e-8c51-3a0f4e92d1b7" % (dmesg_t(t_fail), A100_BUS[BADL].lower()))
    p.add("%s NVRM: GPU Board Serial Number: 1322521034817" % dmesg_t(t_fail))
    k = p.add("%s NVRM: Xid (PCI:0000:%s:00): 31, pid=%d, name=python, Ch 00000018, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC5 GPCCLIENT_T1_9 faulted @ 0x7f2c_8a000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ" % (
        dmesg_t(t_fail), A100_BUS[BADL].lower(), 58120 + 17 * BADN + BADL), key="xid")
    marks.append((p.rel, "xid"))
    p = b.log("probes/%s/nvidia-smi.txt" % bh)
    p.extend(nvidia_smi_q(t_fail + timedelta(minutes=14), product="NVIDIA A100-SXM4-80GB", driver="550.127.05", seed=9, util=0,
                          per_gpu={i: {"used": 1, "util": 0, "power": 61.0 + i} for i in range(8)}))
    b.job({
        "job_id": "code7b-sft-2231",
        "name": "code-7b-continued-sft",
        "framework": "deepspeed",
        "launcher": "deepspeed (pdsh disabled: one launcher per node via --no_ssh)",
        "status": "failed",
        "started_at": start,
        "ended_at": t_fail + timedelta(seconds=604),
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 24, "cp": 1, "ep": 1},
        "zero_stage": 2,
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(i * 8, i * 8 + 8))} for i, (h, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "9a2d6f1", "at": T("2026-11-14T12:30:00"), "message": "data: dedup code corpus v3"},
            {"commit": "e05c8b3", "at": T("2026-11-22T09:10:00"), "message": "train: cosine schedule to 30k steps"},
            {"commit": "4be19c0", "at": T("2026-11-27T19:42:00"), "message": "kernels: fused rope+qk-rmsnorm triton kernel (vendored from liger-kernel), replaces eager path"},
        ],
        "checkpoints": [
            {"step": 8500, "at": T("2026-11-26T23:18:11"), "path": "/ckpt/code7b/global_step8500", "valid": True},
            {"step": 9000, "at": T("2026-11-27T10:51:40"), "path": "/ckpt/code7b/global_step9000", "valid": True},
        ],
        "history": ["code7b-sft-2229", "code7b-sft-2230"],
        "last_successful_run": {"job": "code7b-sft-2230", "ended_at": T("2026-11-27T10:52:30"), "commit": "e05c8b3"},
        "spares": 1,
    })
    return b.truth(
        "cuda_illegal_memory_access", "framework",
        "an illegal memory access in the fused rope+QK-RMSNorm Triton kernel that commit 4be19c0 vendored in "
        "(first run with it): rank 11 (trn-g08 GPU 3) faulted in its backward at step 9137 (Xid 31 MMU fault, "
        "FAULT_PDE read), its node's ranks were killed and the other nodes' all-reduce timed out 600 s later.",
        [], "training", fail_step, marks, [{"kind": "none"}])
