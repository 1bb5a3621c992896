"""loss_scale_collapse: Megatron-LM GPT (fp16, dynamic loss scale, min 1.0, hysteresis 2) on 8 nodes,
run with --log-timers-to-tensorboard --timing-log-level 0 --log-interval 20.  From iteration 40731 every step
overflows: the scale halves down to 1.0 by 40747 and every iteration since is skipped (the iteration line
loses its `lm loss` and `grad norm` fields).  Nobody noticed for ~1.2 h; the operator cancelled the job,
cutting the 41500 save short.  The newest valid checkpoint before the overflows is 40500."""
import random
from datetime import timedelta

from common import Bundle, T

ID = "megatron-timers-fp16-loss-scale-floor-8node"
HOSTS = ["dgx-h%03d" % i for i in range(41, 49)]
IPS = ["10.70.8.%d" % i for i in range(41, 49)]
PY = "/usr/local/lib/python3.10/dist-packages"


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(5)
    start = T("2026-11-28T06:11:37")
    resume = 40000
    first_bad = 40731
    stop_at = 41503
    step_ms = 5821.0
    t0 = start + timedelta(seconds=188)

    def tstep(i):
        return t0 + timedelta(milliseconds=(i - resume) * step_ms)

    t_stop = tstep(stop_at) + timedelta(seconds=40)
    marks = []
    for n, host in enumerate(HOSTS):
        lg = b.log("logs/%s/stdout.log" % host)
        agent = 22001 + n
        lg.add("W%s %d torch/distributed/run.py:793] *****************************************" % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] *****************************************" % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        if n == 0:
            lg.add("using world size: 64, data-parallel size: 4, context-parallel size: 1, hierarchical context-parallel sizes: None, tensor-model-parallel size: 8, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 2, encoder-pipeline-model-parallel size: 0")
            lg.add("WARNING: Setting args.overlap_p2p_comm and args.align_param_gather to False since non-interleaved schedule does not support overlapping p2p communication and aligned param AG")
            lg.add("using torch.float16 for parameters ...")
            lg.add("------------------------ arguments ------------------------")
            for k, v in [("fp16", "True"), ("bf16", "False"), ("initial_loss_scale", "4294967296"), ("min_loss_scale", "1.0"),
                         ("loss_scale", "None"), ("loss_scale_window", "1000"), ("hysteresis", "2"), ("lr", "0.0002"),
                         ("min_lr", "2e-05"), ("clip_grad", "1.0"), ("micro_batch_size", "1"), ("global_batch_size", "1024"),
                         ("seq_length", "4096"), ("log_interval", "20"), ("log_timers_to_tensorboard", "True"),
                         ("timing_log_level", "0"), ("save_interval", "500"), ("tensorboard_dir", "/lustre/tb/gpt-45b"),
                         ("save", "/lustre/ckpt/gpt-45b"), ("load", "/lustre/ckpt/gpt-45b")]:
                lg.add("  %s %s %s" % (k, "." * (48 - len(k)), v))
            lg.add("-------------------- end of arguments ---------------------")
            lg.add("setting number of micro-batches to constant 256")
            lg.add("> building GPT2BPETokenizer tokenizer ...")
            lg.add(" > padded vocab (size: 50257) with 943 dummy tokens (new size: 51200)")
            lg.add("> initializing torch distributed ...")
            lg.add("> initialized tensor model parallel with size 8")
            lg.add("> initialized pipeline model parallel with size 2")
            lg.add("> setting random seeds to 1234 ...")
            lg.add("> compiling dataset index builder ...")
            lg.add("make: Entering directory '/workspace/megatron-lm/megatron/core/datasets'")
            lg.add("make: Nothing to be done for 'default'.")
            lg.add("make: Leaving directory '/workspace/megatron-lm/megatron/core/datasets'")
            lg.add(">>> done with dataset index builder. Compilation time: 0.061 seconds")
            lg.add("> compiling and loading fused kernels ...")
            lg.add(">>> done with compiling and loading fused kernels. Compilation time: 2.214 seconds")
            lg.add("time to initialize megatron (seconds): 31.842")
            lg.add("[after megatron is initialized] datetime: %s " % (start + timedelta(seconds=34)).strftime("%Y-%m-%d %H:%M:%S"))
            lg.add("building GPT model ...")
        for lr in range(0, 8, 4):
            lg.add("%s/transformer_engine/pytorch/cpu_offload.py:595: DeprecationWarning: Offloading weights is deprecated. Using offload_weights=True does not have any effect." % PY)
            lg.add("  warnings.warn(")
        pp = 0 if n < 4 else 1
        for tp in (0, 4):
            lg.add(" > number of parameters on (tensor, pipeline) model parallel rank (%d, %d): %d" % (tp, pp, 2830166016 if pp == 0 else 2861523968))
        if n == 0:
            lg.add("INFO:megatron.core.distributed.distributed_data_parallel:Setting up DistributedDataParallel with config DistributedDataParallelConfig(grad_reduce_in_fp32=False, overlap_grad_reduce=True, overlap_param_gather=False, align_param_gather=False, use_distributed_optimizer=True, num_distributed_optimizer_instances=1, check_for_nan_in_grad=False, bucket_size=40000000, average_in_collective=False, fp8_param_gather=False)")
            lg.add("INFO:megatron.core.optimizer:Setting up optimizer with config OptimizerConfig(optimizer='adam', lr=0.0002, min_lr=2e-05, decoupled_lr=None, decoupled_min_lr=None, weight_decay=0.1, fp16=True, bf16=False, params_dtype=torch.float16, loss_scale=None, initial_loss_scale=4294967296, min_loss_scale=1.0, loss_scale_window=1000, hysteresis=2, adam_beta1=0.9, adam_beta2=0.95, adam_eps=1e-08, sgd_momentum=0.9, use_distributed_optimizer=True, overlap_param_gather_with_optimizer_step=False, clip_grad=1.0, log_num_zeros_in_grad=False, barrier_with_L1_time=True, timers=<megatron.core.timers.Timers object at 0x7f1c2e0b3f10>, config_logger_dir='')")
            lg.add("> learning rate decay style: cosine")
            lg.add(" loading checkpoint from /lustre/ckpt/gpt-45b at iteration %d" % resume)
        lg.add("  successfully loaded checkpoint from /lustre/ckpt/gpt-45b [ t 0/8, p %d/2 ] at iteration %d" % (pp, resume))
        if n == 0:
            lg.add("(min, max) time across ranks (ms):")
            lg.add("    load-checkpoint ................................: (61280.44, 61311.90)")
            lg.add("[after model, optimizer, and learning rate scheduler are built] datetime: %s " % (start + timedelta(seconds=112)).strftime("%Y-%m-%d %H:%M:%S"))
            lg.add("> building train, validation, and test datasets ...")
            lg.add(" > datasets target sizes (minimum size):")
            lg.add("    train:      256000000")
            lg.add("    validation: 2560000")
            lg.add("    test:       10240")
            lg.add("INFO:megatron.core.datasets.blended_megatron_dataset_config:mock = False")
            lg.add("INFO:megatron.core.datasets.blended_megatron_dataset_builder:Building dataset splits with cls=GPTDataset, sizes=(256000000, 2560000, 10240), and config=GPTDatasetConfig(random_seed=1234, sequence_length=4096, blend=None, blend_per_split=None, split='969,30,1', split_matrix=[(0, 0.969), (0.969, 0.999), (0.999, 1.0)], num_dataset_builder_threads=1, path_to_cache='/lustre/cache/gpt-45b', mmap_bin_files=True, mock=False, tokenizer=<megatron.training.tokenizer.tokenizer._GPT2BPETokenizer object at 0x7f1b8c0d6a10>, reset_position_ids=False, reset_attention_mask=False, eod_mask_loss=False, create_attention_mask=True, drop_last_partial_validation_sequence=True, add_extra_token_to_sequence=True, s3_cache_path=None)")
            lg.add("INFO:megatron.core.datasets.indexed_dataset:Load the _IndexReader from /lustre/data/pile_dedup/pile_text_document.idx")
            lg.add("> finished creating GPT datasets ...")
            lg.add("[after dataloaders are built] datetime: %s " % (start + timedelta(seconds=180)).strftime("%Y-%m-%d %H:%M:%S"))
            lg.add("done with setup ...")
            lg.add("(min, max) time across ranks (ms):")
            lg.add("    model-and-optimizer-setup ......................: (77908.21, 78012.66)")
            lg.add("    train/valid/test-data-iterators-setup ..........: (66024.10, 66213.87)")
            lg.add("training ...")
            lg.add("[before the start of training step] datetime: %s " % (start + timedelta(seconds=187)).strftime("%Y-%m-%d %H:%M:%S"))
        if n == len(HOSTS) - 1:
            scale = 65536.0
            hyst = 2
            ovf = 0
            loss = 1.9842
            for end in range(resume + 20, stop_at + 1, 20):
                skipped = 0
                for i in range(end - 19, end + 1):
                    if i >= first_bad:
                        skipped += 1
                        hyst -= 1
                        if hyst <= 0:
                            scale = max(scale / 2, 1.0)
                ds = tstep(end)
                lossv = loss + rnd.uniform(-0.012, 0.012)
                fields = [
                    " [%s] iteration %8d/  250000" % (ds.strftime("%Y-%m-%d %H:%M:%S"), end),
                    " consumed samples: %12d" % (end * 1024),
                    " elapsed time per iteration (ms): %.1f" % (step_ms + rnd.uniform(-25, 25) - (40 if skipped == 20 else 0)),
                    " throughput per GPU (TFLOP/s/GPU): %.1f" % (171.4 + rnd.uniform(-1.2, 1.2)),
                    " learning rate: %.6E" % (1.684e-4 - (min(end, first_bad - 1) - 40000) * 2e-9),
                    " global batch size:  1024",
                ]
                if skipped < 20:
                    fields.append(" lm loss: %.6E" % lossv)
                fields.append(" loss scale: %.1f" % scale)
                if skipped == 0:
                    fields.append(" grad norm: %.3f" % rnd.uniform(0.82, 1.05))
                fields.append(" number of skipped iterations: %3d" % skipped)
                fields.append(" number of nan iterations:   0")
                k = lg.add("".join(f + " |" for f in fields))
                if end == 40740:
                    lg.marks["first"] = k
                if end == 40760:
                    lg.marks["floor"] = k
                if end == 41500:
                    lg.marks["late"] = k
                lg.add("(min, max) time across ranks (ms):")
                lg.add("    forward-backward ...............................: (%.2f, %.2f)" % (5581.0 + rnd.uniform(-20, 20), 5590.0 + rnd.uniform(-20, 20)))
                lg.add("    batch-generator ................................: (%.2f, %.2f)" % (rnd.uniform(2.5, 3.5), rnd.uniform(8, 14)))
                lg.add("    optimizer-unscale-and-check-inf ................: (%.2f, %.2f)" % (rnd.uniform(30, 33), rnd.uniform(80, 90)))
                lg.add("    optimizer ......................................: (%.2f, %.2f)" % ((74.1, 75.0) if skipped == 0 else (33.8, 34.6)))
                if end % 500 == 0:
                    lg.add("saving checkpoint at iteration %7d to /lustre/ckpt/gpt-45b in torch_dist format" % end)
                    if end != 41500:
                        lg.add("  successfully saved checkpoint from iteration %7d to /lustre/ckpt/gpt-45b [ t 7/8, p 1/2 ]" % end)
                        lg.add("(min, max) time across ranks (ms):")
                        lg.add("    save-checkpoint ................................: (38011.20, 38044.91)")
        # the operator cancels the job (41500 save still in flight)
        tc = t_stop
        lg.add("W%s %d torch/distributed/elastic/agent/server/api.py:704] Received 15 death signal, shutting down workers" % (tc.strftime("%m%d %H:%M:%S.%f"), agent))
        for lr in range(8):
            lg.add("W%s %d torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (
                (tc + timedelta(milliseconds=2 * lr)).strftime("%m%d %H:%M:%S.%f"), agent, 22100 + 10 * n + lr))
        lg.extend([
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            '  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper' % PY,
            "    return f(*args, **kwargs)",
            '  File "%s/torch/distributed/run.py", line 919, in main' % PY,
            "    run(args)",
            '  File "%s/torch/distributed/elastic/agent/server/api.py", line 864, in _invoke_run' % PY,
            "    time.sleep(monitor_interval)",
            '  File "%s/torch/distributed/elastic/multiprocessing/api.py", line 84, in _terminate_process_handler' % PY,
            "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)",
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process %d got signal: 15" % agent,
        ])
    rel = "logs/%s/stdout.log" % HOSTS[-1]
    marks = [(rel, "first"), (rel, "floor"), (rel, "late")]
    b.job({
        "job_id": "gpt45b-pile-ft16-118",
        "name": "gpt-45b-pretrain-fp16",
        "framework": "megatron",
        "status": "failed",
        "note": "cancelled by the operator (scancel) after loss stopped being reported",
        "started_at": start,
        "ended_at": t_stop + timedelta(seconds=3),
        "exit_code": 143,
        "gpus_per_node": 8,
        "parallelism": {"tp": 8, "pp": 2, "dp": 4, "cp": 1, "ep": 1},
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(i * 8, i * 8 + 8))} for i, (h, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "1d7f3b0", "at": T("2026-11-02T10:00:00"), "message": "gpt-45b: fp16 recipe (V100-era loss-scale settings)"},
            {"commit": "6e2a91c", "at": T("2026-11-18T13:25:00"), "message": "data: pile_dedup v2 index"},
        ],
        "checkpoints": [
            {"step": 39500, "at": T("2026-11-28T02:29:10"), "path": "/lustre/ckpt/gpt-45b/iter_0039500", "valid": True},
            {"step": 40000, "at": T("2026-11-28T05:17:02"), "path": "/lustre/ckpt/gpt-45b/iter_0040000", "valid": True},
            {"step": 40500, "at": tstep(40500).replace(microsecond=0) + timedelta(seconds=38), "path": "/lustre/ckpt/gpt-45b/iter_0040500", "valid": True},
            {"step": 41000, "at": tstep(41000).replace(microsecond=0) + timedelta(seconds=38), "path": "/lustre/ckpt/gpt-45b/iter_0041000", "valid": True},
            {"step": 41500, "at": tstep(41500).replace(microsecond=0), "path": "/lustre/ckpt/gpt-45b/iter_0041500", "valid": False, "note": "save interrupted by the cancel; no latest_checkpointed_iteration.txt update"},
        ],
        "spares": 2,
    })
    return b.truth(
        "loss_scale_collapse", "data",
        "fp16 dynamic loss scaling collapsed: from iteration 40731 every step overflowed, the scale halved from "
        "65536 to its minimum 1.0 by 40747, and every iteration after that was skipped (no lm loss, grad norm "
        "or parameter update) until the job was cancelled at ~41503.  Restart from iteration 40500, the newest "
        "valid checkpoint before the overflows (41000 was saved while stuck; 41500 is incomplete).",
        [], "training", first_bad, marks, [{"kind": "restart", "from_step": 40500}])
