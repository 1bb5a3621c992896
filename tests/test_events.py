"""The L4 pipeline on hand-written bundles in real formats: causes vs the cascade, nodes, stage, iteration."""

from __future__ import annotations

import gzip
from pathlib import Path

from diagagent.analysis.events import analyze_logs, learn_job, normal_pool_for
from diagagent.analysis.templates import NormalPool
from diagagent.telemetry import Bundle
from tests import test_logs_fixtures as fx


def _analyze(root: Path, pool: NormalPool | None = None, workers: int | None = 1):
    with Bundle.open(root) as bundle:
        return analyze_logs(bundle, pool, workers=workers)


def test_ecc_root_error_ranks_first_on_its_node_and_the_timeouts_are_the_cascade(tmp_path: Path) -> None:
    f = _analyze(fx.ecc_cascade(tmp_path / "ecc"))
    causes = f.causes()
    assert causes[0].template == "RuntimeError: CUDA error: uncorrectable ECC error encountered"
    assert causes[0].first.file == "logs/node-003/rank-5.log" and causes[0].first.line == 12
    assert {c.first.host for c in causes} == {"node-003"}
    warn = [e for e in f.events if e.template.startswith("NCCL WARN Cuda failure")]
    # NCCL's own report of the CUDA error is a cause beside the exception: it says more than the exception repeats
    # (evals/cases/megatron-ecc-watchdog-cascade marks both)
    assert warn[0].role == "cause" and warn[0].first.host == "node-003"
    timeouts = [e for e in f.events if e.template.startswith("Watchdog caught collective operation timeout")]
    assert timeouts and timeouts[0].role == "symptom" and timeouts[0].host_count == 3
    frames = [e for e in f.events if e.template.startswith('File "<*>", line <*>')]
    assert frames and all(e.role == "context" for e in frames)
    assert f.nodes[0].host == "node-003"
    assert f.stage == "training"
    assert (f.last_good_iteration, f.first_abnormal_iteration) == (1200, 1201)
    assert "no history jobs: cross-job filtering skipped" in f.notes


def test_the_same_error_on_every_rank_at_init_is_the_cause_and_no_node_stands_out(tmp_path: Path) -> None:
    f = _analyze(fx.import_error(tmp_path / "imp"))
    assert f.causes()[0].template == "ModuleNotFoundError: No module named 'flash_attn'"
    assert f.causes()[0].host_count == 3
    assert f.stage == "init"
    assert f.first_abnormal_iteration is None and f.last_good_iteration is None
    assert f.nodes == []


def test_nan_loss_gives_the_first_nan_iteration_and_its_line(tmp_path: Path) -> None:
    f = _analyze(fx.nan_divergence(tmp_path / "nan"))
    assert f.first_abnormal_iteration == 2417 and f.last_good_iteration == 2416
    assert f.events[0].role == "cause" and f.events[0].id.startswith("metric:")
    assert f.events[0].first.file == "logs/node-a2/rank-3.log"
    assert "2417" in f.events[0].first.text
    kinds = {a.kind for a in f.metric_anomalies}
    assert {"nan_loss", "nan_grad_norm", "nan_iterations"} <= kinds
    assert f.stage == "training"


def test_a_failure_while_saving_is_in_the_checkpoint_stage(tmp_path: Path) -> None:
    f = _analyze(fx.checkpoint_failure(tmp_path / "ckpt"))
    assert f.stage == "checkpoint"
    assert f.causes()[0].template == "OSError: [Errno <*>] No space left on device"
    assert f.first_abnormal_iteration == 130


def test_the_node_that_went_silent_is_the_suspect_not_the_ones_that_timed_out(tmp_path: Path) -> None:
    f = _analyze(fx.node_crash(tmp_path / "crash"))
    assert f.nodes[0].host == "node-x4"
    assert any(r.startswith("lacks 2 of the 2 errors") for r in f.nodes[0].reasons)
    assert any("end" in r for r in f.nodes[0].reasons)
    assert not [e for e in f.causes() if "Watchdog" in e.template]
    assert f.first_abnormal_iteration == 561


def test_cross_job_filtering_demotes_what_successful_jobs_also_print(tmp_path: Path) -> None:
    fx.ecc_cascade(tmp_path / "jobs" / "42")
    fx.successful(tmp_path / "jobs" / "39")
    job = tmp_path / "jobs" / "42" / "job.yaml"
    job.write_text(job.read_text() + "history: ['39']\n")
    state = tmp_path / "state"
    with Bundle.open(tmp_path / "jobs" / "42") as bundle:
        pool, notes = normal_pool_for(bundle, state, tmp_path / "jobs", workers=1)
        assert pool is not None and "39" in pool.jobs
        assert any("learned 1 history job" in n for n in notes)
        f = analyze_logs(bundle, pool, workers=1)
    nccl = [e for e in f.events if e.template.startswith("NCCL INFO comm")]
    assert nccl and nccl[0].normal_share == 1.0 and nccl[0].role == "context"
    assert f.causes()[0].normal_share == 0.0
    assert "39" in NormalPool.load(state).jobs  # learned once, kept in the library
    again, notes = normal_pool_for(Bundle.open(tmp_path / "jobs" / "42"), state, tmp_path / "jobs")
    assert again is not None and not any("learned" in n for n in notes)


def test_history_that_cannot_be_found_is_a_note_not_a_failure(tmp_path: Path) -> None:
    root = fx.ecc_cascade(tmp_path / "42")
    (root / "job.yaml").write_text((root / "job.yaml").read_text() + "history: [nope]\n")
    with Bundle.open(root) as bundle:
        pool, notes = normal_pool_for(bundle, tmp_path / "state", tmp_path / "jobs")
    assert pool is None
    assert any("nope" in n for n in notes)


def test_learn_job_counts_templates(tmp_path: Path) -> None:
    pool = NormalPool()
    with Bundle.open(fx.successful(tmp_path / "ok")) as bundle:
        n = learn_job(pool, bundle, workers=1)
    assert n == len(pool.templates) >= 4
    assert pool.jobs["39"].lines > 0


def test_corrupt_lines_gzip_progress_bars_and_a_job_wide_log_are_read(tmp_path: Path) -> None:
    hosts = ["node-1", "node-2"]
    junk = bytes(range(128, 256)) * 2
    body = (b"[2026-11-20 08:00:01,000] [INFO] [megatron] building GPT model ...\n" + junk + b"\n"
            + " 5%|\u258c         | 50/1000 [00:30<09:30,  1.67it/s]\r 6%|\u258c         | 60/1000 [00:36<09:30,  "
              "1.67it/s]\n".encode()
            + b"RuntimeError: CUDA error: an illegal memory access was encountered\n")
    root = fx.write(tmp_path / "mix", {}, fx.job_yaml(hosts))
    (root / "logs" / "node-1").mkdir(parents=True)
    (root / "logs" / "node-1" / "rank-0.log.gz").write_bytes(gzip.compress(body))
    (root / "logs" / "slurm-918273.out").write_text(
        "0: [2026-11-20 08:00:02,000] [INFO] [megatron] building GPT model ...\n"
        "3: [2026-11-20 08:00:09,000] [ERROR] [megatron] rank 3 lost its NVLink peer\n"
        "0: [rank2]: RuntimeError: CUDA error: unspecified launch failure\n")  # srun's task 0 is a node's torchrun
    f = _analyze(root)
    assert f.lines_skipped == 1
    assert f.lines_read == 7
    assert f.hosts_with_logs == 2
    lost = [e for e in f.events if "NVLink peer" in e.template]
    assert lost and lost[0].first.host == "node-2" and lost[0].first.rank == 3
    launch = [e for e in f.events if "unspecified launch failure" in e.template]
    assert launch and launch[0].first.rank == 2  # torchrun's global rank, not srun's task id
    illegal = [e for e in f.events if "illegal memory access" in e.template]
    assert illegal and illegal[0].first.line == 4


def test_two_processes_find_what_one_finds(tmp_path: Path) -> None:
    root = fx.ecc_cascade(tmp_path / "ecc")
    one, two = _analyze(root, workers=1), _analyze(root, workers=2)
    assert [(e.id, e.role, e.count) for e in one.events] == [(e.id, e.role, e.count) for e in two.events]
    assert [n.host for n in one.nodes] == [n.host for n in two.nodes]


def test_no_logs_is_a_note(tmp_path: Path) -> None:
    root = fx.write(tmp_path / "empty", {}, fx.job_yaml(["a-1"]))
    f = _analyze(root)
    assert f.events == [] and f.nodes == [] and f.lines_read == 0
    assert "no logs in this bundle" in f.notes


def test_a_lasting_slowdown_gives_the_first_slow_iteration(tmp_path: Path) -> None:
    its, _ = fx.megatron_iterations(100, 160, 10, slow_from=137)
    root = fx.write(tmp_path / "slow", {"logs/n-1/rank-0.log": its}, fx.job_yaml(["n-1"], status="slow", gpus=1))
    f = _analyze(root)
    assert f.slow_from_iteration == 137
    assert (f.last_good_iteration, f.first_abnormal_iteration) == (136, 137)


def test_a_slowdown_that_lasts_to_the_end_of_a_short_log_is_found_and_its_first_slow_step_located(tmp_path: Path,
                                                                                                  ) -> None:
    """pytorch/examples' ImageNet meter: 0.17 s batches, then 8.7 s from batch 100 to the paste's end, only three
    slow lines (dev:dali-2608)."""
    times = [0.414, 0.200, 0.170, 0.169, 0.168, 8.719, 8.955, 8.576]
    log = "".join(f"Epoch: [1][{20 * i}/5005]\tTime {t:.3f} (0.400)\tData 0.045 (0.040)\tLoss 1.2701 (1.0801)\n"
                  for i, t in enumerate(times))
    root = fx.write(tmp_path / "slow", {"logs/n-1/stdout.log": log}, fx.job_yaml(["n-1"], status="slow", gpus=1))
    f = _analyze(root)
    assert (f.slow_from_iteration, f.first_abnormal_iteration) == (100, 100)
    slow = [m for m in f.metric_anomalies if m.kind == "step_time_slowdown"]
    assert slow and slow[0].location.line == 6 and slow[0].iteration == 100
    one_slow_line = fx.write(tmp_path / "blip", {"logs/n-1/stdout.log": "".join(log.splitlines(True)[:6])},
                             fx.job_yaml(["n-1"], status="slow", gpus=1))
    assert _analyze(one_slow_line).slow_from_iteration is None  # one slow step at the end is no lasting slowdown


def test_an_oom_in_the_first_step_after_a_resume_is_training_at_the_next_iteration(tmp_path: Path) -> None:
    hosts = ["dgx-1", "dgx-2"]
    files = {}
    for i, host in enumerate(hosts):
        rank = i
        files[f"logs/{host}/rank-{rank}.log"] = (
            f"[{fx.ts(5)}] [INFO] [engine.py:3127:_load_checkpoint] rank={rank} loading checkpoint "
            "/ckpt/7/global_step5100\n"
            f"[rank{rank}]: Traceback (most recent call last):\n"
            f'[rank{rank}]:   File "/workspace/train.py", line 287, in main\n'
            f"[rank{rank}]:     loss = engine(batch)\n"
            f'[rank{rank}]:   File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1747, in forward\n'
            f"[rank{rank}]:     return forward_call(*args, **kwargs)\n"
            f"[rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU {rank} has a "
            "total capacity of 79.15 GiB of which 1.96 GiB is free.\n")
    f = _analyze(fx.write(tmp_path / "oom", files, fx.job_yaml(hosts, gpus=1, framework="deepspeed")))
    assert f.causes()[0].template.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert f.stage == "training"
    assert (f.last_good_iteration, f.first_abnormal_iteration) == (5100, 5101)


def test_chained_exceptions_are_both_causes_and_their_details_too(tmp_path: Path) -> None:
    body = (f"[{fx.ts(1)}] [INFO] [megatron] building GPT model ...\n"
            "[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "/w/megatron/checkpointing.py", line 1124, in load_checkpoint\n'
            "[rank0]:     model[0].load_state_dict(state_dict['model'], strict=strict)\n"
            "[rank0]: RuntimeError: Error(s) in loading state_dict for GPTModel:\n"
            "[rank0]: \tsize mismatch for decoder.layers.0.weight: copying a param with shape torch.Size([1920, "
            "12288]) from checkpoint, the shape in current model is torch.Size([3840, 12288]).\n"
            "[rank0]: OSError: [Errno 5] Input/output error: '/ckpt/iter_0001000/__0_0.distcp'\n")
    f = _analyze(fx.write(tmp_path / "chain", {"logs/n-1/rank-0.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    cited = {e.first.line for e in f.causes()}
    assert {5, 6, 7} <= cited
    assert f.stage == "init"


def test_a_job_that_only_slowed_cites_no_cause_from_benign_warnings(tmp_path: Path) -> None:
    hosts = [f"n-{i}" for i in range(6)]
    its, _ = fx.megatron_iterations(100, 160, 10, slow_from=140)
    files = {f"logs/{h}/rank-{i}.log": nccl_lines for i, h in enumerate(hosts)
             for nccl_lines in [fx.nccl_init(h, i, 1.0)]}
    files["logs/n-5/rank-5.log"] += its
    files["logs/n-2/rank-2.log"] += "n-2:4002:4102 [0] NCCL WARN NET/IB : Got async event : GID table change\n"
    f = _analyze(fx.write(tmp_path / "slow", files, fx.job_yaml(hosts, gpus=1, status="slow")))
    assert f.causes() == []
    assert f.first_abnormal_iteration == 140


def test_an_endless_line_is_cut_and_the_lines_after_it_keep_their_numbers(tmp_path: Path, monkeypatch) -> None:
    from diagagent.analysis import logscan

    monkeypatch.setattr(logscan, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(logscan, "BLOCK_BYTES", 256)
    body = ("first line\n" + "x" * 5000 + "\n" + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    f = _analyze(fx.write(tmp_path / "long", {"logs/n-1/rank-0.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    assert f.lines_read == 3
    assert f.causes()[0].first.line == 3
    assert any("longer than 1000 bytes" in n for n in f.notes)


def test_an_exception_without_an_error_word_in_its_name_ends_its_traceback_as_an_error(tmp_path: Path) -> None:
    # a DataLoader worker's exception re-raised in the main process: both exception lines are the cause
    body = (f"[{fx.ts(1)}] [INFO] [megatron] building GPT model ...\n"
            "[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/torch/_utils.py", line 705, in reraise\n'
            "[rank0]:     raise exception\n"
            "[rank0]: pyarrow.lib.ArrowInvalid: Caught ArrowInvalid in DataLoader worker process 2.\n"
            "[rank0]: Original Traceback (most recent call last):\n"
            '[rank0]:   File "/workspace/data/parquet_dataset.py", line 77, in __iter__\n'
            '[rank0]:     table = pq.read_table(path, columns=["input_ids"])\n'
            "[rank0]: pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer. Either the file is corrupted "
            "or this is not a parquet file.\n")
    f = _analyze(fx.write(tmp_path / "arrow", {"logs/n-1/rank-0.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    caught = [e for e in f.events if e.first.line == 5]
    assert caught and caught[0].level == "error" and caught[0].role == "cause"
    assert 9 in {e.first.line for e in f.causes()}


def test_megatrons_straggler_report_names_the_slow_rank_once_it_falls_behind(tmp_path: Path) -> None:
    def progress(it: int, ms: float) -> str:
        return (f"[2026-12-01 00:{it % 60:02d}:00]  iteration     {it}/  500000 | consumed samples:     {it * 1024} | "
                f"elapsed time per iteration (ms): {ms} | learning rate: 2.812E-04 | lm loss: 2.0259E+00 |\n")

    def report(mx: float, rank: int) -> str:
        return (f"[2026-12-01 00:30:00]  | MnRtt/Rnk: 4071.2ms/3 | MxRtt/Rnk: {mx}ms/{rank} | MnPwr/Rnk: 291003mW/19 | "
                "MxPwr/Rnk: 699870mW/2 | MnTmp/Rnk: 55C/2 | MxTmp/Rnk: 91C/19 | MnClk/Rnk: 1005MHz/19 | "
                "MxClk/Rnk: 1980MHz/1\n")

    body = (progress(1, 4100.0) + report(4112.8, 12) + progress(2, 4100.0) + report(5890.1, 19)
            + progress(3, 5900.0) + report(5891.0, 19))
    f = _analyze(fx.write(tmp_path / "strag", {"logs/n-1/rank-0.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    slow = [a for a in f.metric_anomalies if a.kind == "straggler_rank"]
    assert len(slow) == 1 and slow[0].location.line == 4 and slow[0].value == 5890.1 and slow[0].previous == 4071.2
    assert slow[0].iteration == 2


def test_the_first_metric_anomaly_is_the_non_finite_value_not_the_spike_before_it(tmp_path: Path) -> None:
    def line(step: int, loss: str, grad: str) -> str:
        return (f"\r 46%|####      | {step}/4704 [5:09:12<5:50:16,  8.43s/it]{{'loss': {loss}, 'grad_norm': {grad}, "
                "'learning_rate': 1.2e-05, 'epoch': 0.47}\n")

    body = "".join(line(s, "2.0300", "0.9") for s in range(2200, 2205)) + line(2205, "2.0300", "9.3000") \
        + "".join(line(s, "nan", "nan") for s in range(2206, 2209))
    f = _analyze(fx.write(tmp_path / "hf", {"logs/n-1/stdout.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    kinds = [a.kind for a in f.metric_anomalies]
    assert "grad_norm_jump" in kinds and kinds[0].startswith("nan_")


def test_a_loss_printed_by_epoch_without_a_step_is_progress_and_its_nan_the_cause(tmp_path: Path) -> None:
    # a script's own print, as in dev:gradnorm-tf-17 ("epoch: 3451 loss: nan"): no step word, no timestamps
    body = "".join(f"epoch: {i} loss: {0.21 - i * 1e-5:.6f}\n" for i in range(3440, 3451))
    body += "".join(f"epoch: {i} loss: nan\n" for i in range(3451, 3455))
    f = _analyze(fx.write(tmp_path / "epochs", {"logs/n-1/stdout.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    assert f.events[0].role == "cause" and f.events[0].first.line == 12
    assert f.stage == "training"


def test_a_rich_traceback_panel_gives_its_frames_stage_and_raising_frame(tmp_path: Path) -> None:
    # rich.traceback's panel (rich 13-15, as `accelerate launch` prints it with rich installed: dev:accelerate-1192)
    body = ("step 120 loss 2.31\n"
            "╭──────────────────── Traceback (most recent call last) ─────────────────────╮\n"
            "│ /workspace/train.py:88 in save_checkpoint                                  │\n"
            "│                                                                            │\n"
            "│   87 │   state = {'model': model.state_dict()}                             │\n"
            "│ ❱ 88 │   torch.save(state, path)                                           │\n"
            "│   89                                                                       │\n"
            "│                                                                            │\n"
            "│ /usr/lib/python3.10/site-packages/torch/serialization.py:651 in save       │\n"
            "│                                                                            │\n"
            "│   650 │   with _open_zipfile_writer(f) as opened_zipfile:                  │\n"
            "│ ❱ 651 │   │   _save(obj, opened_zipfile, pickle_module, pickle_protocol)   │\n"
            "╰────────────────────────────────────────────────────────────────────────────╯\n"
            "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 128 vs 64\n")
    f = _analyze(fx.write(tmp_path / "rich", {"logs/n-1/stdout.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    cause = f.causes()[0]
    assert cause.first.line == 14
    assert cause.raised_at is not None and cause.raised_at.line == 3  # the job's own frame, not torch's
    assert f.stage == "checkpoint"
    assert not any(e.role == "cause" and e.first.line in (5, 6, 12, 13) for e in f.events)  # source and borders


def test_pytorchs_cuda_advice_and_a_bare_restatement_are_not_causes_beside_the_exception(tmp_path: Path) -> None:
    # a paste that begins inside one traceback's message and holds the next exception whole (dev:self-rag-91);
    # the advice lines are PyTorch's documented suffix of every CUDA error
    advice = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
              "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
              "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    body = ("CUDA error: device-side assert triggered\n" + advice + "\n\n"
            "RuntimeError: CUDA error: device-side assert triggered\n" + advice)
    f = _analyze(fx.write(tmp_path / "dsa", {"logs/n-1/stdout.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    assert [e.first.line for e in f.causes()] == [7]


def test_stack_dumps_printed_into_a_log_say_where_each_main_thread_was(tmp_path: Path) -> None:
    # py-spy dump's documented text output, pasted into a hung job's log: one rank waits in all_reduce, one in the
    # DataLoader; and Python's faulthandler ("[rank0]:Thread 0x... (most recent call first):", dev:torchtitan-168)
    pyspy = ("step 520 | loss 2.0087 | 1.93 s/it\n"
             "Process 3121: python -u train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\n"
             'Thread 3121 (active): "MainThread"\n'
             "    wait (threading.py:320)\n    all_reduce (torch/distributed/distributed_c10d.py:2050)\n"
             "    train_step (train.py:141)\n"
             'Thread 3190 (idle): "Thread-2"\n    wait (threading.py:320)\n'
             "Process 3122: python -u train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\n"
             'Thread 3122 (active): "MainThread"\n'
             "    _recv (multiprocessing/connection.py:379)\n    __next__ (torch/utils/data/dataloader.py:631)\n"
             "    train_step (train.py:128)\n")
    faulthandler = ("[rank0]:Thread 0x00007f07a6ffd640 (most recent call first):\n"
                    '[rank0]:  File "/usr/lib/python3.11/threading.py", line 324 in wait\n'
                    "[rank0]:\n"
                    "[rank0]:Thread 0x00007f13c65f5400 (most recent call first):\n"
                    '[rank0]:  File "/venv/lib/python3.11/site-packages/torch/distributed/checkpoint/'
                    'state_dict_saver.py", line 150 in save\n'
                    '[rank0]:  File "/w/train.py", line 301 in train\n')
    f = _analyze(fx.write(tmp_path / "dumps", {"logs/n-1/stdout.log": pyspy, "logs/n-2/stdout.log": faulthandler},
                          fx.job_yaml(["n-1", "n-2"], gpus=1, status="hung")))
    where = [(d.file, d.line) for d in f.thread_dumps]
    assert where == [("logs/n-1/stdout.log", 7), ("logs/n-1/stdout.log", 16), ("logs/n-2/stdout.log", 5)]
    assert not any(e.role == "cause" and e.first.line in (3, 4) for e in f.events)  # the blank "[rank0]:" included


def test_a_faulthandler_dump_alone_gives_the_stage_from_its_frames(tmp_path: Path) -> None:
    body = ("Fatal Python error: Aborted\n\nCurrent thread 0x00007efe708b0740 (most recent call first):\n"
            '  File "/w/train.py", line 88 in save_checkpoint\n  File "/w/train.py", line 166 in train\n')
    f = _analyze(fx.write(tmp_path / "fh", {"logs/n-1/stdout.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    assert f.thread_dumps[0].line == 4
    assert f.stage == "checkpoint"


def test_a_cpp_terminate_ends_in_its_what_line_and_a_loss_by_batch_is_the_last_activity(tmp_path: Path) -> None:
    # libstdc++'s documented abort message under ProcessGroupNCCL's (dev:deepspeed-2931); CosyVoice's per-batch
    # print (dev:cosyvoice-517) and T5X's "Training: step N" (dev:architecture-objective-26) are progress
    body = ("2024-10-18 20:48:27,683 DEBUG TRAIN Batch 15/37700 loss 1.543046 acc 0.267136 lr 0.00055927\n"
            "[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.\n"
            "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  NCCL error: unhandled system error, NCCL version 2.14.3\n")
    f = _analyze(fx.write(tmp_path / "what", {"logs/n-1/stdout.log": body}, fx.job_yaml(["n-1"], gpus=1)))
    assert f.causes()[0].first.line == 4 and f.causes()[0].level == "error"
    assert f.last_progress is not None and f.last_progress.line == 1
    t5x = "I1115 16:00:39.451283 140065933160448 trainer.py:501] Training: step 198\nE1115 boom: coordination error\n"
    g = _analyze(fx.write(tmp_path / "t5x", {"logs/n-1/stdout.log": t5x}, fx.job_yaml(["n-1"], gpus=1)))
    assert g.last_progress is not None and g.last_progress.line == 1 and g.first_abnormal_iteration == 199


def test_the_not_utf8_note_counts_only_lines_that_hold_such_bytes() -> None:
    """Issue 18 item 6: job-42 said '3 cited line(s) hold bytes that are not UTF-8' when none of the cited lines did.
    The note now names each line it counts, and each of them really holds bytes that are not UTF-8."""
    import re

    import pytest

    root = Path(__file__).parent.parent / "examples" / "job-42"
    f = analyze_logs(Bundle.open(root), None, workers=1)
    [note] = [n for n in f.notes if "not UTF-8" in n]
    m = re.match(r"(\d+) of the log events' lines hold bytes that are not UTF-8, shown as \ufffd \((.*)\)$", note)
    assert m, note
    places = [p.rsplit(":", 1) for p in m.group(2).split(", ")]
    assert int(m.group(1)) == len(places)
    for file, line in places:
        path = root / file
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        raw = data.split(b"\n")[int(line) - 1]
        with pytest.raises(UnicodeDecodeError):
            raw.decode("utf-8")


def test_ranks_read_off_horovod_mpirun_and_ray_prefixes(tmp_path: Path) -> None:
    """horovodrun's "[2]<stderr>:" (dev:pytorch-lightning-5155), mpirun's "[1,3]<stdout>:", a Ray actor's
    "(Worker[rank=1] pid=...)" and Determined's "[rank=5] " (dev:determined-4297) name a global rank; the Ray prefix
    is peeled so its traceback reads as one, and an exception in a job-wide log keeps the frame that raised it."""
    hosts = ["node-1", "node-2"]
    root = fx.write(tmp_path / "pre", {}, fx.job_yaml(hosts))
    (root / "logs").mkdir(exist_ok=True)
    (root / "logs" / "horovod.log").write_text(
        "[0]<stdout>:epoch 1\n[2]<stderr>:Traceback (most recent call last):\n"
        '[2]<stderr>:  File "/job/train.py", line 9, in <module>\n[2]<stderr>:ValueError: bad shard 7\n')
    (root / "logs" / "mpi.log").write_text("[1,0]<stdout>:epoch 1\n[1,3]<stdout>:KeyError: 'label'\n")
    (root / "logs" / "det.log").write_text("[rank=0] epoch 1\n[rank=5] RuntimeError: ProcessGroupNCCL is only "
                                          "supported with GPUs, no GPUs found!\n")
    (root / "logs" / "ray.log").write_text(
        "(Worker[rank=1] pid=42, ip=10.0.0.2) Traceback (most recent call last):\n"
        '(Worker[rank=1] pid=42, ip=10.0.0.2)   File "/job/rl.py", line 5, in step\n'
        "(Worker[rank=1] pid=42, ip=10.0.0.2) ZeroDivisionError: division by zero\n")
    f = _analyze(root)
    rank = {e.template.split(":")[0]: e.first.rank for e in f.events if "Error" in e.template}
    assert rank == {"ValueError": 2, "KeyError": 3, "ZeroDivisionError": 1, "RuntimeError": 5}
    ray = next(e for e in f.events if e.template.startswith("ZeroDivisionError"))
    assert ray.raised_at is not None and ray.raised_at.line == 2


def _text(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def _megatron(first: int, last: int, minute: int = 3) -> list[str]:
    return [f" [2026-11-21 06:{minute + (it - first) // 15:02d}:{(it - first) * 4 % 60:02d}] iteration {it:8d}/"
            f"  300000 | elapsed time per iteration (ms): 3646.2 | lm loss: 2.710795E+00 |"
            for it in range(first, last + 1)]


def _two_hosts(framework: str) -> str:
    return (f'job_id: "9"\nframework: {framework}\nstatus: failed\nnodes:\n  - {{host: a, ranks: [0]}}\n'
            "  - {host: b, ranks: [1]}\n")


def test_a_save_that_ends_with_no_start_leaves_the_job_training_and_a_rank_with_no_steps_trained_with_it(
        tmp_path: Path) -> None:
    # Megatron-LM prints only ' saved checkpoint from iteration N' (no start of the save); one node's file logs no
    # step of its own, and its startup words came long before the kill
    steps = _megatron(6501, 6520)
    saved = " [2026-11-21 06:03:45] saved checkpoint from iteration    6510 to /ckpt [ t 1/8, p 1/2 ]"
    files = {
        "logs/a/out.log": _text("gpu-a:1:1 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>", "training ...",
                                *steps[:10], saved, *steps[10:]),
        "logs/b/out.log": _text("gpu-b:1:1 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.2<0>", saved,
                                "slurmstepd: error: Detected 1 oom_kill event in StepId=88124.0. Some of the step "
                                "tasks have been OOM Killed."),
    }
    f = _analyze(fx.write(tmp_path / "save", files, _two_hosts("megatron")))
    assert f.causes()[0].first.file == "logs/b/out.log"
    assert f.stage == "training"


def test_a_rank_with_no_steps_of_its_own_failing_after_its_save_words_is_in_checkpoint(tmp_path: Path) -> None:
    # NeMo's non-zero ranks print no progress: the save's words after the error, not the startup's before it, say
    # where the job was (incident nemo-default-prefix-lustre-evict-ckpt-eio-4node's shape)
    files = {
        "logs/a/out.log": _text("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2", *_megatron(4001, 4020)),
        "logs/b/out.log": _text(
            "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3/dist-packages/megatron/core/dist_checkpointing/strategies/filesystem_async.py", '
            "line 278, in write_preloaded_data",
            '    with open(file_name, "wb") as stream:',
            "OSError: [Errno 5] Input/output error: '/lustre/ckpt/step=4020/__1_0.distcp'",
            "[rank1]: Traceback (most recent call last):",
            '[rank1]:   File "/opt/NeMo/nemo/lightning/pytorch/callbacks/model_checkpoint.py", line 432, in '
            "_save_checkpoint",
            "[rank1]:     trainer.save_checkpoint(ckpt_filepath)"),
    }
    f = _analyze(fx.write(tmp_path / "nemo", files, _two_hosts("nemo")))
    assert f.causes()[0].first.file == "logs/b/out.log" and f.causes()[0].first.line == 5
    assert f.stage == "checkpoint"


def test_a_model_running_under_an_evaluation_is_in_eval_and_a_wrap_broadcasting_weights_is_init(tmp_path: Path) -> None:
    job = 'job_id: "9"\nframework: ray\nstatus: failed\nnodes:\n  - {host: a, ranks: [0]}\n'
    steps = [f"2026-11-27 11:{m:02d}:00,000 INFO step {s} | loss 0.70" for m, s in enumerate(range(1950, 2001, 50))]
    crash = ["Traceback (most recent call last):",
             '  File "/mnt/code/vit_ft.py", line 171, in train_func', "    logits = model(images)",
             '  File "/usr/lib/python3/site-packages/timm/models/vision_transformer.py", line 853, in forward',
             "    x = self.forward_features(x)", "RuntimeError: CUDA error: unknown error",
             "2026-11-27 11:16:04,102 ERROR worker died"]
    files = {"logs/a/out.log": _text(*steps, "2026-11-27 11:05:00,000 INFO step 2000 done; running evaluation", *crash)}
    assert _analyze(fx.write(tmp_path / "eval", files, job)).stage == "eval"
    wrap = ["Traceback (most recent call last):",
            '  File "/home/ray/train_llm.py", line 96, in train_loop_per_worker',
            '    model = ray.train.torch.prepare_model(model, parallel_strategy="fsdp")',
            ('  File "/usr/lib/python3/site-packages/torch/distributed/fsdp/_init_utils.py", line 650, in '
             "_sync_module_params_and_buffers"), "    _sync_params_and_buffers(",
            '  File "/usr/lib/python3/site-packages/torch/distributed/utils.py", line 315, in _sync_params_and_buffers',
            "    dist._broadcast_coalesced(",
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:2006, internal error"]
    assert _analyze(fx.write(tmp_path / "wrap", {"logs/a/out.log": _text(*wrap)}, job)).stage == "init"


def test_the_one_node_that_prints_a_set_up_line_unlike_the_others_is_an_odd_one_out(tmp_path: Path) -> None:
    hosts = ["gn-01", "gn-02", "gn-03", "gn-04"]
    nodes = "".join(f"  - {{host: {h}, ranks: [{i}], ip: 10.9.0.1{i}}}\n" for i, h in enumerate(hosts))
    job = f'job_id: "9"\nframework: lightning\nstatus: failed\nnodes:\n{nodes}'
    files = {}
    for i, h in enumerate(hosts):
        ifname, ip = ("docker0", "172.17.0.1") if h == "gn-04" else ("ib0", f"10.9.0.1{i}")
        files[f"logs/{h}/rank-{i}.log"] = _text(
            f"{h}:5210{i}:5210{i} [0] NCCL INFO Bootstrap : Using {ifname}:{ip}<0>",
            f"{h}:5210{i}:5216{i} [0] NCCL INFO ncclCommInitRank comm 0x55d1c8a3e2f{i} rank {i} nranks 4 busId "
            f"{['18000', '3b000', '86000', 'af000'][i]} - Init START",
            f"{h}:5210{i}:5216{i} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB {ifname}:{ip}<0>")
    odd = _analyze(fx.write(tmp_path / "odd", files, job)).odd_ones_out
    # the bus ids and pointers differ from node to node by design; the interface differs on gn-04 alone
    assert [(o.odd.host, o.odd.line, o.alike) for o in odd] == [("gn-04", 1, 3), ("gn-04", 3, 3)]
    assert odd[0].instead == "ib0:10.9.0.10<0>"


def test_a_line_a_ray_driver_repeats_is_cited_from_the_workers_own_file(tmp_path: Path) -> None:
    # Ray's driver log repeats each worker's output under its '(RayTrainWorker pid=..., ip=...)' prefix, with the
    # deduplication trailer '[repeated 7x across cluster]' on lines its workers printed alike
    job = ('job_id: "9"\nframework: ray\nstatus: slow\nnodes:\n  - {host: ray-a, ranks: [0], ip: 10.20.1.11}\n'
           "  - {host: ray-c, ranks: [1], ip: 10.20.1.13}\n")
    files = {
        "logs/ray-a/job-driver.log": _text(
            "(RayTrainWorker pid=30100, ip=10.20.1.11) ray-a:30100:30312 [0] NCCL INFO Using network IB",
            "(RayTrainWorker pid=30301, ip=10.20.1.13) ray-c:30301:30519 [1] NCCL INFO NET/IB : No device found. "
            "[repeated 7x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log "
            "deduplication.)",
            "(RayTrainWorker pid=30300, ip=10.20.1.13) ray-c:30300:30512 [0] NCCL INFO Using network Socket"),
        "logs/ray-c/worker-30300.out": _text(
            "ray-c:30300:30300 [0] NCCL INFO Bootstrap : Using eth0:10.20.1.13<0>",
            "ray-c:30300:30512 [0] NCCL INFO NET/IB : No device found.",
            "ray-c:30300:30512 [0] NCCL INFO Using network Socket"),
    }
    f = _analyze(fx.write(tmp_path / "ray", files, job))
    cited = {e.template: (e.first.file, e.first.line) for e in f.events}
    assert cited["NCCL INFO NET/IB : No device found."] == ("logs/ray-c/worker-30300.out", 2)
    assert cited["NCCL INFO Using network Socket"] == ("logs/ray-c/worker-30300.out", 3)
