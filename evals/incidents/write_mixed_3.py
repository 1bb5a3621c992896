#!/usr/bin/env python3
"""Builds the IH incident bundles (stdlib only). Truth line numbers are computed from the written text."""
import json, os, random, shutil
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc


class Bundle:
    def __init__(self, iid):
        self.iid = iid
        self.dir = os.path.join(ROOT, iid)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.files = {}
        self.marks = []

    def f(self, rel):
        return self.files.setdefault(rel, [])

    def mark(self, rel, sub, nth=1):
        self.marks.append((rel, sub, nth))

    def line_of(self, rel, sub, nth):
        # physical lines split on \n (a tqdm \r redraw stays inside its line)
        text = "\n".join(self.files[rel])
        n = 0
        for i, l in enumerate(text.split("\n")):
            if sub in l:
                n += 1
                if n == nth:
                    return i + 1
        raise SystemExit(f"{self.iid}: marker not found: {rel}: {sub!r} #{nth}")

    def write(self, job_yaml, truth):
        with open(os.path.join(self.dir, "job.yaml"), "w") as fh:
            fh.write(job_yaml.lstrip("\n"))
        for rel, lines in self.files.items():
            p = os.path.join(self.dir, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as fh:
                fh.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
        truth["indicating_lines"] = [{"file": r, "line": self.line_of(r, s, n)} for r, s, n in self.marks]
        with open(os.path.join(self.dir, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=2)
            fh.write("\n")
        self.check(truth)

    def check(self, truth):
        total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(self.dir) for fn in fns)
        assert total < 150_000, (self.iid, total)
        assert 1 <= len(truth["indicating_lines"]) <= 6, self.iid
        print(f"== {self.iid}  ({total} bytes)  fault={truth['fault']} nodes={truth['faulty_nodes']} "
              f"stage={truth['stage']} it={truth['iteration']}")
        for ent in truth["indicating_lines"]:
            raw = open(os.path.join(self.dir, ent["file"]), "rb").read().split(b"\n")
            txt = raw[ent["line"] - 1].decode("utf-8", "replace")
            assert txt.strip(), ent
            assert "\r" not in txt, ent
            print(f"   {ent['file']}:{ent['line']}: {txt[:220]}")


def T(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def absl(t, lvl, tid, src, msg):
    # absl python logging prefix: I1127 12:00:00.123456 140 file.py:42] msg
    return f"{lvl}{t.strftime('%m%d %H:%M:%S.%f')} {tid} {src}] {msg}"


def nccl(host, pid, tid, dev, msg):
    return f"{host}:{pid}:{tid} [{dev}] NCCL {msg}"


INCIDENTS = []


def incident(fn):
    INCIDENTS.append(fn)
    return fn


# ---------------------------------------------------------------------------------------------
# 1. JAX on GPU pods, absl prefix; boto3 GetObject SlowDown on every host
@incident
def inc_jax_s3():
    B = Bundle("jax-absl-s3-slowdown-4node")
    rnd = random.Random(11)
    hosts = ["jaxgpu-w0", "jaxgpu-w1", "jaxgpu-w2", "jaxgpu-w3"]
    ips = ["10.64.7.21", "10.64.7.22", "10.64.7.23", "10.64.7.24"]
    t0 = T("2026-11-26T14:02:10")
    fail_step = 41237
    for i, h in enumerate(hosts):
        L = B.f(f"logs/{h}/worker.log")
        tid = 139872104 + i * 17
        dtid = tid + 5521
        t = t0 + timedelta(seconds=i * 0.4)
        L.append(absl(t, "I", tid, "launch.py:58", f"process_id={i} num_processes=4 coordinator=10.64.7.21:8476 local_device_ids=[0,1,2,3,4,5,6,7]"))
        if i == 0:
            L.append(absl(t + timedelta(seconds=1), "I", tid, "distributed.py:89", "Starting JAX distributed service on [::]:8476"))
        L.append(absl(t + timedelta(seconds=1.2), "I", tid, "distributed.py:101", "Connecting to JAX distributed service on 10.64.7.21:8476"))
        L.append((t + timedelta(seconds=9)).strftime("%Y-%m-%d %H:%M:%S.%f") + ": W external/xla/xla/service/gpu/nvptx_compiler.cc:893] The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version 12.6.77. Because the driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.")
        L.append(absl(t + timedelta(seconds=11), "I", tid, "xla_bridge.py:884", "Unable to initialize backend 'rocm': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'"))
        L.append(absl(t + timedelta(seconds=11), "I", tid, "xla_bridge.py:884", "Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory"))
        L.append(absl(t + timedelta(seconds=12), "I", tid, "train.py:118", "Devices: 32 global, 8 local (cuda); mesh shape {'data': 4, 'fsdp': 8}"))
        L.append(absl(t + timedelta(seconds=13), "I", dtid, "credentials.py:1278", "Found credentials in environment variables."))
        L.append(absl(t + timedelta(seconds=13), "I", tid, "input_pipeline.py:77", f"Reading 2048 shards from s3://fm-pretrain-eu/mix-v7/train/ (host {i} of 4: 512 shards, 48 reader threads, prefetch 8)"))
        L.append(absl(t + timedelta(seconds=14), "I", tid, "checkpoint_manager.py:1241", "Restoring checkpoint from /mnt/fsx/ckpt/fm-7b-v7/41000."))
        L.append(absl(t + timedelta(seconds=58), "I", tid, "checkpoint_manager.py:1262", "Finished restoring checkpoint from /mnt/fsx/ckpt/fm-7b-v7/41000."))
        L.append(absl(t + timedelta(seconds=60), "W", tid, "deprecations.py:46", "jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer) or jax.tree_util.tree_map (any JAX version)."))
        ts = t + timedelta(seconds=95)
        retry_at = 41130 + i * 7
        for s in range(41001, fail_step):
            ts += timedelta(seconds=1.84 + rnd.uniform(-0.03, 0.05))
            if s == retry_at:
                L.append(absl(ts, "W", dtid + 3, "shard_reader.py:88", f"GetObject s3://fm-pretrain-eu/mix-v7/train/shard-{rnd.randint(0, 2047):05d}.arrayrecord failed (SlowDown), retrying in 2.0s (attempt 1/3)"))
                L.append(absl(ts + timedelta(seconds=2.1), "I", dtid + 3, "shard_reader.py:95", "GetObject succeeded after 1 retry"))
            if s % 10 == 0 or s == fail_step - 1:
                loss = 2.214 - (s - 41000) * 0.00011 + rnd.uniform(-0.012, 0.012)
                L.append(absl(ts, "I", tid, "train.py:412", f"step={s} loss={loss:.4f} grad_norm={rnd.uniform(0.38, 0.45):.3f} lr=2.40e-04 tokens/s={rnd.uniform(1.89, 1.95):.2f}M step_time={rnd.uniform(1.81, 1.88):.2f}s data_wait=0.01s"))
        te = ts + timedelta(seconds=rnd.uniform(30, 44))
        L.append(absl(te - timedelta(seconds=20), "W", tid, "input_pipeline.py:141", "prefetch queue empty for 20s (0/8 batches ready)"))
        L.append(absl(te, "E", dtid + 9, "shard_reader.py:102", "Reader thread 9 failed:"))
        L += ["Traceback (most recent call last):",
              '  File "/opt/app/fm/data/shard_reader.py", line 84, in _fetch',
              "    resp = self._s3.get_object(Bucket=bucket, Key=key, Range=rng)",
              '  File "/usr/local/lib/python3.11/site-packages/botocore/client.py", line 569, in _api_call',
              "    return self._make_api_call(operation_name, kwargs)",
              '  File "/usr/local/lib/python3.11/site-packages/botocore/client.py", line 1023, in _make_api_call',
              "    raise error_class(parsed_response, operation_name)",
              "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the GetObject operation (reached max retries: 4): Please reduce your request rate."]
        L.append(absl(te + timedelta(seconds=0.2), "E", tid, "train.py:466", f"Input pipeline raised an exception while prefetching the batch for step {fail_step}; aborting."))
        L += ["Traceback (most recent call last):",
              '  File "/opt/app/fm/train.py", line 520, in <module>',
              "    app.run(main)",
              '  File "/usr/local/lib/python3.11/site-packages/absl/app.py", line 308, in run',
              "    _run_main(main, args)",
              '  File "/usr/local/lib/python3.11/site-packages/absl/app.py", line 254, in _run_main',
              "    sys.exit(main(argv))",
              '  File "/opt/app/fm/train.py", line 461, in main',
              "    batch = next(train_iter)",
              '  File "/opt/app/fm/data/input_pipeline.py", line 172, in __next__',
              "    raise self._error",
              '  File "/opt/app/fm/data/shard_reader.py", line 84, in _fetch',
              "    resp = self._s3.get_object(Bucket=bucket, Key=key, Range=rng)",
              '  File "/usr/local/lib/python3.11/site-packages/botocore/client.py", line 1023, in _make_api_call',
              "    raise error_class(parsed_response, operation_name)",
              "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the GetObject operation (reached max retries: 4): Please reduce your request rate."]
        B.mark(f"logs/{h}/worker.log", "botocore.exceptions.ClientError: An error occurred (SlowDown)", 1)
        if i == 2:
            L.append((te + timedelta(seconds=1)).strftime("%Y-%m-%d %H:%M:%S.%f") + ": E external/xla/xla/pjrt/distributed/client.cc:158] Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. Disable Python error checking via jax.config.update(\"jax_distributed_service_error_checking\", False) if you want to continue regardless.")
    B.f("probes/jaxgpu-w0/s3-requests.json").extend(json.dumps({
        "probe": "s3-client-metrics", "status": "warn",
        "detail": "boto3 GetObject on s3://fm-pretrain-eu/mix-v7/train/ over the last 15 min from this job: 192 reader threads across 4 hosts, 503 SlowDown responses rising from 0.4% to 38% of requests at 15:24Z",
        "metrics": {"get_object_rps": 3410, "slowdown_503": 1297, "retries_exhausted": 4, "prefix": "mix-v7/train/"}}, indent=2).split("\n"))
    job = f"""
job_id: "fm7b-v7-0419"
name: fm-7b-pretrain-mix-v7
framework: other
launcher: jax.distributed (k8s JobSet, 4 GPU pods)
status: failed
started_at: 2026-11-26T14:02:00Z
ended_at: {(te + timedelta(seconds=5)).strftime('%Y-%m-%dT%H:%M:%SZ')}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
mesh: {{data: 4, fsdp: 8}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + """code:
  - {commit: 5e1f0c2, at: 2026-11-12T09:30:00Z, message: "data: mix-v7 blend"}
  - {commit: a93b7d4, at: 2026-11-20T16:10:00Z, message: "eval: add arc-e to periodic evals"}
checkpoints:
  - {step: 40000, at: 2026-11-26T09:11:00Z, path: /mnt/fsx/ckpt/fm-7b-v7/40000, valid: true}
  - {step: 41000, at: 2026-11-26T13:42:00Z, path: /mnt/fsx/ckpt/fm-7b-v7/41000, valid: true}
data: {source: "s3://fm-pretrain-eu/mix-v7/train/", shards: 2048, reader: boto3}
spares: 1
history: [fm7b-v7-0415, fm7b-v7-0417]
"""
    truth = {"fault": "object_storage_error", "category": "infrastructure",
             "root_cause": "S3 throttled the job's shard reads (503 SlowDown on GetObject, boto3 retries exhausted) on all four hosts at once; the input pipeline of every host raised botocore ClientError SlowDown and the job aborted. No node is at fault.",
             "faulty_nodes": [], "stage": "training", "iteration": fail_step,
             "actions": [{"kind": "restart", "from_step": 41000}]}
    B.write(job, truth)



# ---------------------------------------------------------------------------------------------
# 2. Megatron-LM, only [rankN]: prefixes; resume hits a shard truncated when a node died mid-save
@incident
def inc_megatron_ckpt():
    B = Bundle("megatron-rankprefix-truncated-shard-4node")
    hosts = ["dgx-a14", "dgx-a15", "dgx-a16", "dgx-a21"]
    ips = ["10.40.2.14", "10.40.2.15", "10.40.2.16", "10.40.2.21"]
    # tp=8 fastest, then dp=2, then pp=2: ranks 16-31 are pp stage 1; 16-23 dp0, 24-31 dp1
    bad = {3: "mp_rank_03_001", 6: "mp_rank_06_001"}
    for ni, h in enumerate(hosts):
        L = B.f(f"logs/{h}/stdout.log")
        ranks = list(range(ni * 8, ni * 8 + 8))
        pid = 51230 + ni * 311
        for r in ranks:
            L.append(f"[rank{r}]:/usr/local/lib/python3.10/dist-packages/transformer_engine/pytorch/cpu_offload.py:595: DeprecationWarning: Offloading weights is deprecated. Using offload_weights=True does not have any effect.")
        if ni == 0:
            L += ["[rank0]:using world size: 32, data-parallel size: 2, context-parallel size: 1, hierarchical context-parallel sizes: None, tensor-model-parallel size: 8, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 2, encoder-pipeline-model-parallel size: 0",
                  "[rank0]:WARNING: Setting args.overlap_p2p_comm and args.align_param_gather to False since non-interleaved schedule does not support overlapping p2p communication and aligned param AG",
                  "[rank0]:> building GPT2BPETokenizer tokenizer ...",
                  "[rank0]: > padded vocab (size: 50257) with 943 dummy tokens (new size: 51200)",
                  "[rank0]:> initializing torch distributed ...",
                  "[rank0]:> initialized tensor model parallel with size 8",
                  "[rank0]:> initialized pipeline model parallel with size 2",
                  "[rank0]:> setting random seeds to 1234 ...",
                  "[rank0]:> compiling dataset index builder ...",
                  "[rank0]:make: Entering directory '/workspace/megatron-lm/megatron/core/datasets'",
                  "[rank0]:make: Nothing to be done for 'default'.",
                  "[rank0]:make: Leaving directory '/workspace/megatron-lm/megatron/core/datasets'",
                  "[rank0]:>>> done with dataset index builder. Compilation time: 0.061 seconds",
                  "[rank0]:> compiling and loading fused kernels ...",
                  "[rank0]:>>> done with compiling and loading fused kernels. Compilation time: 3.412 seconds",
                  "[rank0]:time to initialize megatron (seconds): 27.904",
                  "[rank0]:[after megatron is initialized] datetime: 2026-11-27 01:12:44 ",
                  "[rank0]:building GPT model ..."]
        for r in ranks[:2]:
            L.append(f"[rank{r}]: > number of parameters on (tensor, pipeline) model parallel rank ({r % 8}, {r // 16}): 1398341632")
        for r in ranks:
            L.append(f"[rank{r}]:{h}:{pid + r % 8}:{pid + r % 8} [{r % 8}] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7")
        if ni == 0:
            L += ["[rank0]:INFO:megatron.core.distributed.distributed_data_parallel:Setting up DistributedDataParallel with config DistributedDataParallelConfig(grad_reduce_in_fp32=True, overlap_grad_reduce=True, overlap_param_gather=True, align_param_gather=False, use_distributed_optimizer=True, num_distributed_optimizer_instances=1, check_for_nan_in_grad=True, bucket_size=40000000, average_in_collective=False, fp8_param_gather=False)",
                  "[rank0]:INFO:megatron.core.optimizer:Setting up optimizer with config OptimizerConfig(optimizer='adam', lr=0.00015, min_lr=1e-05, decoupled_lr=None, decoupled_min_lr=None, weight_decay=0.1, fp16=False, bf16=True, params_dtype=torch.bfloat16, use_precision_aware_optimizer=False, loss_scale=None, initial_loss_scale=4294967296, min_loss_scale=1.0, loss_scale_window=1000, hysteresis=2, adam_beta1=0.9, adam_beta2=0.95, adam_eps=1e-08, sgd_momentum=0.9, use_distributed_optimizer=True, overlap_param_gather_with_optimizer_step=False, clip_grad=1.0, log_num_zeros_in_grad=False, barrier_with_L1_time=True, timers=<megatron.core.timers.Timers object at 0x7f2a1c3e5a50>, config_logger_dir='')",
                  "[rank0]:> learning rate decay style: cosine",
                  "[rank0]: loading checkpoint from /lustre/ckpt/gpt-22b-r2 at iteration 7000"]
        # every rank loads its (tp, pp) file; dp replicas read the same file
        for r in ranks:
            tp, pp = r % 8, r // 16
            if pp == 1 and tp in bad:
                name = f"/lustre/ckpt/gpt-22b-r2/iter_0007000/{bad[tp]}/model_optim_rng.pt"
                L += [f"[rank{r}]: Traceback (most recent call last):",
                      f'[rank{r}]:   File "/workspace/megatron-lm/pretrain_gpt.py", line 286, in <module>',
                      f"[rank{r}]:     pretrain(",
                      f'[rank{r}]:   File "/workspace/megatron-lm/megatron/training/training.py", line 346, in pretrain',
                      f"[rank{r}]:     model, optimizer, opt_param_scheduler = setup_model_and_optimizer(",
                      f'[rank{r}]:   File "/workspace/megatron-lm/megatron/training/training.py", line 729, in setup_model_and_optimizer',
                      f"[rank{r}]:     args.iteration, args.num_floating_point_operations_so_far = load_checkpoint(",
                      f'[rank{r}]:   File "/workspace/megatron-lm/megatron/training/checkpointing.py", line 1092, in load_checkpoint',
                      f"[rank{r}]:     state_dict, checkpoint_name, release, ckpt_type = _load_base_checkpoint(",
                      f'[rank{r}]:   File "/workspace/megatron-lm/megatron/training/checkpointing.py", line 871, in _load_base_checkpoint',
                      f"[rank{r}]:     state_dict = torch.load(checkpoint_name, map_location='cpu', weights_only=False)",
                      f'[rank{r}]:   File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1326, in load',
                      f"[rank{r}]:     with _open_zipfile_reader(opened_file) as opened_zipfile:",
                      f'[rank{r}]:   File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 671, in __init__',
                      f"[rank{r}]:     super().__init__(torch._C.PyTorchFileReader(name_or_buffer))",
                      f"[rank{r}]: RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"]
                B.mark(f"logs/{h}/stdout.log", f"[rank{r}]: RuntimeError: PytorchStreamReader failed reading zip archive", 1)
        if ni in (2, 3):
            L += ["W1127 01:14:09.512000 140233 torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (pid + k) for k in (0, 1, 2, 4, 5, 7)]
            L += ["E1127 01:14:10.006000 140233 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 3 (pid: %d) of binary: /usr/bin/python" % (pid + 3),
                  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                  "============================================================",
                  "pretrain_gpt.py FAILED",
                  "------------------------------------------------------------",
                  "Failures:",
                  "[1]:",
                  "  time      : 2026-11-27_01:14:08",
                  f"  host      : {h}",
                  f"  rank      : {ni * 8 + 6} (local_rank: 6)",
                  f"  exitcode  : 1 (pid: {pid + 6})",
                  "  error_file: <N/A>",
                  "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                  "------------------------------------------------------------",
                  "Root Cause (first observed failure):",
                  "[0]:",
                  "  time      : 2026-11-27_01:14:08",
                  f"  host      : {h}",
                  f"  rank      : {ni * 8 + 3} (local_rank: 3)",
                  f"  exitcode  : 1 (pid: {pid + 3})",
                  "  error_file: <N/A>",
                  "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                  "============================================================"]
        else:
            for r in ranks[:3]:
                L.append(f"[rank{r}]:[E1127 01:24:09.733418344 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
            L.append(f"[rank{ranks[0]}]:[E1127 01:24:09.741022871 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank {ranks[0]}] Process group watchdog thread terminated with exception: [Rank {ranks[0]}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
            L.append(f"E1127 01:24:11.202000 140188 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: {pid}) of binary: /usr/bin/python")
    job = """
job_id: "884120"
name: gpt-22b-r2-pretrain
framework: megatron
scheduler: slurm
status: failed
started_at: 2026-11-27T01:11:40Z
ended_at: 2026-11-27T01:24:15Z
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + """code:
  - {commit: 3c8d21f, at: 2026-11-10T11:00:00Z, message: "config: gpt-22b r2 data blend"}
checkpoints:
  - {step: 6500, at: 2026-11-26T19:02:00Z, path: /lustre/ckpt/gpt-22b-r2/iter_0006500, valid: true}
  - {step: 7000, at: 2026-11-26T22:41:00Z, path: /lustre/ckpt/gpt-22b-r2/iter_0007000, valid: true}
requeue:
  previous_attempt: {nodes: [dgx-a14, dgx-a15, dgx-a17, dgx-a16], ended_at: 2026-11-26T22:43:05Z, state: NODE_FAIL, reason: "dgx-a17 not responding"}
  replaced: {dgx-a17: dgx-a21}
spares: 2
"""
    truth = {"fault": "checkpoint_corrupt", "category": "infrastructure",
             "root_cause": "the resume loaded iter_0007000, whose pipeline-stage-1 shards mp_rank_03_001 and mp_rank_06_001 were left truncated when dgx-a17 failed during that save in the previous attempt; torch.load on them fails ('failed finding central directory') on every rank that reads them",
             "faulty_nodes": [], "stage": "init", "iteration": None,
             "actions": [{"kind": "restart", "from_step": 6500}]}
    B.write(job, truth)



# ---------------------------------------------------------------------------------------------
# 3. DeepSpeed pdsh launcher ("host: " prefixes, tqdm), ZeRO-3 param NOT_AVAILABLE in PPO generation
@incident
def inc_ds_zero3():
    B = Bundle("deepspeed-pdsh-zero3-notavailable-2node")
    hosts = ["a100-pod3-n1", "a100-pod3-n2"]
    ips = ["10.3.8.31", "10.3.8.32"]
    for ni, h in enumerate(hosts):
        L = B.f(f"logs/{h}/pdsh.log")
        P = lambda s: L.append(f"{h}: {s}")
        if ni == 0:
            L.append("[2026-11-25 09:40:02,114] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda (auto detect)")
            L.append("[2026-11-25 09:40:04,551] [INFO] [runner.py:607:main] cmd = pdsh -S -f 1024 -w a100-pod3-n1,a100-pod3-n2 export PYTHONPATH=/workspace/rlhf; export NCCL_IB_HCA=mlx5;  cd /workspace/rlhf/step3_rlhf_finetuning; /opt/conda/bin/python -u -m deepspeed.launcher.launch --world_info=eyJhMTAwLXBvZDMtbjEiOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgN10sICJhMTAwLXBvZDMtbjIiOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgN119 --node_rank=%n --master_addr=10.3.8.31 --master_port=29500 main.py --actor_zero_stage 3 --critic_zero_stage 3 --generation_batches 2 --ppo_epochs 1 --per_device_generation_batch_size 4 --per_device_training_batch_size 4 --actor_gradient_checkpointing --output_dir /mnt/ckpt/ppo-13b-r5")
        P(f"[2026-11-25 09:40:07,{ni}31] [INFO] [launch.py:146:main] WORLD INFO DICT: {{'a100-pod3-n1': [0, 1, 2, 3, 4, 5, 6, 7], 'a100-pod3-n2': [0, 1, 2, 3, 4, 5, 6, 7]}}")
        P(f"[2026-11-25 09:40:07,{ni}31] [INFO] [launch.py:152:main] nnodes=2, num_local_procs=8, node_rank={ni}")
        P(f"[2026-11-25 09:40:07,{ni}31] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {{'a100-pod3-n1': [0, 1, 2, 3, 4, 5, 6, 7], 'a100-pod3-n2': [8, 9, 10, 11, 12, 13, 14, 15]}})")
        P(f"[2026-11-25 09:40:07,{ni}31] [INFO] [launch.py:164:main] dist_world_size=16")
        P(f"[2026-11-25 09:40:07,{ni}31] [INFO] [launch.py:168:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
        for k in range(8):
            P(f"[2026-11-25 09:40:15,{200+k*7}] [INFO] [comm.py:652:init_distributed] cdb=None")
        if ni == 0:
            P("[2026-11-25 09:40:15,288] [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl")
        P("/opt/conda/lib/python3.10/site-packages/transformers/utils/generic.py:441: FutureWarning: `torch.utils._pytree._register_pytree_node` is deprecated. Please use `torch.utils._pytree.register_pytree_node` instead.")
        P("Running tokenizer on prompt dataset:   0%|          | 0/60000 [00:00<?, ? examples/s]\rRunning tokenizer on prompt dataset:  33%|███▎      | 20000/60000 [00:05<00:10, 3912.44 examples/s]\rRunning tokenizer on prompt dataset:  67%|██████▋   | 40000/60000 [00:10<00:05, 3940.10 examples/s]\rRunning tokenizer on prompt dataset: 100%|██████████| 60000/60000 [00:15<00:00, 3951.77 examples/s]")
        P(f"[2026-11-25 09:41:58,{400+ni}] [INFO] [partition_parameters.py:348:__exit__] finished initializing model - num_params = 363, num_elems = 13.02B")
        if ni == 0:
            P("[2026-11-25 09:42:40,913] [INFO] [config.py:1003:print] DeepSpeedEngine configuration:")
            P("[2026-11-25 09:42:40,914] [INFO] [config.py:1007:print]   zero_config .................. stage=3 contiguous_gradients=True reduce_scatter=True reduce_bucket_size=500000000 allgather_partitions=True allgather_bucket_size=500000000 overlap_comm=True load_from_fp32_weights=True elastic_checkpoint=False offload_param=None offload_optimizer=None sub_group_size=1000000000 prefetch_bucket_size=30000000 param_persistence_threshold=10000 model_persistence_threshold=9223372036854775807 max_live_parameters=30000000 max_reuse_distance=1000000000 gather_16bit_weights_on_model_save=False stage3_gather_fp16_weights_on_model_save=False ignore_unused_parameters=True legacy_stage1=False round_robin_gradients=False zero_hpz_partition_size=1 zero_quantized_weights=False zero_quantized_nontrainable_weights=False zero_quantized_gradients=False mics_shard_size=-1 mics_hierarchical_params_gather=False memory_efficient_linear=False pipeline_loading=True override_module_apply=True")
            P("[2026-11-25 09:42:40,915] [INFO] [config.py:1007:print]   train_batch_size ............. 64")
            P("***** Running training *****")
            P("Beginning of Epoch 1/1, Total Generation Batches 1875")
            P("[2026-11-25 09:44:02,771] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1")
            P("epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.0412|cri_loss: 0.1877|unsuper_loss: 0.0")
            P("average reward score: -1.4521484375")
            P("-------------------------------------------------------------------------------------")
        P("Invalidate trace cache @ step 271: expected module 2, but got module 271")
        P("Invalidate trace cache @ step 271: expected module 815, but got module 814")
        fr = [0, 5] if ni == 0 else [9, 14]
        for r in fr:
            P("Traceback (most recent call last):")
            for a, b in [('/workspace/rlhf/step3_rlhf_finetuning/main.py", line 541, in main', "out = trainer.generate_experience(batch_prompt['prompt'],"),
                         ('/workspace/rlhf/step3_rlhf_finetuning/ppo_trainer.py", line 153, in generate_experience', "seq = self._generate_sequence(prompts, mask, step)"),
                         ('/workspace/rlhf/step3_rlhf_finetuning/ppo_trainer.py", line 95, in _generate_sequence', "seq = self.actor_model.module.generate("),
                         ('/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1568, in _call_impl', "result = forward_call(*args, **kwargs)"),
                         ('/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/parameter_offload.py", line 382, in _pre_forward_module_hook', "self.pre_sub_module_forward_function(module)"),
                         ('/opt/conda/lib/python3.10/site-packages/torch/utils/_contextlib.py", line 115, in decorate_context', "return func(*args, **kwargs)"),
                         ('/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/parameter_offload.py", line 495, in pre_sub_module_forward_function', "param_coordinator.fetch_sub_module(sub_module, forward=True)"),
                         ('/opt/conda/lib/python3.10/site-packages/deepspeed/utils/nvtx.py", line 15, in wrapped_fn', "ret_val = func(*args, **kwargs)"),
                         ('/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 309, in fetch_sub_module', "assert param.ds_status == ZeroParamStatus.AVAILABLE, param.ds_summary()")]:
                P(f'  File "{a}')
                P(f"    {b}")
            pid_ = 281 + r * 3
            P(f"AssertionError: {{'id': {pid_}, 'status': 'NOT_AVAILABLE', 'numel': 0, 'ds_numel': 5120, 'shape': (0,), 'ds_shape': (5120,), 'requires_grad': True, 'grad_shape': None, 'persist': False, 'active_sub_modules': {{{r+7}}}, 'ds_tensor.shape': torch.Size([320])}}")
        B.mark(f"logs/{h}/pdsh.log", f"AssertionError: {{'id': {281 + fr[0] * 3}, 'status': 'NOT_AVAILABLE'", 1)
        for k in range(8):
            P(f"[2026-11-25 09:45:3{k},0{ni}2] [INFO] [launch.py:316:sigkill_handler] Killing subprocess {40211 + ni * 1000 + k}")
        P(f"[2026-11-25 09:45:38,1{ni}9] [ERROR] [launch.py:322:sigkill_handler] ['/opt/conda/bin/python', '-u', 'main.py', '--local_rank=7', '--actor_zero_stage', '3', '--critic_zero_stage', '3', '--generation_batches', '2', '--ppo_epochs', '1'] exits with return code = 1")
        if ni == 0:
            L.append("pdsh@a100-pod3-n1: a100-pod3-n2: ssh exited with exit code 1")
            L.append("pdsh@a100-pod3-n1: a100-pod3-n1: ssh exited with exit code 1")
    job = """
job_id: "ppo-13b-r5"
name: ppo-13b-step3-r5
framework: deepspeed
launcher: deepspeed (pdsh)
status: failed
started_at: 2026-11-25T09:40:00Z
ended_at: 2026-11-25T09:45:40Z
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}
zero_stage: 3
versions: {deepspeed: 0.10.3, torch: 2.1.0, transformers: 4.34.0}
nodes:
  - {host: a100-pod3-n1, ip: 10.3.8.31, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}
  - {host: a100-pod3-n2, ip: 10.3.8.32, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}
code:
  - {commit: 77e01b9, at: 2026-11-18T15:20:00Z, message: "ppo: reward model 13b-rm-v4"}
  - {commit: d0c4a6e, at: 2026-11-24T10:05:00Z, message: "ppo: generation_batches 1 -> 2 to fill the experience buffer"}
checkpoints: []
spares: 1
"""
    truth = {"fault": "deepspeed_zero_error", "category": "framework",
             "root_cause": "DeepSpeed ZeRO-3 (0.10.3) prefetch/trace-cache bug: in the second PPO step with generation_batches=2 the actor's generate() fetched a partitioned parameter that was still NOT_AVAILABLE, tripping the fetch_sub_module assertion on every rank; the config is valid",
             "faulty_nodes": [], "stage": "training", "iteration": 1,
             "actions": [{"kind": "none"}]}
    B.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 4. Horovod (horovodrun, gloo: [rank]<stderr>: tags): 64 MB /dev/shm on one node -> NCCL shm segment failure
@incident
def inc_horovod_shm():
    B = Bundle("horovod-gloo-devshm-64m-2node")
    hosts = ["l40s-07", "l40s-08"]
    ips = ["10.9.4.107", "10.9.4.108"]
    for ni, h in enumerate(hosts):
        L = B.f(f"logs/{h}/horovodrun.log")
        pid0 = 3310 + ni * 97
        if ni == 0:
            L.append("Checking whether extension tensorflow was built with MPI.")
            L.append("Extension tensorflow was NOT built with MPI.")
            L.append("Extension torch was built with MPI.")
            L.append("Filtering local host names.")
            L.append("Remote host found: l40s-08")
            L.append("Checking ssh on all remote hosts.")
            L.append("SSH was successful into all the remote hosts.")
        for k in range(4):
            r = ni * 4 + k
            L.append(f"[{r}]<stderr>:/opt/conda/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: 'libc10_cuda.so: cannot open shared object file: No such file or directory'If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might be something wrong with your environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?")
        for k in range(4):
            r = ni * 4 + k
            pid = pid0 + k
            L.append(f"[{r}]<stdout>:{h}:{pid}:{pid} [{k}] NCCL INFO Bootstrap : Using eth0:{ips[ni]}<0>")
            L.append(f"[{r}]<stdout>:{h}:{pid}:{pid} [{k}] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:{ips[ni]}<0>")
            L.append(f"[{r}]<stdout>:{h}:{pid}:{pid} [{k}] NCCL INFO Using network IB")
        L.append(f"[{ni*4}]<stdout>:NCCL version 2.18.5+cuda12.2" if ni == 0 else f"[{ni*4}]<stdout>:{h}:{pid0}:{pid0+61} [0] NCCL INFO comm 0x55d1c8e0 rank 4 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x8a1f33c2d90e7a11 - Init START")
        for k in range(4):
            r = ni * 4 + k
            pid = pid0 + k
            L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO Setting affinity for GPU {k} to {'ffff,ffff0000,00000000' if k >= 2 else 'ffffffff'}")
        if ni == 1:
            for k in (1, 3):
                r, pid = 4 + k, pid0 + k
                seg = "nccl-Qm3tXe" if k == 1 else "nccl-Hh0aLk"
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO Channel 00/0 : {r}[{k}] -> {r+1 if k==1 else 4}[{(k+1)%4}] via SHM/direct/direct")
                L.append(f"[{r}]<stdout>:")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/{seg} to 9637892 bytes, error: No space left on device (28)")
                L.append(f"[{r}]<stdout>:")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/{seg} (size 9637888), error: No space left on device (28)")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO transport/shm.cc:551 -> 2")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO transport/shm.cc:493 -> 2")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO transport.cc:165 -> 2")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO init.cc:1222 -> 2")
                L.append(f"[{r}]<stdout>:{h}:{pid}:{pid+61} [{k}] NCCL INFO init.cc:1501 -> 2")
            B.mark(f"logs/{h}/horovodrun.log", "NCCL WARN Error: failed to extend /dev/shm/nccl-Qm3tXe", 1)
            B.mark(f"logs/{h}/horovodrun.log", "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Qm3tXe", 1)
            L += ["[5]<stderr>:Traceback (most recent call last):",
                  '[5]<stderr>:  File "/workspace/seg/train_hvd.py", line 214, in <module>',
                  "[5]<stderr>:    hvd.broadcast_parameters(model.state_dict(), root_rank=0)",
                  '[5]<stderr>:  File "/opt/conda/lib/python3.10/site-packages/horovod/torch/functions.py", line 58, in broadcast_parameters',
                  "[5]<stderr>:    synchronize(handle)",
                  '[5]<stderr>:  File "/opt/conda/lib/python3.10/site-packages/horovod/torch/mpi_ops.py", line 1016, in synchronize',
                  "[5]<stderr>:    raise HorovodInternalError(e)",
                  "[5]<stderr>:horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled system error (run with NCCL_DEBUG=INFO for details)"]
            B.mark(f"logs/{h}/horovodrun.log", "[5]<stderr>:horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed", 1)
            L.append("[6]<stderr>:ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).")
        else:
            for r in (0, 2):
                L += [f"[{r}]<stderr>:Traceback (most recent call last):",
                      f'[{r}]<stderr>:  File "/workspace/seg/train_hvd.py", line 214, in <module>',
                      f"[{r}]<stderr>:    hvd.broadcast_parameters(model.state_dict(), root_rank=0)",
                      f'[{r}]<stderr>:  File "/opt/conda/lib/python3.10/site-packages/horovod/torch/mpi_ops.py", line 1016, in synchronize',
                      f"[{r}]<stderr>:    raise HorovodInternalError(e)",
                      f"[{r}]<stderr>:horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message."]
            L += ["Process 5 exit with status code 1.",
                  "Terminating remaining workers after failure of Process 5.",
                  "Process 0 exit with status code 143.",
                  "Process 2 exit with status code 143.",
                  "Traceback (most recent call last):",
                  '  File "/opt/conda/bin/horovodrun", line 8, in <module>',
                  "    sys.exit(run_commandline())",
                  '  File "/opt/conda/lib/python3.10/site-packages/horovod/runner/gloo_run.py", line 284, in launch_gloo',
                  "    raise RuntimeError('Horovod detected that one or more processes exited with non-zero '",
                  "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job to be terminated. The first process to do so was:",
                  "Process name: 5",
                  "Exit code: 1"]
    for ni, h in enumerate(hosts):
        d = {"probe": "df -h /dev/shm (in container)", "status": "fail" if ni == 1 else "ok",
             "detail": ("shm  64M  64M  0  100% /dev/shm  (container started without --shm-size/--ipc=host: docker default 64 MB)" if ni == 1
                        else "shm  128G  1.2M  128G  1% /dev/shm  (--ipc=host)"),
             "metrics": {"size_bytes": 67108864 if ni == 1 else 137438953472, "used_pct": 100 if ni == 1 else 1}}
        B.f(f"probes/{h}/dev-shm.json").extend(json.dumps(d, indent=2).split("\n"))
    B.mark("probes/l40s-08/dev-shm.json", '"detail": "shm  64M', 1)
    job = """
job_id: "hvd-seg-0311"
name: segformer-b5-hvd
framework: other
launcher: horovodrun -np 8 -H l40s-07:4,l40s-08:4 --gloo
status: failed
started_at: 2026-11-24T18:20:00Z
ended_at: 2026-11-24T18:21:34Z
exit_code: 1
gpus_per_node: 4
parallelism: {tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}
nodes:
  - {host: l40s-07, ip: 10.9.4.107, ranks: [0, 1, 2, 3]}
  - {host: l40s-08, ip: 10.9.4.108, ranks: [4, 5, 6, 7]}
containers: {image: "registry.lab/vision/hvd-torch:0.28.1-cu122", runtime: docker}
code:
  - {commit: 1b77e0a, at: 2026-11-21T12:00:00Z, message: "seg: cityscapes 1024 crops"}
checkpoints:
  - {step: 12000, at: 2026-11-23T22:10:00Z, path: /nfs/ckpt/segformer-b5/step12000.pt, valid: true}
spares: 0
"""
    truth = {"fault": "nccl_shm_exhausted", "category": "infrastructure",
             "root_cause": "the container on l40s-08 ran with Docker's default 64 MB /dev/shm; NCCL could not extend its shared-memory segments for the SHM transport between GPUs on different sockets (No space left on device), ncclCommInitRank failed with 'unhandled system error' during hvd.broadcast_parameters and Horovod shut the job down",
             "faulty_nodes": ["l40s-08"], "stage": "init", "iteration": None,
             "actions": [{"kind": "none"}]}
    B.write(job, truth)



# ---------------------------------------------------------------------------------------------
# 5. Kubernetes events table: image pull fails on one node (disk pressure); torchtitan workers time out in rendezvous
@incident
def inc_k8s_pull():
    B = Bundle("k8s-events-errimagepull-torchtitan-4node")
    hosts = ["gpu-node-111", "gpu-node-112", "gpu-node-113", "gpu-node-114"]
    ips = ["10.70.1.111", "10.70.1.112", "10.70.1.113", "10.70.1.114"]
    pods = ["titan-llama8b-master-0", "titan-llama8b-worker-0", "titan-llama8b-worker-1", "titan-llama8b-worker-2"]
    img = "harbor.ml.internal/llm/torchtitan:2026.11.20-cu126"
    E = B.f("logs/gpu-node-114/kubectl-get-events.log")
    E.append("LAST SEEN   TYPE      REASON                 OBJECT                               MESSAGE")
    ev = [("14m", "Normal", "Scheduled", "pod/titan-llama8b-master-0", f"Successfully assigned llm-train/titan-llama8b-master-0 to gpu-node-111"),
          ("14m", "Normal", "Scheduled", "pod/titan-llama8b-worker-0", "Successfully assigned llm-train/titan-llama8b-worker-0 to gpu-node-112"),
          ("14m", "Normal", "Scheduled", "pod/titan-llama8b-worker-1", "Successfully assigned llm-train/titan-llama8b-worker-1 to gpu-node-113"),
          ("14m", "Normal", "Scheduled", "pod/titan-llama8b-worker-2", "Successfully assigned llm-train/titan-llama8b-worker-2 to gpu-node-114"),
          ("14m", "Normal", "Pulled", "pod/titan-llama8b-master-0", f'Container image "{img}" already present on machine'),
          ("14m", "Normal", "Created", "pod/titan-llama8b-master-0", "Created container pytorch"),
          ("14m", "Normal", "Started", "pod/titan-llama8b-master-0", "Started container pytorch"),
          ("14m", "Normal", "Pulled", "pod/titan-llama8b-worker-0", f'Container image "{img}" already present on machine'),
          ("14m", "Normal", "Created", "pod/titan-llama8b-worker-0", "Created container pytorch"),
          ("14m", "Normal", "Started", "pod/titan-llama8b-worker-0", "Started container pytorch"),
          ("14m", "Normal", "Pulling", "pod/titan-llama8b-worker-1", f'Pulling image "{img}"'),
          ("14m", "Normal", "Pulling", "pod/titan-llama8b-worker-2", f'Pulling image "{img}"'),
          ("13m", "Warning", "FreeDiskSpaceFailed", "node/gpu-node-114", "Failed to garbage collect required amount of images. Attempted to free 48318382080 bytes, but only found 0 bytes eligible to free."),
          ("12m", "Normal", "Pulled", "pod/titan-llama8b-worker-1", f'Successfully pulled image "{img}" in 1m52.311s (1m52.311s including waiting). Image size: 21476391204 bytes.'),
          ("12m", "Normal", "Created", "pod/titan-llama8b-worker-1", "Created container pytorch"),
          ("12m", "Normal", "Started", "pod/titan-llama8b-worker-1", "Started container pytorch"),
          ("12m", "Warning", "Failed", "pod/titan-llama8b-worker-2", f'Failed to pull image "{img}": failed to pull and unpack image "{img}": failed to extract layer sha256:6f0e3a9c2d41b7e85a1f0c33d9e2b8a47c5d1e90f3a2b6c4d8e7f1a0b9c3d2e5: write /var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/4411/fs/usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: no space left on device: unknown'),
          ("12m", "Warning", "Failed", "pod/titan-llama8b-worker-2", "Error: ErrImagePull"),
          ("11m", "Warning", "EvictionThresholdMet", "node/gpu-node-114", "Attempting to reclaim ephemeral-storage"),
          ("10m (x4 over 12m)", "Normal", "BackOff", "pod/titan-llama8b-worker-2", f'Back-off pulling image "{img}"'),
          ("10m (x4 over 12m)", "Warning", "Failed", "pod/titan-llama8b-worker-2", "Error: ImagePullBackOff"),
          ("2m", "Warning", "Failed", "pod/titan-llama8b-worker-2", f'Failed to pull image "{img}": failed to pull and unpack image "{img}": failed to extract layer sha256:6f0e3a9c2d41b7e85a1f0c33d9e2b8a47c5d1e90f3a2b6c4d8e7f1a0b9c3d2e5: write /var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/4418/fs/usr/local/lib/python3.11/site-packages/torch/lib/libcudnn_engines_precompiled.so.9: no space left on device: unknown'),
          ("2m", "Normal", "ExitedWithCode", "pytorchjob/titan-llama8b", "Pod: llm-train.titan-llama8b-master-0 exited with code 1"),
          ("2m", "Normal", "PyTorchJobFailed", "pytorchjob/titan-llama8b", "PyTorchJob llm-train/titan-llama8b is failed because 1 Master replica(s) failed."),
          ("88s (x19 over 12m)", "Normal", "BackOff", "pod/titan-llama8b-worker-2", f'Back-off pulling image "{img}"')]
    for a, b, c, d, e in ev:
        E.append(f"{a:<11} {b:<9} {c:<22} {d:<36} {e}")
    B.mark("logs/gpu-node-114/kubectl-get-events.log", "no space left on device: unknown", 1)
    B.mark("logs/gpu-node-114/kubectl-get-events.log", "Error: ErrImagePull", 1)
    B.mark("logs/gpu-node-114/kubectl-get-events.log", "Failed to garbage collect required amount of images", 1)
    for ni in range(3):
        h, pod = hosts[ni], pods[ni]
        L = B.f(f"logs/{h}/{pod}.log")
        L += ["W1127 08:14:31.209000 1 torch/distributed/run.py:793] ",
              "W1127 08:14:31.209000 1 torch/distributed/run.py:793] *****************************************",
              "W1127 08:14:31.209000 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
              "W1127 08:14:31.209000 1 torch/distributed/run.py:793] *****************************************",
              f"I1127 08:14:31.214000 1 torch/distributed/elastic/agent/server/api.py:860] [default] starting workers for entrypoint: python",
              f"I1127 08:14:31.214000 1 torch/distributed/elastic/agent/server/api.py:677] [default] Rendezvous'ing worker group"]
        t_end = "08:24:31" if ni == 0 else ("08:24:33" if ni == 1 else "08:26:19")
        L += ["Traceback (most recent call last):",
              '  File "/usr/local/bin/torchrun", line 8, in <module>',
              "    sys.exit(main())",
              '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py", line 681, in _rendezvous',
              "    rdzv_info = spec.rdzv_handler.next_rendezvous()",
              '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1149, in next_rendezvous',
              "    self._op_executor.run(join_op, deadline, self._get_deadline)",
              '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 683, in run',
              "    raise RendezvousTimeoutError",
              "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"]
    B.f("probes/gpu-node-114/containerd-disk.json").extend(json.dumps({
        "probe": "df -h /var/lib/containerd", "status": "fail",
        "detail": "/dev/nvme0n1p3  200G  199G  1.1G 100% /var/lib/containerd ; node condition DiskPressure=True since 08:02Z",
        "metrics": {"used_pct": 99.5, "avail_bytes": 1181116006}}, indent=2).split("\n"))
    B.mark("probes/gpu-node-114/containerd-disk.json", '"detail": "/dev/nvme0n1p3', 1)
    job = """
job_id: "titan-llama8b"
name: llama3-8b-continued-pretrain
framework: torchtitan
scheduler: kubernetes (Kubeflow PyTorchJob, namespace llm-train)
status: failed
started_at: 2026-11-27T08:13:40Z
ended_at: 2026-11-27T08:26:25Z
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}
fsdp: {dp_shard: 32}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, pod: {pods[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + """image: harbor.ml.internal/llm/torchtitan:2026.11.20-cu126
code:
  - {commit: 0d9a7e3, at: 2026-11-19T13:00:00Z, message: "titan: llama3 8b cpt config"}
checkpoints:
  - {step: 8000, at: 2026-11-26T23:50:00Z, path: /mnt/ckpt/llama8b-cpt/step-8000, valid: true}
spares: 2
"""
    truth = {"fault": "container_image_pull_failure", "category": "infrastructure",
             "root_cause": "gpu-node-114's containerd disk was full (DiskPressure, image GC could free nothing), so pulling the 21 GB training image failed with 'no space left on device' (ErrImagePull / ImagePullBackOff); worker-2 never started and the other pods' torchrun timed out in rendezvous",
             "faulty_nodes": ["gpu-node-114"], "stage": "init", "iteration": None,
             "actions": [{"kind": "evict", "nodes": ["gpu-node-114"]}, {"kind": "restart", "from_step": 8000}]}
    B.write(job, truth)



# ---------------------------------------------------------------------------------------------
# 6. SageMaker MPI ([1,mpirank:N,algo-K]<stdout>:), HF Trainer: tokenizer has added tokens the embedding lacks
@incident
def inc_sm_vocab():
    B = Bundle("sagemaker-mpi-hf-vocab-mismatch-2node")
    hosts = ["algo-1", "algo-2"]
    ips = ["10.0.141.17", "10.0.139.204"]
    rnd = random.Random(5)
    bad_rank, fail_step = 11, 1338
    for ni, h in enumerate(hosts):
        L = B.f(f"logs/{h}/training.log")
        L += [f"2026-11-27 10:02:{11+ni:02d},544 sagemaker-training-toolkit INFO     Imported framework sagemaker_pytorch_container.training",
              f"2026-11-27 10:02:{11+ni:02d},571 sagemaker-training-toolkit INFO     Network interface name: eth0",
              f"2026-11-27 10:02:{11+ni:02d},571 sagemaker-training-toolkit INFO     Host: ['algo-1', 'algo-2']",
              f"2026-11-27 10:02:{11+ni:02d},572 sagemaker-training-toolkit INFO     instance type: ml.p4d.24xlarge"]
        if ni == 0:
            L += ["2026-11-27 10:02:14,118 sagemaker-training-toolkit INFO     Can connect to host algo-2 at port 22",
                  "2026-11-27 10:02:14,118 sagemaker-training-toolkit INFO     Worker algo-2 available for communication",
                  "2026-11-27 10:02:14,302 sagemaker-training-toolkit INFO     Invoking user script"]
        for k in range(8):
            r = ni * 8 + k
            p = f"[1,mpirank:{r},{h}]"
            L.append(f"{p}<stderr>:/opt/conda/lib/python3.10/site-packages/transformers/training_args.py:1575: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead")
            L.append(f"{p}<stderr>:Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.")
        if ni == 0:
            p = "[1,mpirank:0,algo-1]"
            L += [f"{p}<stdout>:tokenizer: /opt/ml/input/data/tokenizer (len=32011, added: <|tool_call|>, <|tool_result|>, <|im_start|>, <|im_end|>, ... 11 tokens)",
                  f"{p}<stdout>:model config: /opt/ml/input/data/base/config.json (LlamaForCausalLM, vocab_size=32000, hidden_size=4096, num_hidden_layers=32)",
                  f"{p}<stderr>:Loading checkpoint shards: 100%|██████████| 3/3 [00:21<00:00,  7.12s/it]",
                  f"{p}<stdout>:***** Running training *****",
                  f"{p}<stdout>:  Num examples = 1,912,440",
                  f"{p}<stdout>:  Num Epochs = 1",
                  f"{p}<stdout>:  Instantaneous batch size per device = 4",
                  f"{p}<stdout>:  Total train batch size (w. parallel, distributed & accumulation) = 128",
                  f"{p}<stdout>:  Gradient Accumulation steps = 2",
                  f"{p}<stdout>:  Total optimization steps = 14,941"]
            for s in range(10, fail_step, 10):
                if s % 50 == 0:
                    L.append(f"{p}<stdout>:{{'loss': {1.42 - s*0.00021 + rnd.uniform(-0.03, 0.03):.4f}, 'grad_norm': {rnd.uniform(0.6, 0.9):.4f}, 'learning_rate': {2e-5*min(1, s/300):.4e}, 'epoch': {s/14941:.2f}}}")
        else:
            p = f"[1,mpirank:{bad_rank},algo-2]"
            for blk in (0, 1):
                for th in range(32, 36):
                    L.append(f"{p}<stderr>:../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [{417+blk},0,0], thread: [{th},0,0] Assertion `srcIndex < srcSelectDimSize` failed.")
            B.mark("logs/algo-2/training.log", "Assertion `srcIndex < srcSelectDimSize` failed.", 1)
            L += [f"{p}<stderr>:Traceback (most recent call last):",
                  f'{p}<stderr>:  File "/opt/ml/code/train_sft.py", line 188, in <module>',
                  f"{p}<stderr>:    trainer.train()",
                  f'{p}<stderr>:  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 3485, in training_step',
                  f"{p}<stderr>:    loss = self.compute_loss(model, inputs)",
                  f'{p}<stderr>:  File "/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py", line 923, in forward',
                  f"{p}<stderr>:    inputs_embeds = self.embed_tokens(input_ids)",
                  f'{p}<stderr>:  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2264, in embedding',
                  f"{p}<stderr>:    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)",
                  f"{p}<stderr>:RuntimeError: CUDA error: device-side assert triggered",
                  f"{p}<stderr>:CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                  f"{p}<stderr>:For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                  f"{p}<stderr>:Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]
            B.mark("logs/algo-2/training.log", f"{p}<stderr>:RuntimeError: CUDA error: device-side assert triggered", 1)
            L += ["--------------------------------------------------------------------------",
                  "Primary job  terminated normally, but 1 process returned",
                  "a non-zero exit code. Per user-direction, the job has been aborted.",
                  "--------------------------------------------------------------------------"]
    A = B.f("logs/algo-1/training.log")
    A += ["--------------------------------------------------------------------------",
          "mpirun.real detected that one or more processes exited with non-zero status, thus causing",
          "the job to be terminated. The first process to do so was:",
          "",
          "  Process name: [[41822,1],11]",
          "  Exit code:    1",
          "--------------------------------------------------------------------------",
          "2026-11-27 11:58:40,221 sagemaker-training-toolkit ERROR    Reporting training FAILURE",
          "2026-11-27 11:58:40,222 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:",
          "ExitCode 1",
          'ErrorMessage "RuntimeError: CUDA error: device-side assert triggered"']
    B.mark("logs/algo-1/training.log", "added: <|tool_call|>", 1)
    job = """
job_id: "sft-llama7b-tools-2026-11-27-10-00-31-882"
name: sft-llama7b-tools
framework: other
scheduler: sagemaker (mpi distribution, 2 x ml.p4d.24xlarge)
status: failed
started_at: 2026-11-27T10:00:31Z
ended_at: 2026-11-27T11:58:41Z
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}
nodes:
  - {host: algo-1, ip: 10.0.141.17, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}
  - {host: algo-2, ip: 10.0.139.204, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}
code:
  - {commit: 9a1c0d2, at: 2026-11-20T10:00:00Z, message: "sft: chat template v2"}
  - {commit: e44b7f1, at: 2026-11-26T17:45:00Z, message: "data: add tool-use mixture (8%) and its special tokens to the tokenizer"}
checkpoints: []
spares: 0
"""
    truth = {"fault": "tokenizer_vocab_mismatch", "category": "data",
             "root_cause": "the tokenizer has 32011 tokens (11 added tool/chat special tokens) but the model's embedding has vocab_size 32000 (resize_token_embeddings never called); the first batch holding an added token id >= 32000 (tool-use samples) tripped the embedding's index assert 'srcIndex < srcSelectDimSize' on rank 11",
             "faulty_nodes": [], "stage": "training", "iteration": fail_step,
             "actions": [{"kind": "none"}]}
    B.write(job, truth)



# ---------------------------------------------------------------------------------------------
# 7. MLflow-wrapped Lightning run, ANSI colour codes; Lightning 2.5.2 MLFlowLogger passes a Path artifact_path
@incident
def inc_mlflow_lightning():
    B = Bundle("mlflow-ansi-lightning-mlflowlogger-bug-2node")
    hosts = ["h100-r2-05", "h100-r2-06"]
    ips = ["10.12.9.5", "10.12.9.6"]
    G, Y, R, C, Z, BO = "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[36m", "\x1b[0m", "\x1b[1m"
    rnd = random.Random(9)
    for ni, h in enumerate(hosts):
        L = B.f(f"logs/{h}/mlflow-run.log")
        L.append(f"2026/11/26 21:00:0{ni} INFO mlflow.projects.backend.local: === Running command 'torchrun --nnodes 2 --nproc-per-node 4 --node-rank {ni} --master-addr 10.12.9.5 train.py --config configs/vit_l_dino.yaml' in run with ID '4f0b2c6a91de4e7fb1a3c55d20e8a7f1' === ")
        for k in range(4):
            r = ni * 4 + k
            L.append(f"[rank{r}]:{Y}/opt/conda/lib/python3.11/site-packages/lightning/fabric/connector.py:571: `precision=bf16` is supported for historical reasons but its usage is discouraged. Please set your precision to bf16-mixed instead!{Z}")
        L.append(f"{C}[11/26/26 21:00:41]{Z} {G}INFO    {Z} Initializing distributed: GLOBAL_RANK: {ni*4}, MEMBER: {ni*4+1}/8                 {C}distributed.py:271{Z}")
        if ni == 0:
            L += [f"{G}INFO{Z}: GPU available: True (cuda), used: True",
                  "----------------------------------------------------------------------------------------------------",
                  "distributed_backend=nccl",
                  "All distributed processes registered. Starting with 8 processes",
                  "----------------------------------------------------------------------------------------------------",
                  f"┏━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓",
                  f"┃{BO}   {Z}┃{BO} Name     {Z}┃{BO} Type              {Z}┃{BO} Params {Z}┃{BO} Mode  {Z}┃",
                  f"┡━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩",
                  f"│{C} 0 {Z}│ student  │ VisionTransformer │  304 M │ train │",
                  f"│{C} 1 {Z}│ teacher  │ VisionTransformer │  304 M │ eval  │",
                  f"│{C} 2 {Z}│ dino_loss│ DINOLoss          │      0 │ train │",
                  f"└───┴──────────┴───────────────────┴────────┴───────┘"]
            bar = ""
            for s in range(20, 501, 20):
                bar += f"\rEpoch 0/99 {'━'*(s//25)}{' '*(20-s//25)} {s}/2502 0:{s*14//60:02d}:{s*14%60:02d} • 6:{(2502-s)*14//3600%60:02d}:00 {rnd.uniform(0.69,0.73):.2f}it/s v_num: a7f1 train/loss: {9.8 - s*0.004 + rnd.uniform(-0.05,0.05):.3f}"
            L.append(bar)
            p = "[rank0]:"
            L += [f"{p}Traceback (most recent call last):",
                  f'{p}  File "/workspace/ssl/train.py", line 142, in <module>',
                  f"{p}    trainer.fit(model, datamodule=dm)",
                  f'{p}  File "/opt/conda/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py", line 561, in fit',
                  f"{p}    call._call_and_handle_interrupt(",
                  f'{p}  File "/opt/conda/lib/python3.11/site-packages/lightning/pytorch/callbacks/model_checkpoint.py", line 389, in _save_checkpoint',
                  f"{p}    logger.after_save_checkpoint(proxy(self))",
                  f'{p}  File "/opt/conda/lib/python3.11/site-packages/lightning/pytorch/loggers/mlflow.py", line 335, in after_save_checkpoint',
                  f"{p}    self._scan_and_log_checkpoints(checkpoint_callback)",
                  f'{p}  File "/opt/conda/lib/python3.11/site-packages/lightning/pytorch/loggers/mlflow.py", line 369, in _scan_and_log_checkpoints',
                  f"{p}    self.experiment.log_artifact(self._run_id, p, artifact_path)",
                  f'{p}  File "/opt/conda/lib/python3.11/site-packages/mlflow/store/artifact/artifact_repo.py", line 462, in verify_artifact_path',
                  f"{p}    raise MlflowException(",
                  f"{p}{R}mlflow.exceptions.MlflowException: Invalid artifact path: 'model/checkpoints/epoch=0-step=500'. Names may be treated as files in certain cases, and must not resolve to other names when treated as such. This name would resolve to 'model/checkpoints/epoch=0-step=500'{Z}"]
            B.mark(f"logs/{h}/mlflow-run.log", "mlflow.exceptions.MlflowException: Invalid artifact path", 1)
            B.mark(f"logs/{h}/mlflow-run.log", "lightning/pytorch/loggers/mlflow.py\", line 369, in _scan_and_log_checkpoints", 1)
            L.append("E1126 21:09:44.120000 2201 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 2231) of binary: /opt/conda/bin/python")
            L.append(f"2026/11/26 21:09:46 {R}ERROR{Z} mlflow.cli: === Run (ID '4f0b2c6a91de4e7fb1a3c55d20e8a7f1') failed ===")
        else:
            for k in range(2):
                L.append(f"[rank{4+k}]:[E1126 21:19:44.518337512 ProcessGroupNCCL.cpp:616] [Rank {4+k}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=10093, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.")
            L.append("[rank4]:[E1126 21:19:45.102334871 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 4] Process group watchdog thread terminated with exception: [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=10093, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.")
    job = """
job_id: "dino-vitl-a7f1"
name: dino-vitl-pretrain
framework: other
launcher: mlflow run (torchrun, Lightning 2.5.2, mlflow 3.1.0)
status: failed
started_at: 2026-11-26T21:00:00Z
ended_at: 2026-11-26T21:19:50Z
exit_code: 1
gpus_per_node: 4
parallelism: {tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}
nodes:
  - {host: h100-r2-05, ip: 10.12.9.5, ranks: [0, 1, 2, 3]}
  - {host: h100-r2-06, ip: 10.12.9.6, ranks: [4, 5, 6, 7]}
versions: {lightning: 2.5.2, mlflow: 3.1.0, torch: 2.6.0}
code:
  - {commit: b5e02a1, at: 2026-11-20T09:00:00Z, message: "dino: vit-l recipe"}
  - {commit: 71cc9f0, at: 2026-11-25T18:30:00Z, message: "logging: MLFlowLogger(log_model='all'), checkpoint every 500 steps"}
checkpoints: []
spares: 0
"""
    truth = {"fault": "framework_bug", "category": "framework",
             "root_cause": "Lightning 2.5.2's MLFlowLogger passes the checkpoint artifact path as a pathlib.Path to MlflowClient.log_artifact; MLflow 3.1's verify_artifact_path rejects it ('Invalid artifact path') at the first checkpoint (step 500) on rank 0, the other ranks then time out in the next allreduce. The config (log_model='all') is valid; a Lightning fix/upgrade or log_model=False works around it",
             "faulty_nodes": [], "stage": "checkpoint", "iteration": 501,
             "actions": [{"kind": "none"}]}
    B.write(job, truth)



# ---------------------------------------------------------------------------------------------
# 8. Ray Train TorchTrainer: one node's container has no /dev/infiniband -> NCCL NET/Socket there, job slow
@incident
def inc_ray_socket():
    B = Bundle("raytrain-nccl-socket-fallback-4node")
    hosts = ["ray-h100-a", "ray-h100-b", "ray-h100-c", "ray-h100-d"]
    ips = ["10.20.1.11", "10.20.1.12", "10.20.1.13", "10.20.1.14"]
    bad = 2
    rnd = random.Random(3)
    D = B.f("logs/ray-h100-a/job-driver-raysubmit_Fq2wZx8LmT3kP1aB.log")
    D += ["2026-11-27 06:00:03,114\tINFO worker.py:1654 -- Connecting to existing Ray cluster at address: 10.20.1.11:6379...",
          "2026-11-27 06:00:03,129\tINFO worker.py:1832 -- Connected to Ray cluster. View the dashboard at \x1b[1m\x1b[32m10.20.1.11:8265 \x1b[39m\x1b[22m",
          "",
          "View detailed results here: s3://corp-ray-results/llama-ft-r9/TorchTrainer_2026-11-27_06-00-03",
          "To visualize your results with TensorBoard, run: `tensorboard --logdir /tmp/ray/session_2026-11-27_05-58-41_552013_1/artifacts/2026-11-27_06-00-03/TorchTrainer_2026-11-27_06-00-03/driver_artifacts`",
          "",
          "Training started with configuration:",
          "╭──────────────────────────────────────────────╮",
          "│ Training config                              │",
          "├──────────────────────────────────────────────┤",
          "│ train_loop_config/global_batch_size      512 │",
          "│ train_loop_config/lr                  0.0001 │",
          "│ train_loop_config/seq_len               4096 │",
          "╰──────────────────────────────────────────────╯",
          "(TorchTrainer pid=20417, ip=10.20.1.11) Started distributed worker processes: "]
    for ni, ip in enumerate(ips):
        for k in range(0, 8, 7):
            D.append(f"(TorchTrainer pid=20417, ip=10.20.1.11) - (node_id={ni}a{k}e3f0c9b2d41{ni}7e{k}5, ip={ip}, pid={30100 + ni*100 + k}) world_rank={ni*8+k}, local_rank={k}, node_rank={ni}")
    D.append("(RayTrainWorker pid=30100, ip=10.20.1.11) Setting up process group for: env:// [rank=0, world_size=32]")
    D.append("(RayTrainWorker pid=30100, ip=10.20.1.11) NCCL version 2.21.5+cuda12.4")
    for ni, h in enumerate(hosts):
        pid = 30100 + ni * 100
        W = B.f(f"logs/{h}/worker-{pid}.out")
        W.append(f"{h}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:{ips[ni]}<0>")
        W.append(f"{h}:{pid}:{pid} [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.")
        W.append(f"{h}:{pid}:{pid} [0] NCCL INFO cudaDriverVersion 12040")
        if ni == bad:
            W.append(f"{h}:{pid}:{pid+212} [0] NCCL INFO NET/IB : No device found.")
            W.append(f"{h}:{pid}:{pid+212} [0] NCCL INFO NET/Socket : Using [0]eth0:{ips[ni]}<0>")
            W.append(f"{h}:{pid}:{pid+212} [0] NCCL INFO Using network Socket")
            B.mark(f"logs/{h}/worker-{pid}.out", "NCCL INFO NET/IB : No device found.", 1)
            B.mark(f"logs/{h}/worker-{pid}.out", "NCCL INFO Using network Socket", 1)
        else:
            W.append(f"{h}:{pid}:{pid+212} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB eth0:{ips[ni]}<0>")
            W.append(f"{h}:{pid}:{pid+212} [0] NCCL INFO Using network IB")
        W.append(f"{h}:{pid}:{pid+212} [0] NCCL INFO ncclCommInitRank comm 0x5611d3a0 rank {ni*8} nranks 32 cudaDev 0 nvmlDev 0 busId 18000 commId 0x3b8e0c1d7f22a915 - Init COMPLETE")
        for s in range(10, 301, 10):
            st = rnd.uniform(11.2, 12.4)
            W.append(f"step {s} loss {2.31 - s*0.0011 + rnd.uniform(-0.02, 0.02):.4f} step_time {st:.2f}s comm_time {st - 3.1:.2f}s tokens/s {512*4096/st/1000:.0f}k")
    D.append("(RayTrainWorker pid=30300, ip=10.20.1.13) ray-h100-c:30300:30512 [0] NCCL INFO NET/IB : No device found.")
    D.append("(RayTrainWorker pid=30300, ip=10.20.1.13) ray-h100-c:30300:30512 [0] NCCL INFO Using network Socket")
    D.append("(RayTrainWorker pid=30301, ip=10.20.1.13) ray-h100-c:30301:30519 [1] NCCL INFO NET/IB : No device found.\x1b[32m [repeated 7x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)\x1b[0m")
    D.append("(RayTrainWorker pid=30100, ip=10.20.1.11) ray-h100-a:30100:30312 [0] NCCL INFO Using network IB\x1b[32m [repeated 23x across cluster]\x1b[0m")
    for it in range(1, 7):
        D.append("")
        D.append(f"Training finished iteration {it} at 2026-11-27 {6 + (it*595)//3600:02d}:{(it*595)//60%60:02d}:{it*595%60:02d}. Total running time: {it*595//60}min {it*595%60}s")
        D += ["╭──────────────────────────────────────╮",
              "│ Training result                      │",
              "├──────────────────────────────────────┤",
              "│ checkpoint_dir_name                  │",
              f"│ time_this_iter_s             {rnd.uniform(588, 602):.3f} │",
              f"│ time_total_s                {it*595.0:8.1f} │",
              f"│ training_iteration                {it:4d} │",
              f"│ loss                            {2.30 - it*0.05:.4f} │",
              f"│ step_time                      {rnd.uniform(11.4, 12.1):.3f} │",
              "╰──────────────────────────────────────╯"]
    D.append("(RayTrainWorker pid=30100, ip=10.20.1.11) /usr/local/lib/python3.11/site-packages/torch/distributed/fsdp/_state_dict_utils.py:827: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned.")
    B.f("probes/ray-h100-c/container-rdma.json").extend(json.dumps({
        "probe": "ls /dev/infiniband (inside the Ray worker container)", "status": "fail",
        "detail": "ls: cannot access '/dev/infiniband': No such file or directory (host has mlx5_0..mlx5_7 Active; the pod spec on this node lacks the rdma/hca resource request)",
        "metrics": {"uverbs_devices_in_container": 0, "hcas_on_host": 8}}, indent=2).split("\n"))
    B.mark("probes/ray-h100-c/container-rdma.json", '"detail": "ls: cannot access', 1)
    for ni, h in enumerate(hosts):
        if ni != bad:
            B.f(f"probes/{h}/container-rdma.json").extend(json.dumps({"probe": "ls /dev/infiniband (inside the Ray worker container)", "status": "ok", "detail": "rdma_cm uverbs0 uverbs1 uverbs2 uverbs3 uverbs4 uverbs5 uverbs6 uverbs7", "metrics": {"uverbs_devices_in_container": 8, "hcas_on_host": 8}}, indent=2).split("\n"))
    job = """
job_id: "raysubmit_Fq2wZx8LmT3kP1aB"
name: llama-ft-r9
framework: other
launcher: Ray Train TorchTrainer (ray 2.40, KubeRay)
status: slow
started_at: 2026-11-27T06:00:00Z
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {ips[i]}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}\n" for i, h in enumerate(hosts)) + """code:
  - {commit: c2f81d9, at: 2026-11-22T08:00:00Z, message: "ft: llama 13b r9 data"}
checkpoints: []
expected: {step_time_s: 3.4, source: "llama-ft-r8 on the same 4 nodes, 2026-11-20"}
history: [raysubmit_Kd81mQ0pZ2xw]
spares: 1
"""
    truth = {"fault": "nccl_socket_fallback", "category": "network",
             "root_cause": "the Ray worker container on ray-h100-c had no /dev/infiniband (no RDMA device exposed to the pod), so NCCL there found no IB device and carried its cross-node traffic over TCP sockets on eth0; every step of the 32-GPU job took ~11.8 s instead of ~3.4 s, with no error",
             "faulty_nodes": ["ray-h100-c"], "stage": "training", "iteration": 1,
             "actions": [{"kind": "none"}]}
    B.write(job, truth)


if __name__ == "__main__":
    for fn in INCIDENTS:
        fn()
