"""Megatron-DeepSpeed launched by DeepSpeed's pdsh runner (every line carries pdsh's `host: ` prefix).
seq_length was raised 4096 -> 8192; only the last pipeline stage (the logits + vocab-parallel cross entropy,
held on dgx-a08) runs out of GPU memory a few iterations after the resume. Stages 0-2 see the cascade."""
import random
from datetime import timedelta
from common import Bundle, T, iso, pylog_ts, nccl, nccl_init_lines, watchdog_timeout, glog

IID = "mds-pdsh-laststage-oom-seqlen-4node"
HOSTS = ["dgx-a05", "dgx-a06", "dgx-a07", "dgx-a08"]
IPS = ["10.40.2.5", "10.40.2.6", "10.40.2.7", "10.40.2.8"]
T0 = T("2026-11-24T03:10:02")
MDS = "/workspace/Megatron-DeepSpeed"
DS = "/opt/conda/lib/python3.10/site-packages/deepspeed"


def ds(t, lvl, where, msg):
    t = t + timedelta(milliseconds=random.randint(0, 999))
    return f"[{pylog_ts(t)}] [{lvl}] [{where}] {msg}"


def build():
    b = Bundle(IID)
    logs = {h: [] for h in HOSTS}
    pids = {h: 51200 + 311 * i for i, h in enumerate(HOSTS)}
    t = T0
    # launcher (first host) prints the pdsh command line
    L0 = logs[HOSTS[0]]
    L0.append(ds(t, "INFO", "multinode_runner.py:81:get_cmd", "Running on the following workers: " + ",".join(HOSTS)))
    L0.append(ds(t, "INFO", "runner.py:568:main", "cmd = pdsh -S -f 1024 -w " + ",".join(HOSTS) +
                 " export PYTHONPATH=/workspace/Megatron-DeepSpeed; export NCCL_IB_HCA=mlx5; cd /workspace/Megatron-DeepSpeed;"
                 " /opt/conda/bin/python -u -m deepspeed.launcher.launch --world_info=eyJkZ3gtYTA1IjogWzAsIDEsIDIsIDMsIDQsIDUsIDYsIDddfQ=="
                 " --node_rank=%n --master_addr=10.40.2.5 --master_port=29500 pretrain_gpt.py --tensor-model-parallel-size 2"
                 " --pipeline-model-parallel-size 4 --num-layers 40 --hidden-size 6144 --num-attention-heads 48"
                 " --seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 2 --global-batch-size 512"
                 " --load /lustre/ckpt/gpt13b --save /lustre/ckpt/gpt13b --deepspeed --deepspeed_config ds_config.json"))
    for i, h in enumerate(HOSTS):
        L = logs[h]
        tt = t + timedelta(seconds=3)
        L.append(f"{h}: " + ds(tt, "INFO", "real_accelerator.py:203:get_accelerator", "Setting ds_accelerator to cuda (auto detect)"))
        L.append(f"{h}: " + ds(tt, "INFO", "launch.py:146:main", "WORLD INFO DICT: {" + ", ".join(
            f"'{x}': [0, 1, 2, 3, 4, 5, 6, 7]" for x in HOSTS) + "}"))
        L.append(f"{h}: " + ds(tt, "INFO", "launch.py:152:main", f"nnodes=4, num_local_procs=8, node_rank={i}"))
        L.append(f"{h}: " + ds(tt, "INFO", "launch.py:163:main", "dist_world_size=32"))
        L.append(f"{h}: " + ds(tt, "INFO", "launch.py:165:main", "Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"))
        L.append(f"{h}: " + ds(tt + timedelta(seconds=9), "WARNING", "config_utils.py:69:_process_deprecated_field",
                               "Config parameter cpu_offload is deprecated use offload_optimizer instead"))
        for d in range(0, 8, 3):
            L += [f"{h}: {x}" for x in nccl_init_lines(h, pids[h] + d, d, IPS[i])]
    L0.append(f"{HOSTS[0]}: using world size: 32, data-parallel-size: 4, sequence-parallel size: 1, tensor-model-parallel size: 2, pipeline-model-parallel size: 4 ")
    L0.append(f"{HOSTS[0]}: ------------------------ arguments ------------------------")
    for k, v in [("micro_batch_size", 2), ("global_batch_size", 512), ("num_layers", 40), ("hidden_size", 6144),
                 ("recompute_granularity", "selective"), ("seq_length", 8192), ("max_position_embeddings", 8192),
                 ("padded_vocab_size", 50304), ("pipeline_model_parallel_size", 4), ("tensor_model_parallel_size", 2)]:
        L0.append(f"{HOSTS[0]}:   {k} {'.' * (47 - len(k))} {v}")
    L0.append(f"{HOSTS[0]}: -------------------- end of arguments ---------------------")
    L0.append(f"{HOSTS[0]}: > building GPT2BPETokenizer tokenizer ...")
    L0.append(f"{HOSTS[0]}:  > padded vocab (size: 50257) with 47 dummy tokens (new size: 50304)")
    L0.append(f"{HOSTS[0]}: > initializing torch distributed ...")
    t = T0 + timedelta(seconds=48)
    parts = [0, 11, 21, 31, 44]
    for s in range(4):
        logs[HOSTS[0]].append(f"{HOSTS[0]}: stage={s} layers={parts[s + 1] - parts[s]}")
    for i, h in enumerate(HOSTS):
        logs[h].append(f"{h}: " + ds(t, "INFO", "engine.py:180:__init__",
                                     f"RANK={8 * i} STAGE={i} LAYERS={parts[i + 1] - parts[i]} [{parts[i]}, {parts[i + 1]}) "
                                     f"STAGE_PARAMS=1638567936 (1638.568M) TOTAL_PARAMS=13127368704 (13127.369M) "
                                     f"UNIQUE_PARAMS=12818825216 (12818.825M)"))
        logs[h].append(f"{h}: /opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:429: UserWarning: "
                       f"torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly. The "
                       f"default value of use_reentrant will be updated to be False in the future. To maintain current "
                       f"behavior, pass use_reentrant=True. It is recommended that you use use_reentrant=False. Refer to "
                       f"docs for more details on the differences between the two variants.")
    L0.append(f"{HOSTS[0]}:  loading checkpoint from /lustre/ckpt/gpt13b at iteration 21000")
    L0.append(f"{HOSTS[0]}: " + ds(t + timedelta(seconds=30), "INFO", "torch_checkpoint_engine.py:27:load",
                                   "[Torch] Loading checkpoint from /lustre/ckpt/gpt13b/global_step21000/mp_rank_00_model_states.pt..."))
    L0.append(f"{HOSTS[0]}:   successfully loaded checkpoint from /lustre/ckpt/gpt13b at iteration 21000")
    L0.append(f"{HOSTS[0]}: [after model, optimizer, and learning rate scheduler are built] datetime: 2026-11-24 03:12:31 ")
    L0.append(f"{HOSTS[0]}: training ...")
    # iteration lines come from the last rank (print_rank_last) -> dgx-a08
    last = HOSTS[3]
    LL = logs[last]
    t = T("2026-11-24T03:13:40")
    for it in range(21001, 21014):
        t += timedelta(seconds=38)
        LL.append(f"{last}:  iteration    {it:5d}/  60000 | consumed samples:     {it * 512:9d} | consumed tokens: "
                  f"{it * 512 * 8192:12d} | elapsed time per iteration (ms): {38000 + random.randint(-900, 900)}.{random.randint(0, 9)}"
                  f" | learning rate: 1.{random.randint(100, 999)}E-04 | global batch size:   512 | lm loss: "
                  f"2.{random.randint(100000, 999999)}E+00 | loss scale: 1.0 | grad norm: 0.{random.randint(180, 260)} | "
                  f"number of skipped iterations:   0 | number of nan iterations:   0 | samples per second: 13.4"
                  f"{random.randint(0, 9)} | TFLOPs: 141.{random.randint(10, 99)} |")
        if it == 21001:
            for r in (24, 31):
                LL.append(f"{last}: [Rank {r}] (after 21001 iterations) memory (MB) | allocated: 58211.{random.randint(10, 99)} | "
                          f"max allocated: 76934.{random.randint(10, 99)} | reserved: 78150.0 | max reserved: 78150.0")
    # OOM on every rank of stage 3 (dgx-a08, ranks 24-31)
    t_oom = t + timedelta(seconds=21)
    for lr in (7, 0, 3):
        r = 24 + lr
        tb = ["Traceback (most recent call last):",
              f'  File "{MDS}/pretrain_gpt.py", line 356, in <module>',
              "    pretrain(train_valid_test_datasets_provider,",
              f'  File "{MDS}/megatron/training.py", line 226, in pretrain',
              "    iteration = train(forward_step_func,",
              f'  File "{MDS}/megatron/training.py", line 1216, in train',
              "    train_step(forward_step_func,",
              f'  File "{MDS}/megatron/training.py", line 659, in train_step',
              "    loss = model[0].train_batch(data_iter=data_iterator)",
              f'  File "{DS}/runtime/pipe/engine.py", line 373, in train_batch',
              "    self._exec_schedule(sched)",
              f'  File "{DS}/runtime/pipe/engine.py", line 1373, in _exec_schedule',
              "    self._exec_instr(**cmd.kwargs)",
              f'  File "{DS}/runtime/pipe/engine.py", line 702, in _exec_forward_pass',
              "    self.loss = self.module.loss_fn(outputs, labels)",
              f'  File "{MDS}/megatron/model/gpt_model.py", line 40, in CrossEntropy',
              "    losses = tensor_parallel.vocab_parallel_cross_entropy(output.contiguous().float(), labels)",
              f'  File "{MDS}/megatron/core/tensor_parallel/cross_entropy.py", line 29, in forward',
              "    vocab_parallel_logits = vocab_parallel_logits - logits_max.unsqueeze(dim=-1)",
              f"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.54 GiB (GPU {lr}; 79.15 GiB total "
              f"capacity; 75.{20 + lr} GiB already allocated; 1.{11 + lr} GiB free; 76.93 GiB reserved in total by PyTorch) "
              f"If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See "
              f"documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"]
        LL += [f"{last}: {x}" for x in tb]
    td = t_oom + timedelta(seconds=2)
    for lr in range(8):
        LL.append(f"{last}: " + ds(td, "INFO", "launch.py:315:sigkill_handler", f"Killing subprocess {pids[last] + lr}"))
    LL.append(f"{last}: " + ds(td, "ERROR", "launch.py:321:sigkill_handler",
                               "['/opt/conda/bin/python', '-u', 'pretrain_gpt.py', '--local_rank=7', '--tensor-model-parallel-size', "
                               "'2', '--pipeline-model-parallel-size', '4', '--seq-length', '8192', '--micro-batch-size', '2', "
                               "'--deepspeed', '--deepspeed_config', 'ds_config.json'] exits with return code = 1"))
    # cascade: stage 2 loses its p2p peer at once; stages 0-1 time out in the watchdog
    h2 = HOSTS[2]
    for d in (0, 5):
        logs[h2].append(f"{h2}: " + nccl(h2, pids[h2] + d, pids[h2] + d + 190, d,
                                         f"WARN NET/IB : Got completion from peer {IPS[3]}<{41230 + d}> with status=12 "
                                         f"opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{IPS[2]} remoteGid ::ffff:{IPS[3]} hca mlx5_{d}"))
        logs[h2].append(f"{h2}: " + nccl(h2, pids[h2] + d, pids[h2] + d + 190, d, "INFO transport/net.cc:1298 -> 6"))
    tw = t_oom + timedelta(seconds=600)
    for i in (0, 1, 2):
        h = HOSTS[i]
        for lr in (0, 4):
            r = 8 * i + lr
            logs[h] += [f"{h}: {x}" for x in watchdog_timeout(r, tw, 63114 + i, "RECV" if i else "BROADCAST", 25165824)]
        logs[h].append(f"{h}: " + ds(tw + timedelta(seconds=1), "INFO", "launch.py:315:sigkill_handler",
                                     f"Killing subprocess {pids[h]}"))
        logs[h].append(f"{h}: " + ds(tw + timedelta(seconds=1), "ERROR", "launch.py:321:sigkill_handler",
                                     "['/opt/conda/bin/python', '-u', 'pretrain_gpt.py', '--local_rank=0'] exits with return code = -6"))
    for h in HOSTS[1:]:
        L0.append(f"pdsh@{HOSTS[0]}: {h}: ssh exited with exit code {1 if h == last else 250}")
    for h in HOSTS:
        b.f(f"logs/{h}/deepspeed-launch.log").extend(logs[h])
    rel = f"logs/{last}/deepspeed-launch.log"
    b.mark(rel, "torch.cuda.OutOfMemoryError", 1)
    b.mark(rel, "torch.cuda.OutOfMemoryError", 2)

    job = f"""
job_id: "mds-88412"
name: gpt13b-mds-seq8k
framework: deepspeed
launcher: deepspeed-pdsh
status: failed
started_at: {iso(T0)}
ended_at: {iso(tw + timedelta(seconds=3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 2, pp: 4, dp: 4, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + f"""code:
  - {{commit: 4be21d0, at: 2026-11-10T09:00:00Z, message: "data: add code mix to blend"}}
  - {{commit: c71a9e3, at: 2026-11-23T18:40:00Z, message: "config: long context, seq_length 4096 -> 8192, micro batch stays 2"}}
checkpoints:
  - {{step: 20500, at: 2026-11-22T21:05:00Z, path: /lustre/ckpt/gpt13b/global_step20500, valid: true}}
  - {{step: 21000, at: 2026-11-23T16:55:00Z, path: /lustre/ckpt/gpt13b/global_step21000, valid: true}}
spares: 1
history: [mds-88301]
"""
    truth = {
        "fault": "cuda_oom",
        "category": "user_code",
        "root_cause": "seq_length was doubled to 8192 with the micro batch kept at 2; the last pipeline stage (dgx-a08, "
                      "ranks 24-31), which also holds the output layer and the fp32 vocab-parallel cross entropy, runs out "
                      "of GPU memory in iteration 21014, 13 iterations after the resume (allocator fragmentation on top of a near-full stage); stages 0-2 only show the p2p/watchdog cascade",
        "faulty_nodes": [last],
        "stage": "training",
        "iteration": 21014,
        "actions": [{"kind": "none"}],
        "note": "cuda_oom rather than user_config_error: the config is valid, it only does not fit on the last stage; the "
                "fix is a smaller micro batch, full recompute or a rebalanced pipeline split. No rollback: only one stage ran out.",
    }
    b.write(job, truth)
