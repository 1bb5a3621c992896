"""Python tracebacks as the training frameworks raise them: the frames from the script down to where it failed.

`traceback(env, where, final)` gives the lines; the last of `final` is the exception line an SRE cites.
"""

from __future__ import annotations

from diagagent.sim.plan import Env

Frame = tuple[str, int, str, str]  # file, line, function, source

_TORCH_MODULE = [
    (
        "{site}/torch/nn/modules/module.py",
        1736,
        "_wrapped_call_impl",
        "return self._call_impl(*args, **kwargs)",
    ),
    ("{site}/torch/nn/modules/module.py", 1747, "_call_impl", "return forward_call(*args, **kwargs)"),
]

_ENTRY: dict[str, list[Frame]] = {
    "megatron": [
        ("{work}/pretrain_gpt.py", 278, "<module>", "pretrain("),
        (
            "{work}/megatron/training/training.py",
            376,
            "pretrain",
            "iteration, num_floating_point_operations_so_far = train(",
        ),
        ("{work}/megatron/training/training.py", 1398, "train", "train_step(forward_step_func,"),
        (
            "{work}/megatron/training/training.py",
            754,
            "train_step",
            "losses_reduced = forward_backward_func(",
        ),
    ],
    "nemo": [
        ("{work}/megatron_gpt_pretraining.py", 42, "main", "trainer.fit(model)"),
        ("{site}/lightning/pytorch/trainer/trainer.py", 538, "fit", "call._call_and_handle_interrupt("),
        (
            "{site}/lightning/pytorch/trainer/call.py",
            46,
            "_call_and_handle_interrupt",
            "return trainer.strategy.launcher.launch(trainer_fn, *args, trainer=trainer, **kwargs)",
        ),
        ("{site}/lightning/pytorch/loops/fit_loop.py", 205, "run", "self.advance()"),
        (
            "{site}/lightning/pytorch/loops/training_epoch_loop.py",
            250,
            "advance",
            "batch_output = self.automatic_optimization.run(trainer.optimizers[0], batch_idx, kwargs)",
        ),
        (
            "/opt/NeMo/nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py",
            709,
            "training_step",
            "loss_mean = self.fwd_bwd_step(dataloader_iter, False)",
        ),
        (
            "/opt/NeMo/nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py",
            651,
            "fwd_bwd_step",
            "losses_reduced_per_micro_batch = fwd_bwd_function(",
        ),
    ],
    "deepspeed": [
        ("{work}/train.py", 312, "<module>", "main()"),
        ("{work}/train.py", 287, "main", "loss = engine(batch)"),
        ("{site}/deepspeed/utils/nvtx.py", 18, "wrapped_fn", "ret_val = func(*args, **kwargs)"),
    ],
}

_SCHEDULE = [
    (
        "{mcore}/pipeline_parallel/schedules.py",
        1434,
        "forward_backward_pipelining_without_interleaving",
        "output_tensor, num_tokens = forward_step(",
    ),
]

_WHERE: dict[str, list[Frame]] = {
    "forward": [
        (
            "{mcore}/pipeline_parallel/schedules.py",
            275,
            "forward_step",
            "output_tensor, loss_func = forward_step_func(data_iterator, model)",
        ),
        (
            "{work2}/pretrain_gpt.py",
            205,
            "forward_step",
            "output_tensor = model(tokens, position_ids, attention_mask,",
        ),
        *_TORCH_MODULE,
        ("{mcore}/transformer/transformer_block.py", 549, "forward", "hidden_states, context = layer("),
        *_TORCH_MODULE,
        (
            "{mcore}/transformer/transformer_layer.py",
            371,
            "forward",
            "mlp_output_with_bias = self.mlp(pre_mlp_layernorm_output)",
        ),
        *_TORCH_MODULE,
        (
            "{mcore}/transformer/mlp.py",
            113,
            "forward",
            "intermediate_parallel, bias_parallel = self.linear_fc1(hidden_states)",
        ),
    ],
    "backward": [
        (
            "{mcore}/pipeline_parallel/schedules.py",
            1478,
            "forward_backward_pipelining_without_interleaving",
            "input_tensor_grad = backward_step(",
        ),
        (
            "{mcore}/pipeline_parallel/schedules.py",
            366,
            "backward_step",
            "custom_backward(output_tensor[0], output_tensor_grad[0])",
        ),
        (
            "{mcore}/pipeline_parallel/schedules.py",
            150,
            "custom_backward",
            "Variable._execution_engine.run_backward(",
        ),
    ],
    "optimizer": [
        (
            "{work}/megatron/training/training.py",
            785,
            "train_step",
            "update_successful, grad_norm, num_zeros_in_grad = optimizer.step()",
        ),
        ("{site}/torch/utils/_contextlib.py", 116, "decorate_context", "return func(*args, **kwargs)"),
        (
            "{mcore}/optimizer/distrib_optimizer.py",
            1784,
            "step_with_ready_grads",
            "update_successful = super().step_with_ready_grads()",
        ),
        (
            "{mcore}/optimizer/optimizer.py",
            470,
            "step",
            "grad_norm = self.clip_grad_norm(self.config.clip_grad)",
        ),
    ],
    "data": [
        (
            "{work}/megatron/training/training.py",
            728,
            "train_step",
            "losses_reduced = forward_backward_func(",
        ),
        (
            "{mcore}/pipeline_parallel/schedules.py",
            275,
            "forward_step",
            "output_tensor, loss_func = forward_step_func(data_iterator, model)",
        ),
        (
            "{work2}/pretrain_gpt.py",
            198,
            "forward_step",
            "tokens, labels, loss_mask, attention_mask, position_ids = get_batch(",
        ),
        ("{work2}/pretrain_gpt.py", 121, "get_batch", "batch = get_batch_on_this_tp_rank(data_iterator)"),
        ("{work}/megatron/training/utils.py", 347, "get_batch_on_this_tp_rank", "data = next(data_iterator)"),
        ("{site}/torch/utils/data/dataloader.py", 701, "__next__", "data = self._next_data()"),
        ("{site}/torch/utils/data/dataloader.py", 1465, "_next_data", "return self._process_data(data)"),
        ("{site}/torch/utils/data/dataloader.py", 1491, "_process_data", "data.reraise()"),
        ("{site}/torch/_utils.py", 715, "reraise", "raise exception"),
    ],
    "save": [
        (
            "{work}/megatron/training/training.py",
            1473,
            "train",
            "save_checkpoint_and_time(iteration, model, optimizer,",
        ),
        (
            "{work}/megatron/training/training.py",
            1109,
            "save_checkpoint_and_time",
            "save_checkpoint(iteration, model, optimizer, opt_param_scheduler,",
        ),
        (
            "{work}/megatron/training/checkpointing.py",
            420,
            "save_checkpoint",
            "async_save_request = dist_checkpointing.save(state_dict, checkpoint_name, save_strategy,",
        ),
        (
            "{mcore}/dist_checkpointing/serialization.py",
            394,
            "save",
            "sharded_strategy.save(sharded_state_dict, checkpoint_dir)",
        ),
        (
            "{mcore}/dist_checkpointing/strategies/torch.py",
            664,
            "save",
            "save_state_dict_async_finalize(*save_state_dict_ret)",
        ),
        (
            "{site}/torch/serialization.py",
            850,
            "save",
            "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)",
        ),
        ("{site}/torch/serialization.py", 1114, "_save", "zip_file.write_record(name, storage, num_bytes)"),
    ],
    "load": [
        ("{work}/pretrain_gpt.py", 278, "<module>", "pretrain("),
        (
            "{work}/megatron/training/training.py",
            316,
            "pretrain",
            "model, optimizer, opt_param_scheduler = setup_model_and_optimizer(",
        ),
        (
            "{work}/megatron/training/training.py",
            755,
            "setup_model_and_optimizer",
            "args.iteration, args.num_floating_point_operations_so_far = load_checkpoint(",
        ),
        (
            "{work}/megatron/training/checkpointing.py",
            1124,
            "load_checkpoint",
            "model[0].load_state_dict(state_dict['model'], strict=strict)",
        ),
        (
            "{site}/torch/nn/modules/module.py",
            2584,
            "load_state_dict",
            'raise RuntimeError("Error(s) in loading state_dict for {}:\\n\\t{}".format(',
        ),
    ],
}


def _fill(frames: list[Frame], env: Env) -> list[str]:
    py = env.python[:4]
    site = f"/usr/local/lib/python{py}/dist-packages"
    mcore = "/workspace/Megatron-LM/megatron/core" if env.framework == "megatron" else f"{site}/megatron/core"
    work2 = env.workdir if env.framework == "megatron" else "/opt/NeMo/nemo/collections/llm/gpt/model"
    out = []
    for file, line, func, src in frames:
        path = file.format(site=site, mcore=mcore, work=env.workdir, work2=work2)
        out.append(f'  File "{path}", line {line}, in {func}')
        out.append(f"    {src}")
    return out


def frames_for(env: Env, where: str) -> list[Frame]:
    """The call path from the script's entry down to `where` (forward, backward, optimizer, data, save, load)."""
    if where == "load" or where == "import":
        return _WHERE["load"][:2] if where == "import" else _WHERE["load"]
    entry = _ENTRY.get(env.framework, _ENTRY["megatron"])
    if env.framework == "deepspeed" and where in ("forward", "backward", "data"):
        return entry + _WHERE[where][-6:]
    body = _WHERE[where]
    return entry + (_SCHEDULE if where == "forward" else []) + body


def traceback(env: Env, where: str, final: list[str], extra_frames: list[Frame] | None = None) -> list[str]:
    """`Traceback (most recent call last):`, the frames, then the `final` exception lines."""
    frames = frames_for(env, where) + (extra_frames or [])
    return ["Traceback (most recent call last):", *_fill(frames, env), *final]


def fill_frames(env: Env, frames: list[Frame]) -> list[str]:
    return _fill(frames, env)


CUDA_ERROR_TAIL = [
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
]
