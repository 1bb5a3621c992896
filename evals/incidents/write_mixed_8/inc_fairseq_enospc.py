"""Fairseq (FSDP + --use-sharded-state, srun one task per GPU), the shared /checkpoint volume fills up while every
rank writes its shard of checkpoint_3_12000: each rank logs the failed torch.save, then dies with ENOSPC."""
import datetime as dt
from common import Bundle, yaml_job, iso

ID = "fairseq-fsdp-sharded-ckpt-enospc-4node"
NODES = [("fs-gpu-001", "10.40.1.1"), ("fs-gpu-002", "10.40.1.2"), ("fs-gpu-003", "10.40.1.3"), ("fs-gpu-004", "10.40.1.4")]
GPN = 4
SAVE_AT = 12000
CK = "/checkpoint/nllb-moe/run17"


def build(out):
    b = Bundle(out, seed=17)
    r = b.rng
    t0 = dt.datetime(2026, 4, 7, 19, 2, 5)
    files = {n: f"logs/{h}/fairseq-552019-{h}.out" for n, (h, _) in enumerate(NODES)}
    T = lambda s: (t0 + dt.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S")
    W = lambda n, x, mark=False: b.add(files[n], x, mark)
    for n, (h, ip) in enumerate(NODES):
        for k in range(GPN):
            W(n, f"{T(6)} | INFO | fairseq.distributed.utils | distributed init (rank {GPN * n + k}): tcp://fs-gpu-001:16613")
        for k in range(GPN):
            W(n, f"{T(8)} | INFO | fairseq.distributed.utils | initialized host {h} as rank {GPN * n + k}")
        W(n, f"{h}:{21830 + n}:{21830 + n} [0] NCCL INFO Bootstrap : Using ib0:{ip}<0>")
        W(n, f"{h}:{21830 + n}:{21830 + n} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:{ip}<0>")
    W(0, f"{T(9)} | INFO | fairseq_cli.train | {{'_name': None, 'common': {{'_name': None, 'no_progress_bar': True, 'log_interval': 100, 'log_format': 'simple', 'seed': 2, 'fp16': True, 'memory_efficient_fp16': True, 'fp16_init_scale': 4}}, 'distributed_training': {{'distributed_world_size': 16, 'ddp_backend': 'fully_sharded', 'use_sharded_state': True, 'cpu_offload': False}}, 'checkpoint': {{'save_dir': '{CK}', 'save_interval_updates': 2000, 'keep_interval_updates': 3, 'write_checkpoints_asynchronously': False}} ...}}")
    W(0, f"{T(12)} | INFO | fairseq.tasks.translation_multi_simple_epoch | loading data for train epoch=1/None")
    W(0, f"{T(20)} | INFO | fairseq_cli.train | TransformerModel(...)")
    W(0, f"{T(20)} | INFO | fairseq_cli.train | task: TranslationMultiSimpleEpochTask")
    W(0, f"{T(20)} | INFO | fairseq_cli.train | model: TransformerModel")
    W(0, f"{T(20)} | INFO | fairseq_cli.train | num. shared model params: 1,371,439,104 (num. trained: 1,371,439,104)")
    W(0, f"{T(21)} | INFO | fairseq.trainer | detected shared parameter: encoder.embed_tokens.weight <- decoder.embed_tokens.weight")
    W(0, f"{T(21)} | INFO | fairseq.utils | ***********************CUDA enviroments for all 16 workers***********************")
    for rk in range(16):
        W(0, f"{T(21)} | INFO | fairseq.utils | rank {rk:>3d}: capabilities =  8.0  ; total memory = 79.151 GB ; name = NVIDIA A100-SXM4-80GB           ")
    W(0, f"{T(21)} | INFO | fairseq.utils | ***********************CUDA enviroments for all 16 workers***********************")
    W(0, f"{T(21)} | INFO | fairseq_cli.train | training on 16 devices (GPUs/TPUs)")
    W(0, f"{T(21)} | INFO | fairseq_cli.train | max tokens per device = 8192 and max sentences per device = None")
    W(0, f"{T(22)} | INFO | fairseq.trainer | Preparing to load checkpoint {CK}/checkpoint_last-shard0.pt")
    W(0, f"{T(64)} | INFO | fairseq.trainer | Loaded checkpoint {CK}/checkpoint_last-shard0.pt (epoch 3 @ 10000 updates)")
    W(0, f"{T(65)} | INFO | fairseq.trainer | loading train data for epoch 3")
    for n in range(4):
        W(n, f"{T(66)} | WARNING | fairseq.data.data_utils | 1,204 samples have invalid sizes and will be skipped, max_positions=(512, 512), first few sample ids=[33412, 90231, 171554, 228109, 300877, 412960, 518233, 602117, 777341, 801995]")
    W(0, f"{T(68)} | INFO | fairseq.trainer | begin training epoch 3")
    W(0, f"{T(68)} | INFO | fairseq_cli.train | Start iterating over samples")
    sec = 70.0
    for upd in range(10100, SAVE_AT + 1, 100):
        sec += 66 + r.uniform(-2, 2)
        loss = 3.41 - (upd - 10000) * 0.00002 + r.uniform(-0.02, 0.02)
        W(0, f"{T(sec)} | INFO | train_inner | epoch 003:   {upd - 9422 + 1:>4d} / 4711 loss={loss:.3f}, nll_loss={loss * 0.5:.3f}, ppl={2 ** (loss * 0.5):.2f}, wps={210000 + r.randint(-4000, 4000)}, ups=1.51, wpb=139264, bsz={268 + r.randint(0, 9)}, num_updates={upd}, lr={0.000612 * (12000 / upd) ** 0.5:.6g}, gnorm={0.41 + r.uniform(-0.03, 0.05):.3f}, loss_scale=8, train_wall=66, gb_free=21.{r.randint(0, 9)}, wall={int(sec) + 31200}")
        if upd == 11100:
            W(0, f"{T(sec + 1)} | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 4.0")
    W(0, f"{T(sec + 2)} | INFO | fairseq_cli.train | begin validation on \"valid\" subset")
    W(0, f"{T(sec + 40)} | INFO | valid | epoch 003 | valid on 'valid' subset | loss 3.338 | nll_loss 1.674 | ppl 3.19 | wps 512433 | wpb 131072 | bsz 254.3 | num_updates {SAVE_AT} | best_loss 3.338")
    W(0, f"{T(sec + 40)} | INFO | fairseq.checkpoint_utils | Preparing to save checkpoint for epoch 3 @ {SAVE_AT} updates")
    W(0, f"{T(sec + 40)} | INFO | fairseq.trainer | Saving checkpoint to {CK}/checkpoint_3_{SAVE_AT}-shard0.pt")
    st = sec + 40
    for n in range(4):
        for k in range(GPN):
            rk = GPN * n + k
            te = st + 21 + 0.3 * rk
            blk = [f"{T(te)} | ERROR | fairseq.checkpoint_utils | Traceback (most recent call last):",
                   '  File "/opt/fairseq/fairseq/checkpoint_utils.py", line 659, in _torch_persistent_save',
                   "    return torch.save(obj, f)",
                   '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 849, in save',
                   "    _save(",
                   '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 1114, in _save',
                   "    zip_file.write_record(name, storage, num_bytes)",
                   f"RuntimeError: [enforce fail at inline_container.cc:783] . PytorchStreamWriter failed writing file data/{140 + 7 * rk}: file write failed",
                   ""]
            for j, x in enumerate(blk):
                W(n, x, mark=(rk in (0, 9) and j == 7))
            fin = ["Traceback (most recent call last):",
                   '  File "/opt/conda/bin/fairseq-train", line 8, in <module>',
                   "    sys.exit(cli_main())",
                   '  File "/opt/fairseq/fairseq_cli/train.py", line 574, in cli_main',
                   "    distributed_utils.call_main(cfg, main)",
                   '  File "/opt/fairseq/fairseq/distributed/utils.py", line 362, in call_main',
                   "    distributed_main(cfg.distributed_training.device_id, main, cfg, kwargs)",
                   '  File "/opt/fairseq/fairseq/distributed/utils.py", line 336, in distributed_main',
                   "    main(cfg, **kwargs)",
                   '  File "/opt/fairseq/fairseq_cli/train.py", line 205, in main',
                   "    valid_losses, should_stop = train(cfg, trainer, task, epoch_itr)",
                   '  File "/opt/fairseq/fairseq_cli/train.py", line 348, in train',
                   "    valid_losses, should_stop = validate_and_save(",
                   '  File "/opt/fairseq/fairseq_cli/train.py", line 444, in validate_and_save',
                   "    checkpoint_utils.save_checkpoint(",
                   '  File "/opt/fairseq/fairseq/checkpoint_utils.py", line 120, in save_checkpoint',
                   "    trainer.save_checkpoint(checkpoints[0], extra_state)",
                   '  File "/opt/fairseq/fairseq/trainer.py", line 438, in save_checkpoint',
                   "    checkpoint_utils.torch_persistent_save(",
                   '  File "/opt/fairseq/fairseq/checkpoint_utils.py", line 646, in torch_persistent_save',
                   "    with PathManager.open(filename, \"wb\") as f:",
                   "OSError: [Errno 28] No space left on device"]
            for j, x in enumerate(fin):
                W(n, x, mark=(rk == 0 and j == len(fin) - 1))
    W(0, f"srun: error: fs-gpu-002: tasks 4-7: Exited with exit code 1")
    W(0, f"srun: error: fs-gpu-004: tasks 12-15: Exited with exit code 1")
    W(0, f"srun: error: fs-gpu-001: tasks 0-3: Exited with exit code 1")
    W(0, f"srun: error: fs-gpu-003: tasks 8-11: Exited with exit code 1")
    for n, (h, ip) in enumerate(NODES):
        p = f"probes/{h}/df.txt"
        b.add(p, "Filesystem                         Size  Used Avail Use% Mounted on")
        b.add(p, f"/dev/nvme0n1p2                     1.8T  {300 + 7 * n}G  1.4T  18% /")
        b.add(p, "tmpfs                              504G   64M  504G   1% /dev/shm")
        b.add(p, "10.40.0.20@o2ib:10.40.0.21@o2ib:/data   3.5P  2.9P  604T  83% /data")
        b.add(p, "10.40.0.30@o2ib:10.40.0.31@o2ib:/ckpt   200T  200T     0 100% /checkpoint", mark=(n == 0))
    t_end = t0 + dt.timedelta(seconds=st + 30)
    job = {
        "job_id": "552019", "name": "nllb-moe-1.3b-fsdp", "framework": "other", "status": "failed",
        "started_at": iso(t0), "ended_at": iso(t_end), "exit_code": 1, "gpus_per_node": GPN,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "scheduler": "slurm (srun --ntasks-per-node=4, fairseq-train)", "trainer": "fairseq 0.12.3, --ddp-backend fully_sharded --use-sharded-state",
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(GPN * n, GPN * n + GPN))} for n, (h, ip) in enumerate(NODES)],
        "code": [{"commit": "4b1dd0e", "at": "2026-03-30T10:00:00Z", "message": "nllb 1.3b dense baseline, fsdp"}],
        "checkpoints": [{"step": 8000, "at": "2026-04-07T09:50:00Z", "path": f"{CK}/checkpoint_2_8000-shard*.pt", "valid": True},
                        {"step": 9422, "at": "2026-04-07T11:22:00Z", "path": f"{CK}/checkpoint2-shard*.pt", "valid": True},
                        {"step": 10000, "at": "2026-04-07T12:03:00Z", "path": f"{CK}/checkpoint_3_10000-shard*.pt", "valid": True},
                        {"step": SAVE_AT, "at": iso(t0 + dt.timedelta(seconds=st)), "path": f"{CK}/checkpoint_3_{SAVE_AT}-shard*.pt", "valid": False}],
        "spares": 1,
    }
    truth = {
        "fault": "storage_checkpoint_write_failure", "category": "infrastructure",
        "root_cause": f"the shared Lustre checkpoint volume /checkpoint was 100% full: while all 16 ranks wrote their FSDP shards of checkpoint_3_{SAVE_AT}, torch.save failed (PytorchStreamWriter ... file write failed) and every rank died with OSError: [Errno 28] No space left on device; the {SAVE_AT} checkpoint is partial",
        "faulty_nodes": [], "stage": "checkpoint", "iteration": SAVE_AT,
        "actions": [{"kind": "restart", "from_step": 10000}],
    }
    return b.write(yaml_job(job), truth)
