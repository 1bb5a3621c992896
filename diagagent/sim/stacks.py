"""py-spy dumps of every rank while the job hung or slowed: healthy ranks wait in a collective, the faulty rank
and its tensor-parallel peers sit elsewhere. Text (`py-spy dump`) or JSON (`py-spy dump --json`).

`stack_files(plan, incident)` yields one file per rank; a fail-slow job gets several dumps per file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from diagagent.sim.clock import stream
from diagagent.sim.incident import Incident
from diagagent.sim.logs import TextFile
from diagagent.sim.plan import Plan

Frame = tuple[str, str, int]  # function, file, line

_OUTER = {
    "megatron": [
        ("train_step", "megatron/training/training.py", 754),
        ("train", "megatron/training/training.py", 1398),
        ("pretrain", "megatron/training/training.py", 376),
        ("<module>", "pretrain_gpt.py", 278),
    ],
    "nemo": [
        ("training_step", "nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py", 709),
        ("advance", "lightning/pytorch/loops/training_epoch_loop.py", 250),
        ("run", "lightning/pytorch/loops/fit_loop.py", 205),
        ("fit", "lightning/pytorch/trainer/trainer.py", 538),
        ("main", "megatron_gpt_pretraining.py", 42),
        ("<module>", "megatron_gpt_pretraining.py", 48),
    ],
    "deepspeed": [("main", "train.py", 287), ("<module>", "train.py", 312)],
}
_SCHED = (
    "forward_backward_pipelining_without_interleaving",
    "megatron/core/pipeline_parallel/schedules.py",
    1434,
)
_MODULE = [
    ("_call_impl", "torch/nn/modules/module.py", 1747),
    ("_wrapped_call_impl", "torch/nn/modules/module.py", 1736),
]
_FORWARD = [
    ("forward", "megatron/core/transformer/mlp.py", 113),
    *_MODULE,
    ("forward", "megatron/core/transformer/transformer_layer.py", 371),
    *_MODULE,
    ("forward", "megatron/core/transformer/transformer_block.py", 549),
    *_MODULE,
    ("forward", "megatron/core/models/gpt/gpt_model.py", 264),
    *_MODULE,
    ("forward_step", "pretrain_gpt.py", 205),
    ("forward_step", "megatron/core/pipeline_parallel/schedules.py", 275),
]
_INNER: dict[str, list[Frame]] = {
    "dp_wait": [
        ("all_reduce", "torch/distributed/distributed_c10d.py", 2501),
        ("wrapper", "torch/distributed/c10d_logger.py", 83),
        ("start_grad_sync", "megatron/core/distributed/param_and_grad_buffer.py", 336),
        ("finish_grad_sync", "megatron/core/distributed/param_and_grad_buffer.py", 368),
        ("finish_grad_sync", "megatron/core/distributed/distributed_data_parallel.py", 403),
        ("finalize_model_grads", "megatron/core/distributed/finalize_model_grads.py", 224),
        (
            "forward_backward_pipelining_without_interleaving",
            "megatron/core/pipeline_parallel/schedules.py",
            1520,
        ),
    ],
    "pp_recv": [
        ("wait", "torch/distributed/distributed_c10d.py", 2310),
        ("_batched_p2p_ops", "megatron/core/pipeline_parallel/p2p_communication.py", 172),
        ("_communicate", "megatron/core/pipeline_parallel/p2p_communication.py", 343),
        ("recv_forward", "megatron/core/pipeline_parallel/p2p_communication.py", 432),
        ("recv_forward", "megatron/core/pipeline_parallel/schedules.py", 1196),
        _SCHED,
    ],
    "tp_wait": [
        ("all_reduce", "torch/distributed/distributed_c10d.py", 2501),
        ("wrapper", "torch/distributed/c10d_logger.py", 83),
        ("_reduce", "megatron/core/tensor_parallel/mappings.py", 34),
        ("forward", "megatron/core/tensor_parallel/mappings.py", 241),
        ("apply", "torch/autograd/function.py", 575),
        ("reduce_from_tensor_model_parallel_region", "megatron/core/tensor_parallel/mappings.py", 455),
        ("forward", "megatron/core/tensor_parallel/layers.py", 1014),
        *_MODULE,
        *_FORWARD,
        _SCHED,
    ],
    "compute": [
        ("forward", "transformer_engine/pytorch/module/layernorm_mlp.py", 1511),
        *_MODULE,
        *_FORWARD,
        _SCHED,
    ],
    "backward": [
        ("run_backward", "torch/autograd/graph.py", 825),
        ("custom_backward", "megatron/core/pipeline_parallel/schedules.py", 150),
        ("backward_step", "megatron/core/pipeline_parallel/schedules.py", 366),
        (
            "forward_backward_pipelining_without_interleaving",
            "megatron/core/pipeline_parallel/schedules.py",
            1478,
        ),
    ],
    "sync": [
        ("synchronize", "torch/cuda/__init__.py", 954),
        ("_reduce_loss", "megatron/training/training.py", 702),
    ],
}
_DS_INNER: dict[str, list[Frame]] = {
    "dp_wait": [
        ("all_gather_into_tensor", "torch/distributed/distributed_c10d.py", 3416),
        ("wrapper", "torch/distributed/c10d_logger.py", 83),
        ("all_gather_into_tensor", "deepspeed/comm/torch.py", 219),
        ("allgather_fn", "deepspeed/comm/comm.py", 305),
        ("_all_gather_dtype", "deepspeed/runtime/zero/partition_parameters.py", 1138),
        ("fetch_sub_module", "deepspeed/runtime/zero/partitioned_param_coordinator.py", 315),
        ("pre_sub_module_forward_function", "deepspeed/runtime/zero/parameter_offload.py", 472),
        ("forward", "deepspeed/runtime/engine.py", 1899),
    ],
    "compute": [
        ("forward", "transformers/models/llama/modeling_llama.py", 309),
        *_MODULE,
        ("forward", "transformers/models/llama/modeling_llama.py", 640),
        *_MODULE,
        ("forward", "deepspeed/runtime/engine.py", 1899),
    ],
}
_IDLE = [
    (
        "Thread-2 (_pin_memory_loop)",
        [
            ("select", "selectors.py", 415),
            ("wait", "multiprocessing/connection.py", 947),
            ("_poll", "multiprocessing/connection.py", 440),
            ("poll", "multiprocessing/connection.py", 257),
            ("get", "multiprocessing/queues.py", 113),
            ("do_one_step", "torch/utils/data/_utils/pin_memory.py", 31),
            ("_pin_memory_loop", "torch/utils/data/_utils/pin_memory.py", 58),
            ("run", "threading.py", 982),
            ("_bootstrap_inner", "threading.py", 1045),
            ("_bootstrap", "threading.py", 1002),
        ],
    ),
    (
        "Thread-1",
        [
            ("wait", "threading.py", 331),
            ("wait", "threading.py", 629),
            ("run", "tqdm/_monitor.py", 60),
            ("_bootstrap_inner", "threading.py", 1045),
            ("_bootstrap", "threading.py", 1002),
        ],
    ),
]


def _main_frames(framework: str, state: str) -> list[Frame]:
    inner = _DS_INNER if framework == "deepspeed" else _INNER
    frames = inner.get(state) or inner["dp_wait"]
    return frames + _OUTER.get(framework, _OUTER["megatron"])


def hang_states(plan: Plan, inc: Incident) -> dict[int, str]:
    """What each rank is doing while the job hangs: the stuck rank computes, its node's peers wait on it in TP,
    the adjacent pipeline stages wait in p2p, everyone else waits in the data-parallel all-reduce."""
    lay = plan.layout
    stuck = inc.hang_rank if inc.hang_rank is not None else 0
    node = lay.node_of(stuck)
    states = {}
    neighbours = {n for n in (lay.pp_peer(node, 1), lay.pp_peer(node, -1)) if n is not None}
    for rank in range(lay.world):
        n = lay.node_of(rank)
        if rank == stuck:
            states[rank] = "compute"
        elif n == node:
            states[rank] = "tp_wait" if lay.tp > 1 else "sync"
        elif n in neighbours:
            states[rank] = "pp_recv"
        else:
            states[rank] = "dp_wait"
    return states


def _slow_state(plan: Plan, rank: int, slow_node: int, slow_gpu_rank: int, rng: random.Random) -> str:
    """One sample of a fail-slow job: the throttled GPU is mostly computing, the rest mostly waiting."""
    if rank == slow_gpu_rank:
        return rng.choices(["compute", "backward", "dp_wait"], [0.55, 0.35, 0.10])[0]
    if plan.layout.node_of(rank) == slow_node:
        return rng.choices(["tp_wait", "compute", "dp_wait"], [0.6, 0.2, 0.2])[0]
    return rng.choices(["dp_wait", "pp_recv", "compute", "backward"], [0.55, 0.15, 0.18, 0.12])[0]


def _header(plan: Plan, rank: int) -> list[str]:
    lay, env = plan.layout, plan.env
    args = (
        f"--tensor-model-parallel-size {lay.tp} --pipeline-model-parallel-size {lay.pp} "
        f"--micro-batch-size {plan.micro_batch} --global-batch-size {plan.global_batch}"
    )
    py = env.python[:4]
    return [
        f"Process {plan.pids[rank]}: /usr/bin/python{py} -u {env.workdir}/{env.script} {args}",
        f"Python v{env.python} (/usr/bin/python{py})",
        "",
    ]


def _thread_id(plan: Plan, rank: int, i: int) -> str:
    return f"0x{(0x7F3A00000000 + (plan.pids[rank] * 4096) % 0xFFFFF000 + i * 0x9C3000) & 0x7FFFFFFFFFFF:X}"


def _dump_text(plan: Plan, rank: int, state: str) -> list[str]:
    lines = _header(plan, rank)
    lines.append(f'Thread {_thread_id(plan, rank, 0)} (active): "MainThread"')
    lines += [f"    {fn} ({path}:{ln})" for fn, path, ln in _main_frames(plan.env.framework, state)]
    for i, (name, frames) in enumerate(_IDLE, start=1):
        lines.append(f'Thread {_thread_id(plan, rank, i)} (idle): "{name}"')
        lines += [f"    {fn} ({path}:{ln})" for fn, path, ln in frames]
    return lines


def _dump_json(plan: Plan, rank: int, state: str) -> str:
    site = f"/usr/local/lib/python{plan.env.python[:4]}/dist-packages/"
    threads = []
    for i, (name, frames, active) in enumerate(
        [("MainThread", _main_frames(plan.env.framework, state), True)] + [(n, f, False) for n, f in _IDLE]
    ):
        threads.append(
            {
                "pid": plan.pids[rank],
                "thread_id": int(_thread_id(plan, rank, i), 16),
                "thread_name": name,
                "os_thread_id": plan.pids[rank] + i * 37,
                "active": active,
                "owns_gil": False,
                "frames": [
                    {
                        "name": fn,
                        "filename": site + path,
                        "module": None,
                        "short_filename": path,
                        "line": ln,
                        "locals": None,
                        "is_entry": j == len(frames) - 1,
                    }
                    for j, (fn, path, ln) in enumerate(frames)
                ],
            }
        )
    return json.dumps(threads, indent=2)


def stack_files(plan: Plan, inc: Incident) -> Iterator[TextFile]:
    """Stack dumps of every rank (hang: one dump each; fail-slow straggler: several)."""
    lay = plan.layout
    if inc.outcome == "hang":
        states = hang_states(plan, inc)
        for rank in range(lay.world):
            host = plan.host(rank)
            if plan.env.pyspy_json:
                yield TextFile(
                    f"stacks/{host}/rank-{rank}.json",
                    (_dump_json(plan, rank, states[rank]) + "\n").encode(),
                    [],
                )
            else:
                yield TextFile(
                    f"stacks/{host}/rank-{rank}.txt",
                    ("\n".join(_dump_text(plan, rank, states[rank])) + "\n").encode(),
                    [],
                )
        return
    if inc.outcome == "slow" and inc.slow_nodes:
        rng = stream(plan.seed, "stacks")
        node = next(iter(inc.slow_nodes))
        throttled = inc.health[node].throttle if node in inc.health else {}
        gpu = min((g for g, why in throttled.items() if why == "thermal"), default=0)
        slow_rank = node * lay.gpus_per_node + gpu
        rounds = rng.randint(3, 5)
        for rank in range(lay.world):
            lines: list[str] = []
            for _ in range(rounds):
                lines += _dump_text(plan, rank, _slow_state(plan, rank, node, slow_rank, rng)) + [""]
            yield TextFile(f"stacks/{plan.host(rank)}/rank-{rank}.txt", "\n".join(lines).encode(), [])
