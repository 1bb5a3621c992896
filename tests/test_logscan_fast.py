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


def _scan(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[logscan.LogScan, Bundle]:
    made = logscan.ScanJob
    monkeypatch.setattr(logscan, "ScanJob", lambda *a, **k: made(*a, **k, fast=fast))
    with Bundle.open(path) as bundle:
        scan = logscan.scan_bundle(bundle, workers=1)
    monkeypatch.setattr(logscan, "ScanJob", made)
    return scan, bundle


def _same_scan(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow, bundle = _scan(path, False, monkeypatch)
    fast, _ = _scan(path, True, monkeypatch)
    a, f = dataclasses.asdict(slow), dataclasses.asdict(fast)
    assert [k for k in a if repr(a[k]) != repr(f[k])] == []  # (repr: NaN is not equal to itself)
    names = host_names(bundle)
    assert repr(findings_from_scan(slow, bundle.job.status, None, names)) == \
        repr(findings_from_scan(fast, bundle.job.status, None, names))


def _known_faults() -> set[str]:
    from diagagent.sim import FAULTS

    return set(FAULTS)


@pytest.mark.parametrize("case", CASES + DEV, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_scan_is_the_slow_scan_on_written_bundles(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_scan(case, monkeypatch)


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
    _same_scan(out, monkeypatch)
    assert len(blocks) > 50 and sum(blocks) > 5_000  # the fast path did read blocks
    answers = []
    for fast in (False, True):
        with Bundle.open(out) as bundle:
            answers.append(diagnose(bundle, Settings.load(fast_scan=fast)).model_dump(mode="json"))
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
