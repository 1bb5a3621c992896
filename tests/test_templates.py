"""Header stripping, masking, the shape cache, drain3 grouping, and the normal-event pool."""

from __future__ import annotations

import json
import math

import pytest

from diagagent.analysis.logparse import (
    LEVEL_RANK,
    content_level,
    data_bound,
    data_wait,
    finished_bar,
    is_cascade,
    level_after_bar,
    line_kind,
    marker_of,
    mask,
    names_pattern,
    progress_layout,
    read_progress,
    read_progress_with,
    split_header,
    without_zero_counts,
)
from diagagent.analysis.templates import (
    BLANK,
    CORRUPT,
    LineShaper,
    NormalPool,
    TemplateMiner,
    canonical,
    template_id,
)

# (raw line, the message left after the header, the header's level)
HEADERS = [
    ("[2026-11-20 08:00:05,120] [INFO] [megatron] building GPT model ...", "building GPT model ...", "info"),
    ("[rank0]:[E1120 10:01:02.123456 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout",
     "Watchdog caught collective operation timeout", "error"),
    ("[default1]:RuntimeError: CUDA error: uncorrectable ECC error encountered",
     "RuntimeError: CUDA error: uncorrectable ECC error encountered", None),
    ("node-002:1234:5678 [1] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'",
     "NCCL WARN Cuda failure 'uncorrectable ECC error encountered'", "error"),  # NCCL's errors are WARN
    ("Nov 20 10:00:58 node-002 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE (double bit error)",
     "NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE (double bit error)", None),
    ("[Fri Nov 20 10:00:58 2026] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.",
     "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.", None),
    ("[ 1234.567890] mlx5_core 0000:3b:00.0: mlx5_0 port 1 link down", "mlx5_core 0000:3b:00.0: mlx5_0 port 1 link down",
     None),
    (("E1120 10:00:00.123000 140234 torch/distributed/elastic/multiprocessing/api.py:881] failed (exitcode: 1) "
     "local_rank: 0 (pid: 1234)"), "failed (exitcode: 1) local_rank: 0 (pid: 1234)", "error"),
    ("01/01/2024 10:00:00 - INFO - transformers.trainer - ***** Running training *****", "***** Running training *****",
     "info"),
    ("[INFO|trainer.py:1234] 2024-01-01 10:00:00,123 >> Saving model checkpoint to out/checkpoint-500",
     "Saving model checkpoint to out/checkpoint-500", "info"),
    ("[NeMo W 2024-01-01 10:00:00 exp_manager:123] There is no checkpoint", "There is no checkpoint", "warning"),
    ("[rank0]:[titan] 2024-01-01 10:00:00,123 - root - INFO - step:  1  loss: 12.2527",
     "step:  1  loss: 12.2527", "info"),
    ("2024-01-01T10:00:00.123456789Z stderr F RuntimeError: boom", "RuntimeError: boom", None),
    ("  12: [2024-01-01 10:00:00,123] [WARNING] [stage3.py:1850:step] 3 pytorch allocator cache flushes",
     "3 pytorch allocator cache flushes", "warning"),
    ("worker-1: [2024-01-01 10:00:00,123] [ERROR] [engine.py:12:save] checkpoint write failed",
     "checkpoint write failed", "error"),
    ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-017]:29500",
     "The client socket has failed to connect to [node-017]:29500", "warning"),
    ("WARNING:torch.distributed.run:Setting OMP_NUM_THREADS", "Setting OMP_NUM_THREADS", "warning"),
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=918273.batch",
     "slurmstepd: error: Detected 1 oom_kill event in StepId=918273.batch", "error"),
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:83] data. DefaultCPUAllocator: not enough memory",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:83] data. DefaultCPUAllocator: not enough memory", None),
    ("Info about the run", "Info about the run", None),
    # Ray's worker prefixes, nested, over vLLM's logging header (dev:skyrl-1398); coloured by a terminal; Ray's C++ log
    (("(AsyncVLLMInferenceEngine pid=597306) (EngineCore_DP2 pid=598582) ERROR 03-26 20:21:53 [core.py:1299] "
      "Invocation of collective_rpc method failed"), "Invocation of collective_rpc method failed", "error"),
    ("\x1b[36m(TorchTrainer pid=439, ip=10.212.157.221)\x1b[0m RuntimeError: boom", "RuntimeError: boom", None),
    ("(head, rank=0, pid=5634) ValueError: bad", "ValueError: bad", None),
    ("(raylet, ip=10.0.0.2) [2025-02-11 20:08:00,117 E 4121 4121] main.cc:483: boom", "boom", "error"),
    ("(autoscaler +2m3s) Adding 1 node(s)", "Adding 1 node(s)", None),
    ("[33m(raylet)[0m A worker died or was killed", "A worker died or was killed", None),
    ("[0]<stderr>:Missing ranks:", "Missing ranks:", None),
    ("[2024-01-01 10:00:00,123][__main__][ERROR] - boom", "boom", "error"),
    ("2024/01/01 10:00:00 ERROR boom", "boom", "error"),
    ("(raylet) [2025-03-01 16:18:15,116 E 2687 2687] (raylet) node_manager.cc:3069: 2 Workers killed",
     "2 Workers killed", "error"),
    ("[ERROR] 2024-06-28-13:05:55 (PID:11591, Device:0, RankID:-1) ERR01005 OPS internal error",
     "ERR01005 OPS internal error", "error"),
    ("[rank1]: EI0006: [PID: 1292363] Getting socket times out. Reason: Remote Rank did not send the data in time.",
     "[PID: 1292363] Getting socket times out. Reason: Remote Rank did not send the data in time.", "error"),
    ("[15:58:29] WARNING  Sending process 197 closing signal SIGTERM", "Sending process 197 closing signal SIGTERM",
     "warning"),
    ("00:28:21.238 [I] [process=0][thread=MainThread] Starting", "[process=0][thread=MainThread] Starting", "info"),
    ("[INFO:swift] Saving model checkpoint to /out/checkpoint-100", "Saving model checkpoint to /out/checkpoint-100",
     "info"),
    ("(sky-b7d3-weichiang pid=120832) E 07-06 19:18:16 controller.py:137] Unexpected error occurred",
     "Unexpected error occurred", "error"),
    ("(pid) not a prefix", "(pid) not a prefix", None),
    # absl::Status text at INFO: JAX's xla_bridge (dev:jax-22070)
    ("INFO:2024-06-25 00:34:55,142:jax._src.xla_bridge:889: Unable to initialize backend 'tpu': ABORTED: The TPU",
     "Unable to initialize backend 'tpu': ABORTED: The TPU", "error"),
    # pdsh's "host: " before an NCCL header (dev:gpt-neox-1147), gcloud's TPU-worker address before glog's
    # (dev:levanter-584); a host with no digit only before a header, never a step count
    ("node1: node1:15874:17284 [4] NCCL INFO Could not enable P2P between dev 4(=61000) and dev 3(=42000)",
     "NCCL INFO Could not enable P2P between dev 4(=61000) and dev 3(=42000)", "info"),
    ("34.16.214.62: I0515 20:03:26.569316  343449 flash_attention.cc:1908] successfully finished dry run",
     "successfully finished dry run", "info"),
    ("node2: Net : Call to recv from NODE2_IP<56843> failed : Connection refused",
     "Net : Call to recv from NODE2_IP<56843> failed : Connection refused", None),
    ("gpu-node: [2024-01-01 10:00:00] [INFO] ready", "ready", "info"),
    ("iter100: loss 2.0", "iter100: loss 2.0", None),
    # a paste quoted in Markdown (dev:c-3-framework-58, dev:nanogpt-215); Megatron's own ">>> " stays
    ("> KeyError: 'net'", "KeyError: 'net'", None),
    # MPICH's and Intel MPI's -prepend-rank, MS-MPI's rank (dev:deepmd-kit-1774, dev:cntk-913)
    ("[13] RuntimeError: CUDA error: unspecified launch failure", "RuntimeError: CUDA error: unspecified launch failure",
     None),
    ("> 2023-03-22 09:30:39 iter 2920: loss 3.9883, time 1099.34ms", "iter 2920: loss 3.9883, time 1099.34ms", None),
    (">>> done with dataset index builder.", ">>> done with dataset index builder.", None),
]


@pytest.mark.parametrize(("raw", "message", "level"), HEADERS)
def test_header_is_stripped_and_level_kept(raw: str, message: str, level: str | None) -> None:
    parsed = split_header(raw)
    assert parsed.message == message
    assert parsed.level == level


@pytest.mark.parametrize(("message", "masked"), [
    ("Got completion from peer 7.247.232.172<39936> with status=12 hca mlx5_15",
     "Got completion from peer <*><<*>> with status=<*> hca <*>"),
    ("NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE", "NVRM: Xid (PCI:<*>): <*>, pid=<*>, DBE"),
    ("loading checkpoint from /ckpt/42/iter_0001000 at 0x7f3a2b1c", "loading checkpoint from <*> at <*>"),
    ("copying a param with shape torch.Size([4096, 1024]) from checkpoint",
     "copying a param with shape torch.Size([<*>]) from checkpoint"),
    ("mat1 and mat2 shapes cannot be multiplied (4096x1024 and 2048x4096)",
     "<*> and <*> shapes cannot be multiplied (<*> and <*>)"),
    ("WorkNCCL(SeqNum=78, OpType=ALLREDUCE, Timeout(ms)=600000)", "WorkNCCL(SeqNum=<*>, OpType=ALLREDUCE, Timeout(ms)=<*>)"),
    ("link down on node-017   port 1", "link down on <*> port <*>"),
    ("peer fe80::1a2b:3c4d closed; nic 0c:42:a1:3b:00:01", "peer <*> closed; nic <*>"),
])
def test_masking_hides_what_varies(message: str, masked: str) -> None:
    assert mask(message) == masked


def test_host_names_without_digits_are_masked_when_known() -> None:
    names = names_pattern(["gpu-a", "gpu-b", "node-17"])
    assert mask("lost connection to gpu-b from gpu-a", names) == "lost connection to <*> from <*>"
    assert mask("gpu-abc stays", names) == "gpu-abc stays"


def test_levels_kinds_markers_and_cascade_words() -> None:
    assert content_level("ModuleNotFoundError: No module named 'x'") == "error"
    assert content_level("Segmentation fault (core dumped)") == "fatal"
    assert content_level("number of skipped iterations: 0 | number of nan iterations: 0 |") is None
    assert "nan" not in without_zero_counts("lm loss: 2.07E+00 | number of skipped iterations:   0 | "
                                            "number of nan iterations:   0 |")
    assert content_level("Retrying in 5 seconds") == "warning"
    assert line_kind('File "/a/b.py", line 3, in f') == "frame"
    assert line_kind('File "/a/b.py", line 3, in f [repeated 6x across cluster]') == "frame"
    # a paste whose line breaks were lost runs the frame into the exception (dev:awsome-distributed-ai-192)
    assert line_kind('File "/a/c10d.py", line 1906, in broadcast 10: work = pg.broadcast() 10: '
                     "torch.distributed.DistBackendError: NCCL error in: x.cpp:1331, unhandled system error") == "other"
    assert line_kind("Traceback (most recent call last):") == "traceback"
    assert line_kind("torch.OutOfMemoryError: CUDA out of memory.") == "exception"
    assert line_kind("    ^^^^^^^^^") == "caret"
    assert marker_of("saving checkpoint at iteration    1000 to /ckpt") == "ckpt_start"
    assert marker_of("successfully saved checkpoint from iteration 1000 to /ckpt") == "ckpt_end"
    assert marker_of("validation loss at iteration 1000 | lm loss value: 2.1") == "eval_end"
    assert marker_of("***** Running Evaluation *****") == "eval_start"
    assert marker_of("loading checkpoint from /ckpt at iteration 1000") == "ckpt_load"
    # Ray Train's report after each of its iterations goes on training; its last word on the run does not
    assert marker_of("Training finished iteration 1 at 2026-11-27 11:46:28. Total running time: 46min 26s") is None
    assert marker_of("Training completed after 1 iterations at 2025-03-05 04:39:56.") == "shutdown"
    assert marker_of("done training in 162.1 seconds") == "shutdown"  # fairseq_cli/train.py
    assert marker_of("Summoning checkpoint.") == "ckpt_start"  # latent-diffusion's main.py
    assert marker_of("using checkpoint at iteration 1000 for eval") is None
    assert marker_of("step:  1  loss: 12.2527  memory: 32.34GiB") == "iteration"
    assert is_cascade("Watchdog caught collective operation timeout")
    assert is_cascade("Sending process 1234 closing signal SIGTERM")
    assert not is_cascade("CUDA error: uncorrectable ECC error encountered")
    # TensorFlow's ShutdownHook at INFO (dev:t5-japanese-1), a JSON error body's opening key (dev:kubeflow-examples-318)
    assert content_level("ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0)") == "error"
    assert content_level('tensorflow       "error": {') is None
    assert content_level('"message": "The total number of changes to the object x exceeds the rate limit."') == \
        "warning"


def test_progress_numbers_and_the_fast_layout_agree() -> None:
    line = (b"[2026-11-20 10:00:00,000] iteration     1200/  100000 | elapsed time per iteration (ms): 4012.3 | "
            b"lm loss: 2.113E+00 | grad norm: 0.981 | number of nan iterations:   0 |")
    full = read_progress(line.decode())
    assert (full.iteration, full.loss, full.grad_norm, full.nan_iterations) == (1200, 2.113, 0.981, 0)
    assert full.step_time_s == pytest.approx(4.0123)
    layout = progress_layout(line)
    assert layout is not None
    other = line.replace(b"1200", b"1201").replace(b"2.113E+00", b"2.101E+00")
    fast = read_progress_with(layout, other)
    assert (fast.iteration, fast.loss) == (1201, 2.101)
    assert progress_layout(line.replace(b"2.113E+00", b"nan      ")) is None  # NaN lines are read in full
    assert str(read_progress("{'loss': nan, 'grad_norm': 1.0}").loss) == "nan"
    assert read_progress("lm loss: 2.0 | grad norm: inf").grad_norm == float("inf")
    # pytorch/examples' ImageNet ProgressMeter (dev:dali-2608): the batch in its epoch, the batch time before its average
    imagenet = read_progress("Epoch: [1][  100/5005]\tTime  8.719 ( 0.361)\tData  8.597 ( 0.230)\tLoss 1.2987e+00")
    assert (imagenet.iteration, imagenet.step_time_s, imagenet.loss) == (100, 8.719, 1.2987)
    assert read_progress("the Time 3 (of 4) said").step_time_s is None  # (a word, not the meter)
    # NeMo's progress printer: the epoch's iteration, then the trainer's global_step, which counts the job's steps
    # (blind incident sbatch-srun-l-nemo-nccl-proxy-internal-4node); read by its layout too
    nemo = (b"Training epoch 1, iteration 666/38249 | lr: 0.0002872 | global_batch_size: 512 | global_step: 12417 | "
            b"reduced_train_loss: 1.816 | train_step_timing in s: 7.327")
    assert (read_progress(nemo.decode()).iteration, read_progress(nemo.decode()).step_time_s) == (12417, 7.327)
    nemo_layout = progress_layout(nemo)
    assert nemo_layout is not None and read_progress_with(nemo_layout, nemo.replace(b"12417", b"12418")).iteration == 12418
    # a trainer's own rate: TensorFlow's CIFAR-10 tutorial's seconds a batch before its examples a second
    # (dev:tensorflow-2987), Hand4Whole's seconds an itr beside its parts, MXNet's Speedometer in samples a second (the
    # inverse of a step, dev:mxnet-4804)
    tf = read_progress("2016-07-23 15:17:56.483761: step 3300, loss = 2.17 (25.3 examples/sec; 10.102 sec/batch)")
    assert (tf.iteration, tf.step_time_s) == (3300, 10.102)
    hand = read_progress("09-24 22:55:11 Epoch 0/7 itr 104/3489: lr: 0.0001 speed: 2.94(0.63s r2.27)s/itr 2.84h/epoch")
    assert (hand.iteration, hand.step_time_s) == (104, 2.94)
    mxnet = read_progress("2017-01-26 20:58:24,362 Epoch[0] Batch [6250]   Speed: 75.35 samples/sec")
    assert mxnet.iteration == 6250 and mxnet.step_time_s == pytest.approx(1 / 75.35)
    assert read_progress("Speed: 75.35 samples/sec").step_time_s is None  # (no step on the line: no step time)
    # a bar behind a launcher's prefix or a timestamp, and a bar redrawn with \r: the last segment is the step
    ray = b"(RayTrainWorker pid=2211, ip=10.0.0.10)  23%|##        | 452/2000 [31:32<1:47:10,  4.15s/it]"
    assert read_progress(ray.decode()).iteration == 452
    assert read_progress_with(progress_layout(ray), ray.replace(b"452", b"453")).iteration == 453
    assert read_progress("2026-11-20T10:00:00.123Z  45%|####      | 450/1000 [01:00<01:13,  7.50it/s]").iteration == 450
    redrawn = "\r  4%|#  | 340/8000 [12:40<4:18:20,  2.03s/it]\r  4%|#  | 356/8000 [12:56<4:18:20,  2.03s/it]\r"
    assert read_progress(redrawn).iteration == 356
    assert read_progress("Map: 100%|##########| 1000/1000 [00:01<00:00, 800.00 examples/s]").iteration is None
    # a checkpoint's name carries its step and metrics: a path, no progress (Lightning's restore names the load)
    restore = ("Restoring states from the checkpoint path at /results/checkpoints/megatron_gpt--val_loss=2.31-step=2000-"
               "consumed_samples=1024000.0.ckpt")
    assert (read_progress(restore).iteration, marker_of(restore)) == (None, "ckpt_load")
    assert read_progress("Epoch 0, global step 2000: saving model to '/ckpt/epoch=0-step=2000.ckpt'").iteration == 2000
    # torchtitan colours its metrics: read once the colours are out, with no fast layout (its offsets would be off)
    titan = "[titan] 2026-11-20 10:20:20,800 - root - INFO - \x1b[31mstep: 800  \x1b[32mloss:  3.0200  \x1b[39m"
    assert (read_progress(titan).iteration, read_progress(titan).loss) == (800, 3.02)
    assert progress_layout(titan.encode()) is None


@pytest.mark.parametrize(("line", "iteration", "loss", "step"), [  # each framework's documented progress line
    (("Epoch(train)  [1][ 100/1000]  lr: 1.0000e-04  eta: 1:00:00  time: 0.5123  data_time: 0.0123  memory: 10000  "
     "loss: 2.3456"), 100, 2.3456, 0.5123),  # MMEngine's LoggerHook
    ("Iter(train) [  100/10000]  lr: 1.0000e-04  eta: 1:00:00  time: 0.5123  data_time: 0.0123  loss: 2.3456",
     100, 2.3456, 0.5123),
    ("eta: 1:00:00  iter: 99  total_loss: 2.346  loss_cls: 0.5  time: 0.5123  data_time: 0.0123  lr: 0.0001",
     99, 2.346, 0.5123),  # Detectron2's CommonMetricPrinter
    ("iter 100: loss 2.3456, time 120.00ms, mfu 30.12%", 100, 2.3456, 0.12),  # nanoGPT
    ("completed step: 100, seconds: 0.512, TFLOP/s/device: 150.123, loss: 2.346", 100, 2.346, 0.512),  # MaxText
    ("step:100 - actor/pg_loss:0.123 - timing_s/step:12.345", 100, None, 12.345),  # verl's console logger
    ("[batch=100/1000]: Train loss/train/total: 2.3456", 100, 2.3456, None),  # Composer
    ("1|100|Loss: 2.345600128364563:  10%|█         | 100/1000 [01:00<09:00,  1.67it/s]", 100, 2.3456001, 1 / 1.67),
    # MXNet's Speedometer: its samples a second, the inverse of a step (dev:mxnet-4804)
    ("Epoch[0] Batch [100]\tSpeed: 1000.12 samples/sec\taccuracy=0.5", 100, None, 1 / 1000.12),
    ("Epoch [1/10] Step [100/1000] loss: 2.3456", 100, 2.3456, None),
    # tqdm's bar with a description that names training (dev:levanter-584; Lightning's "Epoch 0:"), its rate the step
    # time (seconds a step, or the inverse of steps a second)
    ("train:   0%|          | 2/100000 [00:46<644:59:38, 23.22s/it, loss=11.2]", 2, 11.2, 23.22),
    ("Epoch 3:  45%|####5     | 450/1000 [01:00<01:13,  7.50it/s, loss=0.512, v_num=0]", 450, 0.512, 1 / 7.5),
    # Jacinle's bar, the epoch's metrics in its description, a step's time among them (dev:nscl-pytorch-release-23)
    (("Epoch 15 acc/qa=1.000000 loss=0.046158 time/data=0.008719 time/step=1.016501: 100%|######| 1006/1006 "
      "[18:08<00:00,  1.08s/it]"), 1006, 0.046158, 1.08),
    ("Ep. 1 : Up. 51000 : Sen. 77,303,338 : Cost 1.41794586 : Time 334.55s : 8012.01 words/s", 51000, None, None),
    # Lightning's RichProgressBar: bar, batches, elapsed • remaining, speed, metrics
    ("Epoch 0/0  ━━━━━━━━━━╸━━━━━━━ 3170/12000 0:52:19 • 3:33:17 0.69it/s v_num: 3 train_loss: 2.547", 3170, 2.547,
     1 / 0.69),
])
def test_progress_lines_of_other_frameworks(line: str, iteration: int, loss: float | None, step: float | None) -> None:
    p = read_progress(line)
    assert marker_of(line) == "iteration"
    assert (p.iteration, p.loss, p.step_time_s) == (iteration, pytest.approx(loss) if loss else None,
                                                    pytest.approx(step) if step else None)
    layout = progress_layout(line.encode())
    assert layout is None or read_progress_with(layout, line.encode()) == p  # the fast path reads the same


def test_shaper_parses_each_shape_once_and_skips_blank_and_corrupt_lines() -> None:
    shaper = LineShaper()
    lines = [f"[2026-11-20 08:00:{s:02d},120] [INFO] step {s} done".encode() for s in range(10, 60)]
    ids = {shaper.message_id(raw) for raw in lines}
    assert len(ids) == 1
    assert shaper.shape_misses == 1
    assert shaper.message_id(b"   ") == BLANK
    assert shaper.message_id(bytes(range(128, 250))) == CORRUPT
    assert shaper.message_id("naïve café".encode()) > CORRUPT


def test_an_error_logged_at_info_counts_as_a_warning() -> None:
    """OpenRLHF logs a refused reward server at INFO (dev:lmm-r1-30): the words are not dropped as chatter, nor do
    they outrank a real error line."""
    shaper = LineShaper()
    refused = shaper.message_id(b"(remote_rm_fn_ray pid=92259) INFO 03-11 19:53:36 remote_rm_utils.py:24] Request "
                                b"error, please check: [Errno 111] Connection refused")
    chatter = shaper.message_id(b"(remote_rm_fn_ray pid=92259) INFO 03-11 19:53:37 remote_rm_utils.py:30] reward 0.5")
    assert shaper.levels[refused] == LEVEL_RANK["warning"]
    assert shaper.levels[chatter] == LEVEL_RANK["info"]
    # a bare label says nothing of its own: its message is the next line (dev:gpt-neox-1147), nor does MS-MPI's heading
    # over its report (dev:cntk-913); MPI's words for the rank that failed do (dev:netket-1494, dev:cntk-1047)
    assert content_level("Last error:") is None and content_level("Last error: Cuda failure 1") == "error"
    assert content_level("---- error analysis -----") is None
    assert content_level("MPI_ABORT was invoked on rank 0 in communicator MPI COMMUNICATOR 4 CREATE FROM 0") == "error"
    assert content_level("[0] process exited without calling finalize") == "error"
    assert content_level("There are not enough slots available in the system to satisfy the 3") == "error"  # prrte-1152
    # NCCL reports its errors as WARN: its INFO lines stay information whatever their words (dev:gpt-neox-1147)
    p2p = shaper.message_id(b"node1:15874:17284 [4] NCCL INFO Could not enable P2P between dev 4(=61000) and dev 3")
    assert shaper.levels[p2p] == LEVEL_RANK["info"]
    # DeepSpeed's launcher killing the ranks once one exited is the failure, whatever its level (dev:yi-152)
    assert split_header("[2023-11-21 20:42:22,682] [INFO] [launch.py:315:sigkill_handler] Killing subprocess "
                        "156890").level == "error"
    assert is_cascade("Killing subprocess <*>")  # (its template): the kill of every rank, once one exited
    # torchrun's summary header as a template, its script's path masked; systemd on the unit whose launcher exited
    assert is_cascade("<*> FAILED") and is_cascade("train.py FAILED")
    assert is_cascade("finetune.service: Main process exited, code=exited, status=<*>")
    assert is_cascade("finetune.service: Failed with result 'exit-code'.")


def test_a_traceback_keeps_its_indentation_under_time_stamps_a_transport_adds() -> None:
    # kubectl logs --timestamps and journald put a time before each line a process printed; a logger's own header
    # (its level) makes its line a logger's, whose message indentation says nothing
    for raw in ('2026-11-27T10:15:35.700811773Z [rank0]:   File "/opt/x.py", line 42, in main',
                "2026-11-27T10:15:35.700811773Z     trainer.fit(model)",
                "Nov 27 08:55:32 a100-n01 accelerate[23145]: [rank0]:     trainer.fit(model)"):
        assert split_header(raw).indented, raw
    assert not split_header("2026-11-27T10:15:35.701294067Z [rank0]: OSError: [Errno 122] Disk quota exceeded").indented
    assert not split_header("[2024-01-01 10:00:00,123] [INFO] [logging.py:96:log_dist]   x").indented


def test_miner_groups_ranks_and_keeps_different_errors_apart() -> None:
    miner = TemplateMiner()
    lines = [
        (b"[rank1]:[E1120 10:01:02.1 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: "
        b"WorkNCCL(SeqNum=78, OpType=ALLREDUCE)"),
        (b"[rank12]:[E1120 10:01:03.9 ProcessGroupNCCL.cpp:683] [Rank 12] Watchdog caught collective operation timeout: "
        b"WorkNCCL(SeqNum=79, OpType=BROADCAST)"),
        b"RuntimeError: CUDA error: uncorrectable ECC error encountered",
        b"RuntimeError: CUDA error: an illegal memory access was encountered",
        b"",
    ]
    groups = miner.mine(lines)
    assert groups[0] == groups[1]
    assert len({groups[0], groups[2], groups[3]}) == 3
    assert groups[4] == -1
    assert any(t.startswith("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=<*>,")
               for t in miner.templates().values())


def test_canonical_template_and_stable_ids() -> None:
    assert canonical("a  <*><*> b <*>.<*>") == "a <*> b <*>"
    assert template_id("x <*>") == template_id("x <*>") != template_id("x <*> y")


def test_normal_pool_persists_merges_and_matches_with_wildcards(tmp_path) -> None:
    pool = NormalPool()
    pool.add_job("39", {"NCCL INFO comm <*> rank <*> nranks <*>": "info", "loading data from <*>": "info"}, lines=10)
    pool.save(tmp_path)
    other = NormalPool()
    other.add_job("40", {"NCCL INFO comm <*> rank <*> nranks <*>": "info"})
    other.save(tmp_path)  # a second writer: merged, not overwritten
    loaded = NormalPool.load(tmp_path)
    assert set(loaded.jobs) == {"39", "40"}
    assert loaded.share("NCCL INFO comm <*> rank <*> nranks <*>") == 1.0
    assert loaded.share("loading data from /data/shard-7") == 0.5  # a wildcard in the pool matches a literal
    assert loaded.share("RuntimeError: CUDA error") == 0.0
    raw = json.loads(NormalPool.path_in(tmp_path).read_text())
    assert raw["version"] == 1 and "templates" in raw  # plain JSON, never a pickle
    (NormalPool.path_in(tmp_path)).write_text("{not json")
    assert NormalPool.load(tmp_path).jobs == {}  # an unreadable pool is an empty pool, not a crash


def test_token_merge_keeps_what_differing_tokens_share() -> None:
    from diagagent.analysis.templates import merge_tokens

    assert merge_tokens("rhost=<*>", "rhost=gate.example.org") == "rhost=<*>"
    assert merge_tokens('"GET', '"POST') == '"<*>'
    assert merge_tokens("(uid=<*>)", "LOGIN(uid=<*>)") == "<*>(uid=<*>)"
    assert merge_tokens("alpha", "alpine") == "<*>"


def test_different_words_stay_apart_unless_many_siblings_share_a_place() -> None:
    from diagagent.analysis.templates import generalize_siblings

    miner = TemplateMiner()
    lines = [b"VM Paused (Lifecycle Event)", b"VM Resumed (Lifecycle Event)", b"VM Paused (Lifecycle Event)"]
    groups = miner.mine(lines, LineShaper(headers=False))
    assert groups[0] == groups[2] != groups[1]
    users = [f"session opened for user {u} by (uid=0)" for u in ("ann", "bob", "cyd", "dan", "eve")]
    general = generalize_siblings(users)
    assert set(general.values()) == {"session opened for user <*> by (uid=0)"}
    assert generalize_siblings(users[:2]) == {}  # two different words are two events (GET / POST)
    assert generalize_siblings(["normal", "warning", "running", "failed", "booted"]) == {}


def test_host_ports_and_dates_are_masked() -> None:
    assert mask("www.example.com:443 open through proxy proxy.corp.local:5070 HTTPS") == \
        "<*>:<*> open through proxy <*>:<*> HTTPS"
    assert mask("connection from 10.0.0.1 at Sun Jul 10 03:55:15 2005") == \
        "connection from <*> at <*> <*> <*> <*>:<*>:<*> <*>"
    assert mask("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:") == \
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"


def test_stage_from_traceback_functions_and_resumed_step() -> None:
    from diagagent.analysis.logparse import frame_function, resume_step, stage_of_frames

    assert frame_function('File "/w/megatron/training.py", line 754, in train_step') == "train_step"
    assert stage_of_frames(["<module>", "pretrain", "train", "train_step", "forward"]) == "training"
    assert stage_of_frames(["<module>", "setup_model_and_optimizer", "load_checkpoint", "load_state_dict"]) == "init"
    assert stage_of_frames(["<module>", "main", "save_checkpoint", "save"]) == "checkpoint"
    assert stage_of_frames(["<module>"]) == "init"  # an import at the top of the script
    assert stage_of_frames(["<module>", "main", "wrapped_fn", "forward"]) == "training"
    # HF Trainer preparing the model and optimizer with DeepSpeed before its first step (dev:deepspeed-6525)
    assert stage_of_frames(["train", "_inner_training_loop", "prepare", "_prepare_deepspeed"]) == "init"
    assert stage_of_frames(["train", "_inner_training_loop", "training_step", "backward"]) == "training"
    assert stage_of_frames(["<module>", "main"]) is None
    # a script's train() still constructing its plugin or dataset (dev:colossalai-6202) is setting up; once a model
    # runs inside it, it is training
    assert stage_of_frames(["<module>", "train", "__init__"]) == "init"
    assert stage_of_frames(["<module>", "train", "__init__", "forward"]) == "training"
    # the functions real tracebacks and dumps pass through: Paddle's save_infer_program (dev:paddleseg-537), mmcv's
    # runner.val (dev:mmcv-1107), Lightning's checkpoint restore (dev:stable-audio-tools-163), a loader run inside
    # train() before its loop (dev:pytorch-146157), a dump stuck tearing down (dev:torchtitan-1342)
    assert stage_of_frames(["<module>", "main", "train", "save_infer_program"]) == "checkpoint"
    assert stage_of_frames(["<module>", "main", "run", "val", "val_step"]) == "eval"
    assert stage_of_frames(["<module>", "main", "fit", "_run", "_restore_modules_and_callbacks"]) == "init"
    assert stage_of_frames(["<module>", "main", "train", "load_from_path", "load"]) == "init"
    assert stage_of_frames(["<module>", "destroy_process_group"]) == "shutdown"
    assert stage_of_frames(["<module>", "main", "saved_tensors_hooks"]) is None  # saved is not save
    # Keras's Model.fit (dev:tensorflow-33531) trains; Coqui's Trainer.fit runs its test loop inside (dev:trainer-48)
    assert stage_of_frames(["<module>", "main", "fit", "fit", "experimental_run"]) == "training"
    assert stage_of_frames(["<module>", "main", "fit", "_fit", "test_run", "__getattr__"]) == "eval"
    assert resume_step("rank=0 loading checkpoint /ckpt/1001/global_step5100") == 5100
    assert resume_step(" loading checkpoint from /ckpt/iter_0012000") == 12000


def test_a_wrapped_error_is_judged_by_what_it_wraps() -> None:
    assert not is_cascade("Process group watchdog thread terminated with exception: NCCL error: internal error")
    assert is_cascade("Process group watchdog thread terminated with exception: NCCL error: remote process exited")
    assert is_cascade("srun: error: node-002: task 11: Exited with exit code 1")
    assert is_cascade("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")


def test_a_keyword_is_never_a_variable_but_a_field_value_is() -> None:
    miner = TemplateMiner()
    lines = [
        b"proxy.cse.cuhk.edu.hk:5070 open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS",
        b"183.62.156.108:22 open through proxy socks.cse.cuhk.edu.hk:5070 SOCKS5",
        b"onReceive action: android.intent.action.SCREEN_ON",
        b"onReceive action: android.intent.action.SCREEN_OFF",
        b"Watchdog caught collective operation timeout: WorkNCCL(SeqNum=78, OpType=ALLREDUCE, Timeout(ms)=600000)",
        b"Watchdog caught collective operation timeout: WorkNCCL(SeqNum=79, OpType=SEND, Timeout(ms)=600000)",
    ]
    groups = miner.mine(lines, LineShaper(headers=False))
    assert groups[0] != groups[1]  # HTTPS names the protocol; a masked SOCKS5 does not take its place
    assert groups[2] != groups[3]
    assert groups[4] == groups[5]  # OpType=<*>: a keyword after `=` is the field's value


def test_an_arrow_is_structure_never_a_word_in_its_place() -> None:
    # NCCL's error trail is no INFO line that happens to have as many words (dev:nccl-1000)
    lines = [b"NCCL INFO Using network IBext", b"NCCL INFO bootstrap.cc:270 -> 2", b"NCCL INFO misc/socket.cc:567 -> 2"]
    groups = TemplateMiner().mine(lines, LineShaper(headers=False))
    assert groups[0] != groups[1] and groups[1] == groups[2]


def test_the_elastic_agents_failure_summary_is_the_cascade() -> None:
    table = [
        "2026-08-03T09:50:05.660000412Z train.py FAILED",
        "2026-08-03T09:50:05.660000412Z Root Cause (first observed failure):",
        "2026-08-03T09:50:05.660000412Z   error_file: <N/A>",
        "2026-08-03T09:50:05.660000412Z   traceback : Signal 9 (SIGKILL) received by PID 48213",
        "2026-08-03T09:50:05.660000412Z   <NO_OTHER_FAILURES>",
    ]
    for raw in table:
        assert is_cascade(mask(split_header(raw).message)), raw
    # the worker's own error stays a cause, even where it says FAILED
    assert not is_cascade('RuntimeError: it->second->ptr INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp"')
    assert not is_cascade("Traceback (most recent call last):")


def test_nccl_reports_its_own_errors_as_warn() -> None:
    port = split_header("hgx-b09:88202:88415 [2] NCCL WARN NET/IB : mlx5_2:1 Got async event : port error")
    assert port.level == "error"
    assert split_header("hgx-b09:88202:88415 [2] NCCL WARN NET/IB : mlx5_2:1 Got async event : port active").level \
        == "warning"
    # a failed transfer with a peer is the peer's failure as often as this node's: it stays a warning
    assert split_header("node-025:2762592:2762745 [7] NCCL WARN NET/IB : Got completion from peer 10.64.0.34<52736> "
                        "with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_7").level == "warning"


def test_a_failed_verbs_call_or_socket_creation_is_the_ranks_own_error_not_the_cascade() -> None:
    line = "vm-133:52744:52787 [0] ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out"
    assert not is_cascade(line) and content_level(line) == "error"
    assert is_cascade("NCCL WARN Net : Call to recv from 10.0.0.7<41468> failed : Connection timed out")
    # nor is a socket it could not create (dev:nccl-tests-14)
    assert not is_cascade("include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol")
    # nor a port it could not bind (dev:mace-458), though a store it could not reach is
    assert not is_cascade("[c10d] The server socket has failed to bind to [::]:12355 (errno: 98 - Address already in "
                          "use).")
    assert is_cascade("DistNetworkError: The client socket has timed out after 1800s while trying to connect to (h, 2)")


def test_words_that_name_the_stage() -> None:
    from diagagent.analysis.logparse import stage_of_collective, stage_of_words

    assert stage_of_words("[rank4]: Warning: WARNING: destroy_process_group() was not called before program exit, "
                          "which can leak resources.") == "shutdown"
    assert stage_of_words("accelerate.accelerator - Saving current state to output_dir/checkpoint-6928") == "checkpoint"
    assert stage_of_words("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE)") is None
    assert stage_of_collective("WorkNCCL(SeqNum=808, OpType=ALLREDUCE)") == "training"
    assert stage_of_collective("WorkNCCL(SeqNum=1, OpType=BROADCAST)") == "init"
    assert stage_of_collective("WorkNCCL(SeqNum=42, OpType=ALLREDUCE)") is None
    # mmcv's EvalHook progress bar is an eval marker after training's epoch lines (dev:mmdetection-9759); Lightning's
    # sanity check is validation in words only: a marker line is not read as an error, and an error may be fused onto
    # its progress bar (dev:mlcommons-training-results-v4.0-8)
    from diagagent.analysis.logparse import marker_of
    assert stage_of_words("2025-12-12 07:53:41.561 INFO: Loading checkpoint: ./checkpoints/MACE_run-1_epoch-7.pt") == "init"
    assert stage_of_words("Building extension module scaled_upper_triang_masked_softmax_cuda...") == "init"
    assert stage_of_words("Synchronizing parameters for rank 0...") == "init"  # rsl_rl (dev:leggedlab-44)
    # a trainer constructed is setup; one that runs is training
    assert stage_of_words("TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'") == "init"
    assert stage_of_words("    trainer = SFTTrainer(") == "init"
    assert stage_of_words("    trainer.train(resume_from_checkpoint=None)") == "training"
    # the NVIDIA driver's words that a GPU did not come up: its probe routine's three lines joined, RmInitAdapter;
    # its run-time 'GPU has fallen off the bus' names no stage
    assert stage_of_words("[ 1843.3] NVRM: The NVIDIA GPU 0000:b3:00.0 NVRM: (PCI ID: 10de:26b5) installed in this "
                          "system has NVRM: fallen off the bus and is not responding to commands.") == "init"
    assert stage_of_words("NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)") == "init"
    assert stage_of_words("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.") is None
    # torchx's role prefix names no stage (dev:grl-image-restoration-27); the line's own words do
    torchx = "trainer/0 [1]:[E socket.cpp:610] [c10d] The client socket has failed to connect to any network address"
    assert stage_of_words(torchx) is None and stage_of_words("trainer/0 [0]:Loading checkpoint from /c") == "init"
    assert split_header(torchx).message.startswith("The client socket")
    assert marker_of("[>>>>>>>>>>>>>                    ] 6/15, 0.6 task/s, elapsed: 10s, ETA:    15s") == "eval_start"
    # a bar whose description names validation is eval, even after the epoch's name (dev:nscl-pytorch-release-23)
    assert marker_of("Epoch 15 (validation) validation/acc/qa=1.000000:   2%|#4     | 20/1094 [00:41<11:04,  "
                     "1.62it/s]") == "eval_start"
    # Ultralytics' validator bar (dev:ultralytics-1238); argparse rejecting the command line (dev:cpt-65)
    yolo_val = "Class     Images  Instances      Box(P          R      mAP50  mAP50-95):   0%|   | 0/21 [03:11<?, ?it/s]"
    assert marker_of(yolo_val) == "eval_start" and stage_of_words(yolo_val) == "eval"
    assert stage_of_words("train_adgen.py: error: unrecognized arguments: --local_rank=2") == "init"
    # torch.compile's graph compiles at the model's first call (dev:nnunet-2349); TensorFlow's Saver writing
    # (dev:deepspeech-374)
    assert stage_of_words("torch._dynamo.exc.BackendCompilerFailed: backend='compile_fn' raised:") == "training"
    assert stage_of_words("InternalError: Error writing (tmp) checkpoint file: /c/model.ckpt-6.temp: Resource "
                          "exhausted") == "checkpoint"
    fused = "Sanity Checking DataLoader 0:   0%|          | 0/2 [00:00<?, ?it/s][NeMo E 2024-10-06] Error while fetching"
    assert stage_of_words(fused) == "eval" and marker_of(fused) != "eval_start"


def test_the_step_a_saved_checkpoint_is_named_for() -> None:
    from diagagent.analysis.logparse import saved_step

    assert saved_step("[INFO:swift] Saving model checkpoint to /out/v5-20250208-084624/checkpoint-100") == 100
    assert saved_step("No such file or directory: 'model/tmp-checkpoint-49' -> 'model/checkpoint-49'") == 49
    assert saved_step("saving checkpoint at iteration 1000 to /ckpt/iter_0001000") == 1000
    assert saved_step("tensorflow - Saving checkpoints for 7200 into s3://bucket/checkpoints/model.ckpt.") == 7200
    assert saved_step("(WorkerDict pid=15039) [rank-6]: Saving extra_state to /ckpt/easy_r1/global_step_50/actor") == 50
    assert saved_step("FileExistsError: [Errno 17] File exists: '/ckpt/chw/30000.orbax-checkpoint-tmp-0'") == 30000
    assert saved_step("Saving current state to output_dir") is None


def test_a_bar_at_its_total_is_a_finished_loop() -> None:
    assert finished_bar("Train: 100%|##########| 742/742 [1:50:01<00:00,  8.90s/it]")  # dev:ms-swift-5109
    assert finished_bar("100%|##########| 50/50 [00:10<00:00,  5.00it/s]")
    assert not finished_bar("Train:  99%|######### | 741/742 [1:49:51<00:08,  8.90s/it]")
    assert not finished_bar("iteration 742/742 | loss 2.3")  # (a step count, not a bar)
    # a bar whose description carries the epoch's metrics, a step's time among them (dev:nscl-pytorch-release-23)
    epoch = ("Epoch 15 acc/qa=1.000000 loss=0.046158 time/data=0.008719 time/step=1.016501: 100%|#####| 1006/1006 "
             "[18:08<00:00,  1.08s/it]")
    assert finished_bar(epoch) and read_progress(epoch).iteration == 1006
    # a grad norm in a column with no colon (NeMo Automodel's, dev:automodel-1883)
    columns = read_progress("step 11 | loss 2.3224 | grad_norm     nan")
    assert (columns.iteration, columns.loss) == (11, 2.3224) and math.isnan(columns.grad_norm)


def test_an_error_printed_onto_a_progress_bar_is_the_error() -> None:
    # MPI's abort landed on tqdm's line before its newline (dev:netket-1494)
    assert level_after_bar("  0%|          | 0/1000 [00:00<?, ?it/s]r0 | MPI_Allreduce returned error code 15: "
                           "b'MPI_ERR_TRUNCATE: message truncated' - aborting") == "error"
    # at its own header's level: TensorFlow's fatal glog line after the bar (dev:accelerate-471)
    assert level_after_bar("  1%|#1        | 1/111 [00:06<12:12,  6.66s/it]2022-06-24 18:11:19.419635: F "
                           "tensorflow/core/tpu/kernels/tpu_program_group.cc:86] Check failed: "
                           "xla_tpu_programs.size() > 0 (0 vs. 0)") == "fatal"
    # a traceback's header there is explained by the lines after it, as is JAX's note before its filtered traceback
    # (dev:ttt-2, dev:easydel-78); nor is a bar alone, or the next bar on the line, an error
    assert level_after_bar("  0%|     | 0/16 [00:37<?, ?it/s]epochs:   0%|     | 0/6 [00:37<?, ?it/s]Traceback "
                           "(most recent call last):") is None
    assert level_after_bar("  0%|     | 0/12000 [00:00<?, ?it/s]jax.errors.SimplifiedTraceback: For simplicity, "
                           "JAX has removed its internal frames from the traceback of the following exception.") is None
    assert level_after_bar("Epoch 3:  45%|####5     | 450/1000 [01:00<01:13,  7.50it/s, loss=0.512, v_num=0]") is None


def test_a_bar_of_anything_but_training_is_no_progress() -> None:
    for line in ["Map: 100%|##########| 5000/5000 [00:01<00:00, 4000.00 examples/s]",
                 "Loading checkpoint shards:  50%|#####     | 1/2 [00:03<00:03,  3.10s/it]",
                 "Downloading data: 100%|##########| 10/10 [00:00<00:00]"]:
        assert marker_of(line) != "iteration"


@pytest.mark.parametrize(("line", "wait", "bound"), [  # each trainer's documented data time beside its step time
    ("Epoch(train)  [1][ 100/1000]  lr: 1.0e-04  time: 0.5123  data_time: 0.0123  loss: 2.3", (0.0123, 0.5123), False),
    ("Epoch [1][50/1000]\tlr: 1.0e-02, eta: 0:10:00, time: 0.512, data_time: 0.312, memory: 1234, loss: 2.3",
     (0.312, 0.512), True),  # MMCV's TextLoggerHook
    ("eta: 0:10:00  iter: 19  total_loss: 2.3  time: 0.4567  last_time: 0.4  data_time: 0.3123  last_data_time: 0.3",
     (0.3123, 0.4567), True),  # Detectron2's CommonMetricPrinter
    ("Epoch: [0][ 10/5005]\tTime  8.719 ( 0.456)\tData  8.501 ( 0.020)\tLoss 6.9", (8.501, 8.719), True),  # ImageNet
    (("Train: 0 [ 100/1251 (  8%)]  Loss: 6.9 (6.9)  Time: 0.512s,  500.00/s  (0.520s,  492.31/s)  LR: 1.000e-03  "
      "Data: 0.012 (0.015)"), (0.012, 0.512), False),  # timm
    ("ctdet/coco_dla |######    | train: [54][4784/14785]|Tot: 1:20:53 |loss 1.7448 |Data 3.556s(0.517s) |Net 1.014s",
     (3.556, 1.014), True),  # CenterNet (dev:centernet-604)
    (("ppcls INFO: [Train][Epoch 2/100][Iter: 500/1606]lr(LinearWarmup): 0.01574346, loss: 9.34407, batch_cost: "
      "20.16547s, reader_cost: 19.83207, ips: 12.69497 samples/s"), (19.83207, 20.16547), True),  # PaddleClas
    ("Data loaded at time 3.2; step 100 loss: 2.3", None, False),
])
def test_the_time_a_step_waits_on_its_data(line: str, wait: tuple[float, float] | None, bound: bool) -> None:
    assert data_wait(line) == wait
    assert data_bound(line) == (wait if bound else None)
