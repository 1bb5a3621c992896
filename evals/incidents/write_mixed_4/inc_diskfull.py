"""Local NVMe scratch full on one node while writing a dist-checkpoint shard; NeMo 2 / Lightning rank prefixes."""
import random
from common import Bundle, Ind, hhmmss

IID = "nemo2-lightning-nvme-scratch-full-ckpt"
HOSTS = ["dgx-r07-01", "dgx-r07-02", "dgx-r07-03", "dgx-r07-04"]
IPS = ["10.88.7.1", "10.88.7.2", "10.88.7.3", "10.88.7.4"]
BAD = "dgx-r07-03"
T0 = 1 * 3600 + 17 * 60 + 5
FIRST, SAVE = 4501, 5000
STEP_S = 5.62
CK = "/scratch/local/nemo_runs/llama3_70b/checkpoints/llama3_70b--reduced_train_loss=1.96-epoch=0-consumed_samples=2560000.0"

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(28)
    t_save = T0 + 160 + (SAVE - FIRST + 1) * STEP_S
    for n, h in enumerate(HOSTS):
        ranks = list(range(8 * n, 8 * n + 8))
        L = []
        if n == 0:
            L += ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores", "HPU available: False, using: 0 HPUs",
                  f"[NeMo I 2026-11-21 {hhmmss(T0+4)} nemo_logging:393] Experiments will be logged at /scratch/local/nemo_runs/llama3_70b",
                  f"[NeMo W 2026-11-21 {hhmmss(T0+4)} nemo_logging:405] \"update_logger_directory\" is True. Overwriting tensorboard logger \"save_dir\" to /scratch/local/nemo_runs/llama3_70b/tb_logs"]
        for r in ranks:
            L.append(f"[rank: {r}] Seed set to 1234")
        for r in ranks:
            L.append(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r+1}/32")
        if n == 0:
            L += ["----------------------------------------------------------------------------------------------------",
                  "distributed_backend=nccl", "All distributed processes registered. Starting with 32 processes",
                  "----------------------------------------------------------------------------------------------------", ""]
        for r in ranks:
            L.append(f"LOCAL_RANK: {r%8} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        L.append(f"[NeMo W 2026-11-21 {hhmmss(T0+31)} nemo_logging:405] /usr/local/lib/python3.10/dist-packages/megatron/core/tensor_parallel/layers.py:1080: DeprecationWarning: `async_grad_allreduce` is deprecated and will be removed in a future release. Please use `gradient_accumulation_fusion` instead.")
        if n == 0:
            L += [f"[NeMo I 2026-11-21 {hhmmss(T0+58)} nemo_logging:393] Restoring model weights from RestoreConfig(path='/lustre/ckpt/llama3_70b/step=4500', adapter_path=None, load_model_state=True, load_optim_state=True, load_artifacts=True)",
                  "",
                  "  | Name   | Type     | Params | Mode ",
                  "--------------------------------------------",
                  "0 | module | DDP      | 4.4 B  | train",
                  "--------------------------------------------",
                  "4.4 B     Trainable params", "0         Non-trainable params", "4.4 B     Total params", "17,637.048Total estimated model params size (MB)", ""]
        if n == 0:
            t = T0 + 160
            for it in range(FIRST, SAVE + 1):
                t += STEP_S + rnd.uniform(-0.04, 0.04)
                if it % 10 and it != SAVE:
                    continue
                L.append(f"Training epoch 0, iteration {it-1}/99999 | lr: 1.482e-04 | global_batch_size: 512 | global_step: {it-1} | reduced_train_loss: {2.05-0.00018*(it-4500)+rnd.uniform(-0.02,0.02):.4f} | train_step_timing in s: {STEP_S+rnd.uniform(-0.04,0.04):.3f} | consumed_samples: {it*512}")
        ts = hhmmss(t_save + 1)
        if n == 0:
            L.append(f"[NeMo I 2026-11-21 {ts} nemo_logging:393] Using FullyParallelSaveStrategyWrapper(torch_dist, 1, 1) dist-ckpt save strategy.")
        # every rank raises the gathered CheckpointException
        for r in ranks:
            if h == BAD and r == 20:
                L += [f"[rank{r}]: Traceback (most recent call last):",
                      f"[rank{r}]:   File \"/opt/NeMo/nemo/collections/llm/api.py\", line 106, in train",
                      f"[rank{r}]:     trainer.fit(model, data)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/lightning/pytorch/callbacks/model_checkpoint.py\", line 391, in _save_checkpoint",
                      f"[rank{r}]:     trainer.save_checkpoint(filepath, self.save_weights_only)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/megatron/core/dist_checkpointing/strategies/torch.py\", line 642, in save",
                      f"[rank{r}]:     save_state_dict_async_finalize(*save_state_dict_ret)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/megatron/core/dist_checkpointing/strategies/state_dict_saver.py\", line 141, in save_state_dict_async_finalize",
                      f"[rank{r}]:     raise CheckpointException(\"write\", node_failures)",
                      f"[rank{r}]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([20, 21])",
                      f"[rank{r}]: Traceback (most recent call last): (RANK 20)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/megatron/core/dist_checkpointing/strategies/filesystem_async.py\", line 293, in write_preloaded_data",
                      f"[rank{r}]:     _write_item(stream, data, write_item, storage_key)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/checkpoint/filesystem.py\", line 273, in _write_item",
                      f"[rank{r}]:     torch.save(data, stream)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/torch/serialization.py\", line 652, in save",
                      f"[rank{r}]:     _legacy_save(obj, opened_file, pickle_module, pickle_protocol)",
                      Ind(f"[rank{r}]: OSError: [Errno 28] No space left on device"),
                      f"[rank{r}]: Traceback (most recent call last): (RANK 21)",
                      f"[rank{r}]:   File \"/usr/local/lib/python3.10/dist-packages/megatron/core/dist_checkpointing/strategies/filesystem_async.py\", line 286, in write_preloaded_data",
                      f"[rank{r}]:     file_name, storage_key, (bytes_data, tensor_data) = obj_queue.get_nowait()",
                      f"[rank{r}]: OSError: [Errno 28] No space left on device"]
            else:
                L.append(f"[rank{r}]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([20, 21])")
        te = t_save + 52
        L.append(f"srun: error: {h}: tasks {8*n}-{8*n+7}: Exited with exit code 1")
        b.write(f"logs/{h}/stdout.log", L)
    for n, h in enumerate(HOSTS):
        used = {0: "2.2T", 1: "2.3T", 2: "3.5T", 3: "2.2T"}[n]
        avail = {0: "1.3T", 1: "1.2T", 2: "0", 3: "1.3T"}[n]
        pct = {0: "63%", 1: "66%", 2: "100%", 3: "63%"}[n]
        line = f"/dev/md0        3.5T  {used}  {avail:>4} {pct:>4} /scratch/local"
        D = ["Filesystem      Size  Used Avail Use% Mounted on",
             "/dev/nvme0n1p2  1.8T  212G  1.5T  13% /",
             "tmpfs           1.0T   24K  1.0T   1% /dev/shm",
             "/dev/nvme0n1p1  511M  6.1M  505M   2% /boot/efi",
             Ind(line) if h == BAD else line,
             "10.88.0.40@o2ib:/lus01  2.1P  1.4P  714T  67% /lustre"]
        b.write(f"probes/{h}/df.txt", D)
        J = ('{"probe": "scratch-usage", "status": "%s", "detail": "%s", "metrics": {"scratch_used_pct": %s, "stale_run_dirs": %d}}'
             % ("fail" if h == BAD else "ok", "/scratch/local holds 1.3T of an earlier job's unpurged checkpoints (/scratch/local/nemo_runs/mixtral_ft)" if h == BAD else "scratch purged by epilog", pct[:-1], 1 if h == BAD else 0))
        b.write(f"probes/{h}/scratch.json", [J])
    nodes = "\n".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(r) for r in range(8*i, 8*i+8))}]}}" for i, h in enumerate(HOSTS))
    b.job(f"""
job_id: "2231988"
name: llama3-70b-cpt-nemo2
framework: nemo
status: failed
scheduler: slurm
started_at: 2026-11-21T{hhmmss(T0)}Z
ended_at: 2026-11-21T{hhmmss(t_save+53)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}}
nodes:
{nodes}
code:
  - {{commit: 0d4be71, at: 2026-11-10T13:20:00Z, message: "recipe: llama3_70b cpt, seq 8192"}}
  - {{commit: 8a3c5f0, at: 2026-11-16T08:45:00Z, message: "save checkpoints to local scratch, async upload"}}
checkpoints:
  - {{step: 4000, at: 2026-11-20T16:02:00Z, path: /lustre/ckpt/llama3_70b/step=4000, valid: true}}
  - {{step: 4500, at: 2026-11-21T00:51:00Z, path: /lustre/ckpt/llama3_70b/step=4500, valid: true}}
  - {{step: 5000, at: 2026-11-21T{hhmmss(t_save)}Z, path: "{CK}", valid: false}}
spares: 1
""")
    b.truth(fault="disk_full", category="infrastructure",
            root_cause=f"the local NVMe scratch /scratch/local of {BAD} was 100% full (an earlier job's checkpoints were never purged), so ranks 20 and 21 failed writing their step-5000 dist-checkpoint shards with ENOSPC and the save aborted on every rank",
            faulty_nodes=[BAD], stage="checkpoint", iteration=SAVE + 1,
            actions=[{"kind": "restart", "from_step": 4500}])
    return b
