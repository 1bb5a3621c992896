"""Software and infrastructure fault stories: host OOM, checkpoint storage, NCCL and PyTorch internal errors,
CUDA OOM, user-code regressions at init, NaN divergence and a corrupt data sample.
"""

from __future__ import annotations

from diagagent.sim.incident import Death, Event, Incident
from diagagent.sim.plan import build_schedule, start_time
from diagagent.sim.stories.common import Ctx, crash_in_training, incident, kernel
from diagagent.sim.tracebacks import fill_frames

_SITE = "{site}"


def host_oom_killed(ctx: Ctx) -> Incident:
    node, gpu = ctx.pick_node(), ctx.pick_gpu()
    rank = ctx.rank_on(node, gpu)
    sched, t, it = crash_in_training(ctx)
    host = ctx.layout.hosts[node]
    inc = incident(
        ctx,
        sched,
        t,
        it,
        f"{host} ran out of host memory; the OOM killer killed rank {rank}",
        faulty_nodes=[node],
    )
    inc.deaths[rank] = Death(t, "killed")
    pid, step = ctx.pid(rank), ctx.env.slurm_job
    vm, rss = ctx.rng.randrange(900_000_000, 1_400_000_000), ctx.rng.randrange(180_000_000, 260_000_000)
    health = inc.node_health(node)
    health.dmesg = [
        kernel(
            t - 0.3,
            "pt_data_worker invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), "
            "order=0, oom_score_adj=0",
        ),
        kernel(
            t - 0.3,
            f"CPU: {ctx.rng.randrange(96)} PID: {pid + 3} Comm: pt_data_worker Tainted: P           OE"
            f"      6.5.0-1018-nvidia #18-Ubuntu",
        ),
        kernel(t - 0.29, "Mem-Info:"),
        kernel(
            t - 0.2,
            f"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
            f"task_memcg=/slurm/uid_1001/job_{step}/step_0/task_{gpu},task=python3,pid={pid},uid=1001",
        ),
        kernel(
            t - 0.2,
            f"Out of memory: Killed process {pid} (python3) total-vm:{vm}kB, anon-rss:{rss}kB, "
            f"file-rss:{ctx.rng.randrange(400_000, 900_000)}kB, "
            f"shmem-rss:{ctx.rng.randrange(10_000_000, 40_000_000)}kB, "
            f"UID:1001 pgtables:{ctx.rng.randrange(300_000, 600_000)}kB oom_score_adj:0",
            cite=True,
        ),
        kernel(
            t + 0.4,
            f"oom_reaper: reaped process {pid} (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
        ),
    ]
    inc.launcher_events[node] = [
        Event(
            t + 1.5,
            [
                f"slurmstepd: error: Detected 1 oom_kill event in StepId={step}.0. Some of the step tasks "
                "have been OOM Killed."
            ],
            (0,),
        )
    ]
    return inc


def storage_checkpoint_write_failure(ctx: Ctx) -> Incident:
    plan = ctx.plan
    n = ctx.window()
    first = plan.resumed_step + 1
    saves = [s for s in range(first, first + n) if s % plan.save_interval == 0]
    step = saves[-1] if saves else first + n - 1
    n_done = step - first + 1
    sched = build_schedule(plan, start_time(plan.seed), n_done, None, 1.0, failing_save=step)
    t = sched.next_start + ctx.rng.uniform(4, 20)
    errno = ctx.rng.choice([(28, "No space left on device"), (122, "Disk quota exceeded")])
    inc = incident(
        ctx,
        sched,
        t,
        step + 1,
        f"checkpoint storage failed while saving iteration {step} "
        f"([Errno {errno[0]}] {errno[1]}); the checkpoint is partial",
        invalid_checkpoint=step,
    )
    inc.stage = "checkpoint"
    failing = sorted(ctx.rng.sample(range(plan.world), min(plan.world, ctx.rng.randint(1, 3))))
    for i, rank in enumerate(failing):
        ts = t + 0.7 * i
        path = f"/ckpt/{plan.job_id}/iter_{step:07d}/__{rank}_0.distcp"
        extra = [
            (
                _SITE + "/torch/distributed/checkpoint/filesystem.py",
                333,
                "_write_files_from_queue",
                "_write_item(stream, data, write_item, storage_key)",
            ),
            (
                _SITE + "/torch/distributed/checkpoint/filesystem.py",
                263,
                "_write_item",
                "stream.write(data.getbuffer())",
            ),
        ]
        inc.add(
            rank,
            ctx.tb(
                rank, ts, "save", [f"OSError: [Errno {errno[0]}] {errno[1]}: '{path}'"], extra_frames=extra
            ),
        )
        inc.deaths[rank] = Death(ts + 0.2, "error", f"OSError: [Errno {errno[0]}] {errno[1]}")
        node = ctx.layout.node_of(rank)
        ost = ctx.rng.randrange(32)
        inc.node_health(node).dmesg.append(
            kernel(
                ts - 0.5,
                f"LustreError: 11-0: ckpt-OST{ost:04x}-osc-ffff9b8e4c2f5000: operation ost_write to node "
                f"10.9.0.{20 + ost}@o2ib failed: rc = -{errno[0]}",
                cite=True,  # the storage's own word on the failed write (conventions: a probe line that shows it)
            )
        )
    return inc


def _one_rank_fails(ctx: Ctx, cause: str) -> tuple[Incident, int, float]:
    """A software fault on one random rank during training. -> (incident, rank, when)."""
    rank = ctx.rank_on(ctx.pick_node(), ctx.pick_gpu())
    sched, t, it = crash_in_training(ctx)
    return incident(ctx, sched, t, it, cause.format(rank=rank)), rank, t


def nccl_internal_error(ctx: Ctx) -> Incident:
    inc, rank, t = _one_rank_fails(ctx, "NCCL internal error (ncclInternalError) on rank {rank}")
    detail = ctx.rng.choice(
        [
            "Unexpected state in proxy progress, op 2 state 3",
            "proxy.cc:1458 NCCL WARN [Proxy Service] Unexpected opType 4",
        ]
    )
    group_rank = ctx.layout.dp_group_rank(rank)
    head = ctx.c10(rank, t + 0.4, "ProcessGroupNCCL.cpp:1595")
    inc.add(
        rank,
        Event(
            t,
            [
                f"{ctx.nccl(rank, 4)} WARN {detail.split('NCCL WARN ')[-1]}",
                f"{ctx.nccl(rank, 4)} INFO proxy.cc:1535 -> 3 [Proxy Thread]",
            ],
            (0,),
        ),
    )
    inc.add(
        rank,
        Event(
            t + 0.4,
            [
                f"{head}[PG ID 2 PG GUID 5(DATA_PARALLEL_GROUP) Rank {group_rank}] Process group watchdog "
                "thread terminated "
                "with exception: NCCL error: internal error - please report this issue to the NCCL "
                "developers, "
                f"NCCL version {ctx.env.nccl}",
                "ncclInternalError: Internal check failed.",
                "Last error:",
                detail.split("NCCL WARN ")[-1],
            ],
            (0,),
        ),
    )
    inc.deaths[rank] = Death(t + 0.5, "abort")
    return inc


def pytorch_internal_assert(ctx: Ctx) -> Incident:
    inc, rank, t = _one_rank_fails(ctx, "PyTorch internal assert failed on rank {rank}")
    where, message = ctx.rng.choice(
        [
            (
                "backward",
                '!grad_accumulator_.expired() INTERNAL ASSERT FAILED at "/opt/pytorch/pytorch/torch/csrc/'
                'autograd/saved_variable.cpp":226, please report a bug to PyTorch. No grad accumulator for a '
                "saved leaf",
            ),
            (
                "forward",
                't == DeviceType::CUDA INTERNAL ASSERT FAILED at "/opt/pytorch/pytorch/c10/cuda/impl/'
                'CUDAGuardImpl.h":28, please report a bug to PyTorch. ',
            ),
        ]
    )
    inc.add(rank, ctx.tb(rank, t, where, [f"RuntimeError: {message}"]))
    inc.deaths[rank] = Death(t + 0.3, "error", f"RuntimeError: {message}")
    return inc


def cuda_oom(ctx: Ctx) -> Incident:
    plan = ctx.plan
    sched, t, it = crash_in_training(ctx, n_iters=0, frac=(0.2, 0.5))
    inc = incident(
        ctx,
        sched,
        t,
        it,
        "CUDA out of memory on the first pipeline stage at the first iteration "
        "(micro-batch / sequence too large for the GPU)",
    )
    inc.code_regression = ctx.rng.choice(["enable fused rotary embeddings", "log per-layer grad norms"])
    cls = "torch.OutOfMemoryError" if plan.env.torch >= "2.5" else "torch.cuda.OutOfMemoryError"
    stage0 = [r for node in ctx.layout.stage_nodes(0) for r in ctx.layout.ranks_of(node)]
    tried = ctx.rng.choice([1.0, 2.0, 3.5, 4.0])
    times = {rank: t + ctx.rng.uniform(0.0, 2.0) for rank in stage0}
    cited = set(sorted(stage0, key=lambda r: (times[r], r))[:3])
    for rank in stage0:
        gpu = ctx.local(rank)
        free = ctx.rng.uniform(0.3, tried - 0.1)
        used = plan.env.capacity_gib - free - 0.45
        alloc = used - ctx.rng.uniform(1.5, 4.0)
        ts = times[rank]
        msg = (
            f"{cls}: CUDA out of memory. Tried to allocate {tried:.2f} GiB. GPU {gpu} has a total capacity "
            "of "
            f"{plan.env.capacity_gib:.2f} GiB of which {free:.2f} GiB is free. Including non-PyTorch memory, "
            "this "
            f"process has {used:.2f} GiB memory in use. Of the allocated memory {alloc:.2f} GiB is allocated "
            "by "
            f"PyTorch, and {used - alloc - 0.4:.2f} GiB is reserved by PyTorch but unallocated. If reserved "
            "but "
            "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
            "avoid "
            f"fragmentation.  See documentation for Memory Management  "
            f"(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
        )
        inc.add(rank, ctx.tb(rank, ts, "forward", [msg], cite=(0,) if rank in cited else ()))
        inc.deaths[rank] = Death(ts + 0.2, "error", msg.split(". Tried")[0])
    return inc


def _init_failure(ctx: Ctx, frac: float) -> tuple[Incident, float]:
    sched = build_schedule(ctx.plan, start_time(ctx.plan.seed), 0, None, 1.0)
    t = sched.t_start + (sched.t_train - sched.t_start) * frac
    return incident(ctx, sched, t, None, ""), t


def user_shape_mismatch_at_init(ctx: Ctx) -> Incident:
    inc, t = _init_failure(ctx, 0.8)
    plan = ctx.plan
    inc.code_regression = ctx.rng.choice(
        ["switch attention to GQA with 8 query groups", "change ffn hidden size for the new tokenizer"]
    )
    inc.root_cause = (
        f"the newest commit ({inc.code_regression}) changed parameter shapes; the checkpoint no longer loads"
    )
    hidden = {"llama3-8b": 4096, "llama3-70b": 8192, "gpt3-175b": 12288, "mixtral-8x7b": 4096}[plan.model]
    tp = ctx.layout.tp
    old, new = (hidden + 2 * hidden // 8) // tp, (hidden + 2 * hidden // 4) // tp
    cls = "GPTModel" if plan.env.framework != "deepspeed" else "LlamaForCausalLM"
    param = (
        "decoder.layers.{i}.self_attention.linear_qkv.weight"
        if cls == "GPTModel"
        else "model.layers.{i}.self_attn.k_proj.weight"
    )
    mism = [
        f"\tsize mismatch for {param.format(i=i)}: copying a param with shape torch.Size([{old}, {hidden}]) "
        f"from checkpoint, the shape in current model is torch.Size([{new}, {hidden}])."
        for i in range(3)
    ]
    final = [f"RuntimeError: Error(s) in loading state_dict for {cls}:", *mism]
    for rank in range(plan.world):
        ts = t + ctx.rng.uniform(0.0, 3.0)
        inc.add(rank, ctx.tb(rank, ts, "load", final, cite=(0, 1) if rank == 0 else ()))
        inc.deaths[rank] = Death(ts + 0.3, "error", final[0])
    return inc


def user_import_error(ctx: Ctx) -> Incident:
    inc, t = _init_failure(ctx, 0.05)
    plan = ctx.plan
    if plan.env.framework == "deepspeed":
        name, module = ctx.rng.choice(
            [
                ("LlamaFlashAttention2", "transformers.models.llama.modeling_llama"),
                ("apply_rotary_emb_func", "flash_attn.layers.rotary"),
            ]
        )
        imports = [
            (plan.env.workdir + "/" + plan.env.script, 18, "<module>", "from model import build_model"),
            (plan.env.workdir + "/model.py", 7, "<module>", f"from {module} import {name}"),
        ]
    else:
        name, module = ctx.rng.choice(
            [
                ("track_moe_metrics", "megatron.core.transformer.moe.moe_utils"),
                ("get_batch_on_this_cp_rank", "megatron.training.utils"),
                ("fused_apply_rotary_pos_emb_thd", "megatron.core.fusions.fused_rope"),
            ]
        )
        imports = [
            (
                plan.env.workdir + "/" + plan.env.script,
                29,
                "<module>",
                "from megatron.training import get_args, get_timers, get_tokenizer, pretrain, print_rank_0",
            ),
            (
                _SITE + "/megatron/training/__init__.py",
                14,
                "<module>",
                "from .training import pretrain, get_train_valid_test_num_samples",
            ),
            (_SITE + "/megatron/training/training.py", 41, "<module>", f"from {module} import {name}"),
        ]
    inc.code_regression = f"refactor: move {name} out of {module.rsplit('.', 1)[-1]}"
    inc.root_cause = f"the newest commit ({inc.code_regression}) broke an import: every rank fails at startup"
    path = f"/usr/local/lib/python{plan.env.python[:4]}/dist-packages/{module.replace('.', '/')}.py"
    final = [f"ImportError: cannot import name '{name}' from '{module}' ({path})"]
    for rank in range(plan.world):
        ts = t + ctx.rng.uniform(0.0, 4.0)
        lines = ["Traceback (most recent call last):", *fill_frames(plan.env, imports), *final]
        inc.add(rank, Event(ts, [ctx.py(rank) + ln for ln in lines], (len(lines) - 1,) if rank == 0 else ()))
        inc.deaths[rank] = Death(ts + 0.1, "error", final[0])
    return inc


def nan_loss_divergence(ctx: Ctx) -> Incident:
    plan = ctx.plan
    n = ctx.window()
    nan_k = max(6, n - ctx.rng.randint(0, 3))
    skipped = ctx.rng.choice([0, 0, 2, 3]) if plan.env.framework != "nemo" else 0
    sched = build_schedule(plan, start_time(plan.seed), nan_k + skipped, None, 1.0)
    first_nan = sched.iteration(nan_k)
    t = sched.next_start + ctx.rng.uniform(0.5, 0.9) * plan.iter_s
    inc = incident(
        ctx,
        sched,
        t,
        first_nan,
        f"training diverged: the loss spiked and became NaN at iteration {first_nan}",
        nan_from=first_nan,
        spike_from=sched.iteration(max(1, nan_k - ctx.rng.randint(3, 8))),
        restart_before=first_nan,
    )
    last_stage = [r for node in ctx.layout.stage_nodes(ctx.layout.pp - 1) for r in ctx.layout.ranks_of(node)]
    for rank in last_stage:
        ts = t + ctx.rng.uniform(0.0, 0.5)
        node = ctx.host(rank)
        msg = (
            f"RuntimeError: Rank {rank}: found NaN in local forward loss calculation. "
            f"Device: {ctx.local(rank)}, node: {node}"
        )
        if plan.env.framework == "deepspeed":
            msg = "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
        inc.add(
            rank,
            ctx.tb(
                rank,
                ts,
                "forward" if plan.env.framework != "deepspeed" else "backward",
                [msg],
                cite=(0,) if rank == plan.world - 1 else (),
            ),
        )
        inc.deaths[rank] = Death(ts + 0.2, "error", msg)
    return inc


def dataloader_corrupt_sample(ctx: Ctx) -> Incident:
    plan = ctx.plan
    sched, t, it = crash_in_training(ctx, frac=(0.0, 0.1))
    stage0 = list(ctx.layout.stage_nodes(0))
    node = ctx.rng.choice(stage0)
    rank = ctx.rank_on(node, 0)
    worker = ctx.rng.randrange(2, 8)
    inc = incident(
        ctx, sched, t, it, f"a corrupt training sample made DataLoader worker {worker} on rank {rank} raise"
    )
    if plan.env.framework == "deepspeed":
        exc, inner = (
            "UnicodeDecodeError",
            [
                (
                    _SITE + "/datasets/packaged_modules/json/json.py",
                    163,
                    "_generate_tables",
                    "dataset = ujson_loads(f.read())",
                ),
            ],
        )
        final_inner = (
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position "
            f"{ctx.rng.randrange(100, 90000)}: invalid start byte"
        )
    else:
        exc, inner = (
            "ValueError",
            [
                (
                    "{work}/megatron/core/datasets/gpt_dataset.py",
                    105,
                    "__getitem__",
                    "text, _ = self._query_document_sample_shuffle_index(idx)",
                ),
                (
                    "{work}/megatron/core/datasets/gpt_dataset.py",
                    419,
                    "_query_document_sample_shuffle_index",
                    "self.dataset.get(",
                ),
                (
                    "{work}/megatron/core/datasets/indexed_dataset.py",
                    628,
                    "get",
                    "sequence = self.bin_reader.read(",
                ),
                (
                    "{work}/megatron/core/datasets/indexed_dataset.py",
                    242,
                    "read",
                    "return numpy.frombuffer(self._bin_buffer, dtype=dtype, count=count, offset=offset)",
                ),
            ],
        )
        final_inner = "ValueError: buffer is smaller than requested size"
    worker_frames = [
        (
            _SITE + "/torch/utils/data/_utils/worker.py",
            351,
            "_worker_loop",
            "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]",
        ),
        (
            _SITE + "/torch/utils/data/_utils/fetch.py",
            52,
            "fetch",
            "data = [self.dataset[idx] for idx in possibly_batched_index]",
        ),
        *inner,
    ]
    original = [
        "Original Traceback (most recent call last):",
        *fill_frames(plan.env, worker_frames),
        final_inner,
    ]
    final = [f"{exc}: Caught {exc} in DataLoader worker process {worker}.", *original]
    inc.add(rank, ctx.tb(rank, t, "data", final, cite=(0, len(final) - 1)))
    inc.deaths[rank] = Death(t + 0.3, "error", final[0])
    return inc
