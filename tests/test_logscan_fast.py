"""The log scan's fast path (a block at once) gives exactly what reading every line one by one gives: the whole scan,
the log findings and the diagnosis, on simulated bundles, the hand-made cases and the real corpus's dev split."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from diagagent.analysis import logscan
from diagagent.analysis.events import findings_from_scan, host_names
from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.sim import simulate
from diagagent.telemetry import Bundle

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted(p for p in (ROOT / "evals" / "cases").iterdir() if (p / "logs").is_dir())
DEV = sorted(p for p in (ROOT / "evals" / "real" / "dev").iterdir() if (p / "logs").is_dir())
# a sample of the standard suite's faults (every category, the progress checks' triggers: NaN, loss spike, slowdown)
SIMULATED = [("gpu_ecc_uncorrectable", 4, 1), ("nan_loss_divergence", 2, 2), ("gpu_straggler", 4, 3),
             ("storage_checkpoint_write_failure", 2, 3), ("dataloader_corrupt_sample", 2, 1)]


def _scan(path: Path, fast: bool) -> tuple[logscan.LogScan, Bundle]:
    with Bundle.open(path) as bundle:
        scan = logscan.scan_bundle(bundle, workers=1, fast=fast)
    return scan, bundle


def _same_scan(path: Path) -> None:
    slow, bundle = _scan(path, False)
    fast, _ = _scan(path, True)
    a, f = dataclasses.asdict(slow), dataclasses.asdict(fast)
    assert [k for k in a if repr(a[k]) != repr(f[k])] == []  # (repr: NaN is not equal to itself)
    names = host_names(bundle)
    assert repr(findings_from_scan(slow, bundle.job.status, None, names)) == \
        repr(findings_from_scan(fast, bundle.job.status, None, names))


def _known_faults() -> set[str]:
    from diagagent.sim import FAULTS

    return set(FAULTS)


@pytest.mark.parametrize("case", CASES + DEV, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_scan_is_the_slow_scan_on_written_bundles(case: Path) -> None:
    _same_scan(case)


@pytest.mark.parametrize(("fault", "nodes", "seed"), SIMULATED)
def test_fast_scan_and_diagnosis_are_the_slow_ones_on_simulated_bundles(
        fault: str, nodes: int, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rank prints progress, and blocks are small (4 KiB), so runs of progress lines, tracebacks and pending
    times cross block boundaries many times."""
    assert fault in _known_faults()
    out = tmp_path / "bundle"
    simulate(out, fault, nodes, seed, minutes=15, every_rank_logs=True, compress=False)
    monkeypatch.setattr(logscan, "BLOCK_BYTES", 4096)
    blocks = []
    take = logscan._FileReader._fast_block
    monkeypatch.setattr(logscan._FileReader, "_fast_block",
                        lambda self, block, *a: blocks.append(len(block)) or take(self, block, *a))
    _same_scan(out)
    assert len(blocks) > 50 and sum(blocks) > 5_000  # the fast path did read blocks
    answers, read = [], []
    for fast in (False, True):
        before = len(blocks)
        with Bundle.open(out) as bundle:
            answers.append(diagnose(bundle, Settings.load(fast_scan=fast)).model_dump(mode="json"))
        read.append(len(blocks) - before)
    assert read[0] == 0 and read[1] > 50  # the setting passed to diagnose chose the path
    assert answers[0] == answers[1]


def test_the_setting_turns_the_fast_path_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "bundle"
    simulate(out, "gpu_ecc_uncorrectable", 2, 1, minutes=5, every_rank_logs=True, compress=False)
    blocks = []
    take = logscan._FileReader._fast_block
    monkeypatch.setattr(logscan._FileReader, "_fast_block",
                        lambda self, block, *a: blocks.append(len(block)) or take(self, block, *a))
    monkeypatch.setenv("DIAGAGENT_FAST_SCAN", "0")
    with Bundle.open(out) as bundle:
        logscan.scan_bundle(bundle, workers=1)
    assert blocks == []
    monkeypatch.delenv("DIAGAGENT_FAST_SCAN")
    with Bundle.open(out) as bundle:
        logscan.scan_bundle(bundle, workers=1)
    assert blocks


@pytest.mark.parametrize(("numbers", "by_column"), [
    (["2.315925E+00", "1.000000E+22"], True), (["9.999999E-01", "7.250000E-07"], True), (["  5998.2", "  6032.3"], True),
    (["41186", "00000", "99999"], True), (["-0.0", "-1.5", "-9.9"], True), (["0.1", "0.3"], True), (["5.", "7."], True),
    (["123456789012345", "999999999999999"], True), (["9.999999999999999E+22"], False), (["1.5e-30", "2.5e-30"], False),
    (["nan", "inf"], False), (["1_000", "2_000"], False), (["1234567890.123456", "9234567890.123456"], False),
])
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_a_progress_column_reads_as_float_reads_each_number(numbers: list[str], by_column: bool, compiled: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from diagagent.analysis import logblocks
    from diagagent.analysis.templates import SHAPE_TABLE
    from diagagent.telemetry.readers import LineBlock, compiled_lines

    rng = np.random.default_rng(7)
    texts = numbers + ["".join(str(rng.integers(10)) if c.isdigit() and "e" not in n[:i].lower() else c
                               for i, c in enumerate(n)) for n in numbers * 50]  # other digits, the same exponent
    block = LineBlock(b"\n".join(b"it | " + t.encode() + b" |" for t in texts))
    width = len(texts[0])
    one_by_one = []  # the numbers float() read, line by line
    monkeypatch.setattr(logblocks, "float", lambda text: one_by_one.append(text) or float(text), raising=False)
    shapes = np.array([t.encode().translate(SHAPE_TABLE) for t in texts])
    got = np.empty(len(texts))
    for shape in np.unique(shapes):  # (ShapeColumns reads the lines of one shape)
        rows = np.flatnonzero(shapes == shape)
        reader = logblocks.ShapeColumns(logblocks.line(block, int(rows[0])), [(5, 5 + width)])
        got[rows] = reader.read(block, rows, compiled_lines() if compiled else None)[0]
    want = np.array([float(t) for t in texts])
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))
    assert (one_by_one == []) == by_column


def _slow_job(tmp_path: Path, lines: list[str]) -> Path:
    """A one-node bundle of a slow job whose log is `lines`."""
    root = tmp_path / "b"
    (root / "logs" / "node-0").mkdir(parents=True)
    (root / "job.yaml").write_text('job_id: "3"\nframework: other\nstatus: slow\nnodes:\n  - {host: node-0}\n')
    (root / "logs" / "node-0" / "train.log").write_text("\n".join(lines) + "\n")
    return root


def test_a_slowdown_that_creeps_into_a_bars_smoothed_rate_is_found_from_where_it_began(tmp_path: Path) -> None:
    """tqdm's rate is a moving average: a node that turns slow at step 3131 shows as a rate that falls over several
    lines, no step 1.3x the one before it. Found from the step the fall began, alike by both paths."""
    rates = [1.02] * 31 + [0.97, 0.93, 0.88, 0.84, 0.79, 0.75, 0.70] + [0.69] * 33
    bars = [f"Epoch 0:  26%|##6       | {3100 + i}/12000 [50:{i % 60:02d}<2:25:25, {r:.2f}it/s, loss=2.548, v_num=3]"
            for i, r in enumerate(rates)]
    root = _slow_job(tmp_path, bars)
    _same_scan(root)
    scan, _ = _scan(root, True)
    assert scan.files[0].slow_from == 3131
    flat = root / "logs" / "node-0" / "train.log"  # a rate that only wobbles is no slowdown
    flat.write_text("\n".join(b.replace(f"{r:.2f}it/s", f"{1.02 - 0.04 * (i % 3):.2f}it/s")
                              for i, (b, r) in enumerate(zip(bars, rates, strict=True))) + "\n")
    assert _scan(root, True)[0].files[0].slow_from is None


def test_a_slow_jobs_longest_step_is_kept_alike_by_both_paths_and_read_for_its_data_wait(tmp_path: Path) -> None:
    """One batch stalls on its data (12.9 s, 12.5 s of it data) among 0.5 s steps: no lasting slowdown, but the
    longest step, which both paths keep, says a slow job's steps wait on their data."""
    def line(i: int, step: float, data: float) -> str:
        return (f"[05/20 15:24:40] eta: 0:05:32 - epoch: 5/20 - batch: {i}/300 - total_loss: 0.2648 - "
                f"time: {step:.4f} - data_time: {data:.4f} - lr: 0.009097")

    lines = [line(i, 12.9244, 12.4863) if i == 150 else line(i, 0.5 + 0.01 * (i % 7), 0.0067) for i in range(300)]
    root = _slow_job(tmp_path, lines)
    _same_scan(root)
    scan, _ = _scan(root, True)
    assert scan.files[0].slowest_step[:2] == (12.9244, 151) and scan.files[0].slow_from is None
    assert scan.files[0].first_slow_step[2] == 151  # (the first step well past the fastest before it, alike)
    with Bundle.open(root) as bundle:
        d = diagnose(bundle, Settings.load())
    assert d.fault == "input_pipeline_bound" and 151 in [e.line for e in d.evidence if e.role == "cause"]
