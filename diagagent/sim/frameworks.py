"""What Megatron-LM, NeMo and DeepSpeed print: startup banners, per-iteration lines, checkpoint saves.

Formats follow the frameworks' own format strings (e.g. Megatron's `' iteration {:8d}/{:8d} |'`).
"""

from __future__ import annotations

import math

from diagagent.sim import clock
from diagagent.sim.incident import Event
from diagagent.sim.plan import Plan

MEGATRON_ARGS = [
    ("accumulate_allreduce_grads_in_fp32", "True"),
    ("adam_beta1", "0.9"),
    ("adam_beta2", "0.95"),
    ("adam_eps", "1e-08"),
    ("apply_query_key_layer_scaling", "False"),
    ("async_save", "None"),
    ("attention_dropout", "0.0"),
    ("bf16", "True"),
    ("check_for_nan_in_loss_and_grad", "True"),
    ("clip_grad", "1.0"),
    ("context_parallel_size", "{cp}"),
    ("data_path", "['/lustre/data/tokens/text_document']"),
    ("distributed_backend", "nccl"),
    ("distributed_timeout_minutes", "10"),
    ("eval_interval", "1000"),
    ("ffn_hidden_size", "{ffn}"),
    ("global_batch_size", "{gbs}"),
    ("hidden_size", "{hidden}"),
    ("log_interval", "1"),
    ("lr", "0.0003"),
    ("lr_decay_style", "cosine"),
    ("lr_warmup_iters", "2000"),
    ("micro_batch_size", "{mbs}"),
    ("num_attention_heads", "{heads}"),
    ("num_layers", "{layers}"),
    ("overlap_grad_reduce", "True"),
    ("overlap_param_gather", "True"),
    ("pipeline_model_parallel_size", "{pp}"),
    ("save", "/ckpt/{job}"),
    ("save_interval", "{save}"),
    ("seq_length", "{seq}"),
    ("sequence_parallel", "True"),
    ("tensor_model_parallel_size", "{tp}"),
    ("tokenizer_type", "HuggingFaceTokenizer"),
    ("train_iters", "{iters}"),
    ("transformer_impl", "transformer_engine"),
    ("use_distributed_optimizer", "True"),
    ("use_flash_attn", "True"),
    ("weight_decay", "0.1"),
    ("world_size", "{world}"),
]

_SHAPES = {
    "llama3-8b": (4096, 14336, 32, 32),
    "llama3-70b": (8192, 28672, 80, 64),
    "gpt3-175b": (12288, 49152, 96, 96),
    "mixtral-8x7b": (4096, 14336, 32, 32),
}


def logging_rank(plan: Plan) -> int:
    """The rank that prints per-iteration lines: Megatron's print_rank_last, else rank 0."""
    return plan.world - 1 if plan.env.framework == "megatron" else 0


def loss_at(plan: Plan, it: int, spike_from: int | None, nan_from: int | None, noise: float) -> float:
    if nan_from is not None and it >= nan_from:
        return math.nan
    base = 1.55 + 2.3 * (it / 800.0 + 1.0) ** -0.28 + noise
    if spike_from is not None and it >= spike_from:
        base *= 1.0 + 0.18 * (it - spike_from + 1) ** 1.7
    return base


def grad_norm_at(it: int, spike_from: int | None, nan_from: int | None, noise: float) -> float:
    if nan_from is not None and it >= nan_from:
        return math.nan
    g = 0.9 + noise
    if spike_from is not None and it >= spike_from:
        g *= 6.0 ** (it - spike_from + 1)
    return g


def lr_at(plan: Plan, it: int) -> float:
    return 3.0e-4 * 0.5 * (1.0 + math.cos(math.pi * min(it, plan.train_iters) / plan.train_iters)) + 3.0e-5


def _fmt_e(x: float) -> str:
    return f"{x:.6E}"


def iteration_line(
    plan: Plan,
    it: int,
    ts: float,
    dur_s: float,
    loss: float,
    gnorm: float,
    skipped: int,
    nan: int,
    loss_scale: float,
    tflops: float,
) -> list[str]:
    """The lines the logging rank prints when iteration `it` finishes."""
    fw = plan.env.framework
    if fw == "megatron":
        return [
            f" [{clock.plain(ts)}] iteration {it:8d}/{plan.train_iters:8d} | consumed samples: "
            f"{it * plan.global_batch:12d} | elapsed time per iteration (ms): {dur_s * 1000:.1f} | "
            f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | learning rate: {_fmt_e(lr_at(plan, it))} | "
            f"global batch size: {plan.global_batch:5d} | lm loss: {_fmt_e(loss)} | loss scale: "
            f"{loss_scale:.1f} | "
            f"grad norm: {gnorm:.3f} | number of skipped iterations: {skipped:3d} | "
            f"number of nan iterations: {nan:3d} |"
        ]
    if fw == "nemo":
        return [
            f"Training epoch 0, iteration {it}/{plan.train_iters} | lr: {lr_at(plan, it):.4g} | "
            f"global_batch_size: {plan.global_batch} | global_step: {it} | reduced_train_loss: {loss:.4g} | "
            f"train_step_timing in s: {dur_s:.4g} | consumed_samples: {it * plan.global_batch}"
        ]
    stamp = clock.pylog(ts)
    samples = plan.global_batch / dur_s
    return [
        f"[{stamp}] [INFO] [logging.py:128:log_dist] [Rank 0] step={it}, skipped={skipped}, "
        f"lr=[{lr_at(plan, it):.10g}], mom=[(0.9, 0.95)]",
        f"[{stamp}] [INFO] [timer.py:264:stop] epoch=0/micro_step={it * 2}/global_step={it}, "
        f"RunningAvgSamplesPerSec={samples * 1.01:.2f}, CurrSamplesPerSec={samples:.2f}, "
        f"MemAllocated=23.51GB, MaxMemAllocated=61.27GB",
        f"{stamp} - train - INFO - step {it} | loss {loss:.4f} | grad_norm {gnorm:.4f} | step_time "
        f"{dur_s:.3f}s",
    ]


def save_events(plan: Plan, step: int, begin: float, end: float) -> list[Event]:
    """Rank 0's lines around a checkpoint save."""
    fw = plan.env.framework
    path = f"/ckpt/{plan.job_id}"
    if fw == "megatron":
        return [
            Event(begin, [f"saving checkpoint at iteration {step:7d} to {path} in torch_dist format"]),
            Event(
                end,
                [
                    f"  successfully saved checkpoint from iteration {step:7d} to {path} "
                    f"[ t 1/{plan.layout.tp}, p 1/{plan.layout.pp} ]"
                ],
            ),
        ]
    if fw == "nemo":
        return [
            Event(
                end,
                [
                    f"[NeMo I {clock.plain(end)} nemo_model_checkpoint:497] Checkpoint save for step {step} "
                    f"started at {begin:.6f}.",
                    f"[NeMo I {clock.plain(end)} nemo_model_checkpoint:272] Scheduled async checkpoint save "
                    f"for {path}/checkpoints/step={step}-consumed_samples={step * plan.global_batch}.0.ckpt",
                ],
            )
        ]
    return [
        Event(
            begin,
            [
                f"[{clock.pylog(begin)}] [INFO] [logging.py:128:log_dist] [Rank 0] [Torch] Checkpoint "
                f"global_step{step} is about to be saved!"
            ],
        ),
        Event(
            end,
            [
                f"[{clock.pylog(end)}] [INFO] [engine.py:3536:_save_zero_checkpoint] zero checkpoint saved "
                f"{path}/global_step{step}/bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt",
                f"[{clock.pylog(end)}] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint "
                f"global_step{step} is ready now!",
            ],
        ),
    ]


def rank0_startup(plan: Plan, t0: float, t_train: float) -> list[Event]:
    """Rank 0's startup output: arguments, model build, data, checkpoint load, 'training ...'."""
    fw = plan.env.framework
    hidden, ffn, layers, heads = _SHAPES[plan.model]
    lay = plan.layout
    fill = dict(
        cp=lay.cp,
        ffn=ffn,
        gbs=plan.global_batch,
        hidden=hidden,
        mbs=plan.micro_batch,
        heads=heads,
        layers=layers,
        pp=lay.pp,
        job=plan.job_id,
        save=plan.save_interval,
        seq=plan.seq_len,
        tp=lay.tp,
        iters=plan.train_iters,
        world=plan.world,
    )
    span = t_train - t0
    resumed = plan.resumed_step
    if fw == "megatron":
        args = ["------------------------ arguments ------------------------"]
        args += [f"  {k} {'.' * max(2, 46 - len(k))} {v.format(**fill)}" for k, v in MEGATRON_ARGS]
        args.append("-------------------- end of arguments ---------------------")
        bar = "\r".join(
            f" > building indices for blendable datasets ...{p:4d}%|{'#' * (p // 10):10s}| "
            f"{p * 12}/1200 [00:{p // 4:02d}<00:{(100 - p) // 4:02d}, 47.9it/s]"
            for p in range(0, 101, 20)
        )
        return [
            Event(
                t0 + 1.0,
                [
                    "using world size: %d, data-parallel size: %d, context-parallel size: %d, tensor-model-"
                    "parallel size: %d, pipeline-model-parallel size: %d "
                    % (plan.world, lay.dp, lay.cp, lay.tp, lay.pp),
                    *args,
                ],
            ),
            Event(
                t0 + span * 0.2,
                [
                    "> initializing torch distributed ...",
                    "> initialized tensor model parallel with size %d" % lay.tp,
                    "> initialized pipeline model parallel with size %d" % lay.pp,
                ],
            ),
            Event(
                t0 + span * 0.4,
                [
                    "building GPT model ...",
                    " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): %d"
                    % int(plan.params_b * 1e9 / (lay.tp * lay.pp)),
                ],
            ),
            Event(
                t0 + span * 0.55,
                [
                    f"loading distributed checkpoint from /ckpt/{plan.job_id} at iteration {resumed}",
                    f"  successfully loaded checkpoint from /ckpt/{plan.job_id} [ t 1/{lay.tp}, "
                    f"p 1/{lay.pp} ] at iteration {resumed}",
                    f"[after model, optimizer, and learning rate scheduler are built] datetime: "
                    f"{clock.plain(t0 + span * 0.56)} ",
                ],
            ),
            Event(
                t0 + span * 0.8,
                [
                    "> building train, validation, and test datasets ...",
                    bar,
                    f"[after dataloaders are built] datetime: {clock.plain(t0 + span * 0.9)} ",
                    "done with setup ...",
                    "training ...",
                    f"[before the start of training step] datetime: {clock.plain(t_train)} ",
                ],
            ),
        ]
    if fw == "nemo":

        def nemo(ts: float, mod: str, msg: str) -> str:
            return f"[NeMo I {clock.plain(ts)} {mod}] {msg}"

        bar = "\r".join(
            f"Loading distributed checkpoint: {p:3d}%|{'█' * (p // 10):10s}| {p // 10}/10 "
            f"[00:{p // 5:02d}<00:{(100 - p) // 5:02d},  2.01s/it]"
            for p in range(0, 101, 10)
        )
        return [
            Event(
                t0 + 2.0,
                [nemo(t0 + 2.0, "exp_manager:396", f"Experiments will be logged at /results/{plan.name}")],
            ),
            Event(
                t0 + span * 0.5,
                [
                    nemo(
                        t0 + span * 0.5,
                        "nlp_overrides:1389",
                        f"Restoring from checkpoint /ckpt/{plan.job_id}/checkpoints/step={resumed}",
                    ),
                    bar,
                ],
            ),
            Event(
                t_train - 1.0,
                [
                    nemo(
                        t_train - 1.0,
                        "megatron_gpt_model:1602",
                        "Pipeline model parallel rank: 0, "
                        f"Tensor model parallel rank: 0, Number of model parameters on device: "
                        f"{plan.params_b * 1e9 / (lay.tp * lay.pp):.2e}. Number of precise model parameters "
                        "on "
                        f"device: {int(plan.params_b * 1e9 / (lay.tp * lay.pp))}.",
                    )
                ],
            ),
        ]

    def ds(ts: float, src: str, msg: str) -> str:
        return f"[{clock.pylog(ts)}] [INFO] [{src}] {msg}"

    return [
        Event(
            t0 + 3.0,
            [
                ds(
                    t0 + 3.0,
                    "logging.py:128:log_dist",
                    "[Rank 0] DeepSpeed info: version=0.15.4, git-hash=unknown, git-branch=unknown",
                ),
                ds(t0 + 3.1, "config.py:1001:print", "DeepSpeedEngine configuration:"),
                ds(t0 + 3.1, "config.py:1005:print", "  bf16_enabled ................. True"),
                ds(t0 + 3.1, "config.py:1005:print", "  zero_optimization_stage ...... 3"),
                ds(t0 + 3.1, "config.py:1005:print", f"  train_batch_size ............. {plan.global_batch}"),
                ds(t0 + 3.1, "config.py:1005:print", "  steps_per_print .............. 1"),
            ],
        ),
        Event(
            t0 + span * 0.6,
            [
                ds(
                    t0 + span * 0.6,
                    "engine.py:3127:_load_checkpoint",
                    f"rank=0 loading checkpoint /ckpt/{plan.job_id}/global_step{resumed}",
                )
            ],
        ),
    ]
