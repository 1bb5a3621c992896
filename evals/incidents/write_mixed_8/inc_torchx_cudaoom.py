"""torchx (slurm scheduler, `torchx log` output: `train/<replica> ` prefix), torchtitan, CUDA OOM on every rank at the
first step after a commit that doubled local_batch_size."""
import datetime as dt
from common import Bundle, yaml_job, iso, torchrun_child_failed

ID = "torchx-titan-cudaoom-batch-commit-2node"
NODES = [("h100-r07-n03", "10.31.7.3"), ("h100-r07-n04", "10.31.7.4")]
RESUME = 12000
FAIL_IT = RESUME + 1


def oom_msg(gpu, want, free, inuse, alloc, reserved):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {want:.2f} GiB. GPU {gpu} has a total capacity of 79.11 GiB "
            f"of which {free:.2f} GiB is free. Including non-PyTorch memory, this process has {inuse:.2f} GiB memory in use. Of the allocated "
            f"memory {alloc:.2f} GiB is allocated by PyTorch, and {reserved:.2f} GiB is reserved by PyTorch but unallocated. If reserved but "
            f"unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            f"documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def build(out):
    b = Bundle(out, seed=7)
    r = b.rng
    t0 = dt.datetime(2026, 2, 3, 11, 0, 5)
    pids = {0: [211840 + k for k in range(8)], 1: [98312 + k for k in range(8)]}
    for n, (h, ip) in enumerate(NODES):
        f = f"logs/{h}/torchx-train-{n}.log"
        P = lambda x, mark=False: b.add(f, f"train/{n} {x}", mark)
        P(f"W0203 11:00:05.118000 {pids[n][0] - 40} torch/distributed/run.py:793] ")
        P(f"W0203 11:00:05.118000 {pids[n][0] - 40} torch/distributed/run.py:793] *****************************************")
        P(f"W0203 11:00:05.118000 {pids[n][0] - 40} torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        P(f"W0203 11:00:05.118000 {pids[n][0] - 40} torch/distributed/run.py:793] *****************************************")
        P(f"I0203 11:00:05.120000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:865] [default] starting workers for entrypoint: python")
        P(f"I0203 11:00:05.120000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:679] [default] Rendezvous'ing worker group")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525] [default] Rendezvous complete for workers. Result:")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   restart_count=0")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   master_addr=h100-r07-n03")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   master_port=29500")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   group_rank={n}")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   group_world_size=2")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   local_ranks=[0, 1, 2, 3, 4, 5, 6, 7]")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   role_ranks=[{', '.join(str(8 * n + k) for k in range(8))}]")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   global_ranks=[{', '.join(str(8 * n + k) for k in range(8))}]")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   role_world_sizes=[16, 16, 16, 16, 16, 16, 16, 16]")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525]   global_world_sizes=[16, 16, 16, 16, 16, 16, 16, 16]")
        P(f"I0203 11:00:11.402000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:525] ")
        P(f"I0203 11:00:11.403000 {pids[n][0] - 40} torch/distributed/elastic/agent/server/api.py:687] [default] Starting worker group")
        P(f"I0203 11:00:11.405000 {pids[n][0] - 40} torch/distributed/elastic/multiprocessing/api.py:701] log directory set to: /tmp/torchelastic_q3k1x0_m/4411873_9v1zj2ae")
        rk = 8 * n
        cnt = [0]

        def T(s):
            cnt[0] += 1
            return (t0 + dt.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S,") + f"{(cnt[0] * 23) % 1000:03d}"
        R = lambda s, lvl, x: P(f"[rank{rk}]:[titan] {T(s)} - root - {lvl} - {x}")
        R(9, "INFO", "Starting job: Llama 3 8B continued pretraining (code+web v4)")
        R(9, "WARNING", "ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden to 3 based on job config")
        R(9, "INFO", "CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory")
        R(10, "INFO", "Building 1-D device mesh with ['dp_shard'], [16]")
        R(10, "INFO", "[GC] Initial GC collection. 0.00 seconds.")
        R(11, "INFO", "Loading tokenizer from tokenizer.model")
        R(11, "INFO", "TikTokenizer built: #words 128256, BOS ID 128000, EOS ID 128001")
        R(11, "INFO", "Preparing c4 dataset from /lustre/datasets/codeweb-v4")
        R(12, "INFO", "Building llama3 8B with TransformerModelArgs(_enforced='This field is used to enforce all fields have defaults.', dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256, multiple_of=1024, ffn_dim_multiplier=1.3, norm_eps=1e-05, rope_theta=500000, max_seq_len=8192, depth_init=True, norm_type='rmsnorm', use_flex_attn=False, attn_mask_type='causal', eos_id=0)")
        R(13, "INFO", "Model llama3 8B size: 8,030,261,248 total parameters")
        R(13, "INFO", "Applied selective activation checkpointing to the model")
        R(14, "INFO", "Applied FSDP to the model")
        R(14, "INFO", "Peak FLOPS used for computing MFU: 9.890e+14")
        R(14, "INFO", "CUDA memory usage for model: 3.78GiB(4.78%)")
        R(14, "INFO", "Mixed precision training is handled by fully_shard")
        R(15, "INFO", "Trainer is initialized with local batch size 16, global batch size 256, gradient accumulation steps 1, sequence length 8192, total steps 60000 (warmup 2000).")
        R(15, "INFO", f"Loading the checkpoint at step {RESUME}.")
        R(58, "INFO", f"[GC] GC collection for checkpoint loading. 0.04 seconds.")
        R(58, "INFO", f"Finished loading the checkpoint in 43.11 seconds.")
        R(58, "INFO", "Training starts at step 12001.")
        R(58, "INFO", "Profiling active. Traces will be saved at ./outputs/profile_trace")
        for k in range(8):
            P(f"[rank{rk + k}]:/opt/torchtitan/.venv/lib/python3.11/site-packages/torch/_inductor/lowering.py:1917: UserWarning: Torchinductor does not support code generation for complex operators. Performance may be worse than eager.") if k == 0 else None
        # the OOM: local rank 0 is the only one teed to the console (--local-ranks-filter 0)
        tb = [f"[rank{rk}]: Traceback (most recent call last):",
              f'[rank{rk}]:   File "/opt/torchtitan/torchtitan/train.py", line 611, in <module>',
              f"[rank{rk}]:     trainer.train()",
              f'[rank{rk}]:   File "/opt/torchtitan/.venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
              f"[rank{rk}]:     return f(*args, **kwargs)",
              f'[rank{rk}]:   File "/opt/torchtitan/torchtitan/train.py", line 503, in train',
              f"[rank{rk}]:     self.train_step(data_iterator)",
              f'[rank{rk}]:   File "/opt/torchtitan/torchtitan/train.py", line 418, in train_step',
              f"[rank{rk}]:     loss = self.forward_backward_step(input_dict, labels)",
              f'[rank{rk}]:   File "/opt/torchtitan/torchtitan/train.py", line 396, in forward_backward_step',
              f"[rank{rk}]:     loss.backward()",
              f'[rank{rk}]:   File "/opt/torchtitan/.venv/lib/python3.11/site-packages/torch/_tensor.py", line 648, in backward',
              f"[rank{rk}]:     torch.autograd.backward(",
              f'[rank{rk}]:   File "/opt/torchtitan/.venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 353, in backward',
              f"[rank{rk}]:     _engine_run_backward(",
              f'[rank{rk}]:   File "/opt/torchtitan/.venv/lib/python3.11/site-packages/torch/autograd/graph.py", line 824, in _engine_run_backward',
              f"[rank{rk}]:     return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
              f"[rank{rk}]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"]
        for x in tb:
            P(x)
        P(f"[rank{rk}]: " + oom_msg(0, 7.83, 5.21 + 0.02 * n, 73.88 - 0.02 * n, 68.02, 4.17), mark=True)
        ag = pids[n][0] - 40
        P(f"W0203 11:01:24.{611000 + n * 1000:06d} {ag} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[n][1]} closing signal SIGTERM")
        P(f"E0203 11:01:25.{1000 + n * 3000:06d} {ag} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: {pids[n][0]}) of binary: /opt/torchtitan/.venv/bin/python")
        fails = []
        for k in (2, 5):
            fails.append({"rank": rk + k, "local_rank": k, "exitcode": 1, "pid": pids[n][k],
                          "error_file": f"/tmp/torchelastic_q3k1x0_m/4411873_9v1zj2ae/attempt_0/{k}/error.json",
                          "traceback": ["Traceback (most recent call last):",
                                        '  File "/opt/torchtitan/.venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
                                        "    return f(*args, **kwargs)",
                                        '  File "/opt/torchtitan/torchtitan/train.py", line 396, in forward_backward_step',
                                        "    loss.backward()",
                                        oom_msg(k, 7.83, 5.19 + 0.01 * k, 73.90 - 0.01 * k, 68.02, 4.19),
                                        ""]})
        first = {"rank": rk, "local_rank": 0, "exitcode": 1, "pid": pids[n][0],
                 "error_file": "/tmp/torchelastic_q3k1x0_m/4411873_9v1zj2ae/attempt_0/0/error.json",
                 "traceback": ["Traceback (most recent call last):",
                               '  File "/opt/torchtitan/torchtitan/train.py", line 396, in forward_backward_step',
                               "    loss.backward()",
                               oom_msg(0, 7.83, 5.21 + 0.02 * n, 73.88 - 0.02 * n, 68.02, 4.17), ""]}
        for x in torchrun_child_failed("train.py", "2026-02-03_11:01:24", h, fails, first):
            P(x.replace("/usr/local/lib/python3.10/dist-packages", "/opt/torchtitan/.venv/lib/python3.11/site-packages").replace("/usr/local/bin/torchrun", "/opt/torchtitan/.venv/bin/torchrun"))
        if n == 1:
            b.mark_find(f, "GPU 5 has a total capacity")
    # nvidia-smi -q memory section on one node, taken right after the failure: all GPUs idle again
    p = "probes/h100-r07-n04/nvidia-smi.txt"
    b.extend(p, ["", "==============NVSMI LOG==============", "", "Timestamp                                 : Tue Feb  3 11:03:10 2026",
                 "Driver Version                            : 550.90.07", "CUDA Version                              : 12.4", "",
                 "Attached GPUs                             : 8"])
    for g in range(8):
        b.extend(p, [f"GPU 00000000:{0x18 + 0x11 * g:02X}:00.0", "    Product Name                          : NVIDIA H100 80GB HBM3",
                     "    FB Memory Usage", "        Total                             : 81559 MiB", "        Reserved                          : 551 MiB",
                     "        Used                              : 0 MiB", "        Free                              : 81008 MiB",
                     "    ECC Errors", "        Volatile", "            SRAM Correctable              : 0", "            SRAM Uncorrectable Parity     : 0",
                     "            DRAM Correctable              : 0", "            DRAM Uncorrectable            : 0",
                     "    Temperature", f"        GPU Current Temp                  : {31 + g % 3} C"])
    job = {
        "job_id": "4411873", "name": "llama3-8b-cpt-codeweb", "framework": "torchtitan", "status": "failed",
        "started_at": iso(t0), "ended_at": "2026-02-03T11:01:31Z", "exit_code": 1, "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "scheduler": "slurm via torchx (dist.ddp -j 2x8)", "launcher": "torchx run -s slurm dist.ddp -j 2x8 --script torchtitan/train.py",
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(8 * n, 8 * n + 8))} for n, (h, ip) in enumerate(NODES)],
        "code": [{"commit": "5c0e8a1", "at": "2026-01-20T09:12:00Z", "message": "cpt: llama3 8b codeweb-v4 config"},
                 {"commit": "d27f9b4", "at": "2026-01-28T15:41:00Z", "message": "ckpt: async checkpointing every 500 steps"},
                 {"commit": "b41e0c7", "at": "2026-02-03T10:21:00Z", "message": "train: local_batch_size 8 -> 16 for better MFU"}],
        "checkpoints": [{"step": 11500, "at": "2026-02-02T19:02:11Z", "path": "/lustre/ckpt/llama3-8b-cpt/step-11500", "valid": True},
                        {"step": 12000, "at": "2026-02-02T20:31:48Z", "path": "/lustre/ckpt/llama3-8b-cpt/step-12000", "valid": True}],
        "spares": 2, "history": ["4409950"], "last_successful_run_ended_at": "2026-02-02T20:33:05Z",
    }
    truth = {
        "fault": "cuda_oom", "category": "user_code",
        "root_cause": "commit b41e0c7 doubled torchtitan's local_batch_size (8 -> 16, global batch 256 at 16 GPUs); at the first step after resuming, the backward pass ran out of GPU memory on every rank of both nodes (torch.OutOfMemoryError, 7.83 GiB requested with 5.2 GiB free)",
        "faulty_nodes": [], "stage": "training", "iteration": FAIL_IT,
        "actions": [{"kind": "rollback", "to_commit": "d27f9b4"}],
    }
    return b.write(yaml_job(job), truth)
