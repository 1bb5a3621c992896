"""The analyzers' file work in chunks, in worker processes and on a local Ray instance: the same findings and the
same diagnosis as one reader in this process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from diagagent.analysis.logscan import scan_bundle
from diagagent.analysis.workers import Workers
from diagagent.config import Settings
from diagagent.diagnosis import Analyses, diagnose
from diagagent.sim import simulate
from diagagent.telemetry import Bundle
from tests import test_logs_fixtures as fx


@pytest.fixture(scope="module")
def hang(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small incident with logs, flows, stacks and probes on 6 nodes."""
    out = tmp_path_factory.mktemp("sim") / "hang"
    simulate(out, "gpu_hang", 6, 3, gpus_per_node=2, minutes=8)
    return out


def _diagnosis(root: Path, state: Path, workers: Workers | None) -> tuple[dict, Analyses]:
    settings = Settings.load(state_dir=state)
    with Bundle.open(root) as bundle:
        analyses = Analyses(bundle, settings)
        if workers is not None:
            analyses.workers = workers  # (cached_property: set before the first use)
        d = diagnose(bundle, settings, analyses=analyses)
        issues = [str(i) for i in bundle.issues]
    return {"diagnosis": d.model_dump(mode="json"), "issues": issues}, analyses


def test_chunks_read_in_processes_are_the_chunks_read_here(tmp_path: Path) -> None:
    """The chunks depend on the bundle, not on where they are read: every template, count, first occurrence and
    file summary is the same from two processes as from this one."""
    root = fx.ecc_cascade(tmp_path / "ecc")
    with Bundle.open(root) as b, Workers(1, min_bytes=0) as here:
        one = scan_bundle(b, runner=here)
        assert len(b.log_files) > 2
    with Bundle.open(root) as b, Workers(2, min_bytes=0) as pool:
        two = scan_bundle(b, runner=pool)
        assert pool._pool is not None
    assert one == two
    assert one.templates and one.files


def test_chunks_find_what_one_reader_finds(tmp_path: Path) -> None:
    """Consecutive files per chunk, mined in the order one reader meets them, lines that name a stage kept at the
    first of their shape in the bundle: everything is as one reader of the whole bundle finds it."""
    root = fx.ecc_cascade(tmp_path / "ecc")
    with Bundle.open(root) as b:
        one = scan_bundle(b, workers=1)
    with Bundle.open(root) as b, Workers(1, min_bytes=0) as here:
        cut = scan_bundle(b, runner=here)
    assert one == cut


def test_every_analyzer_in_worker_processes_gives_the_same_diagnosis(hang: Path, tmp_path: Path) -> None:
    alone, _ = _diagnosis(hang, tmp_path / "a", Workers(1))
    with Workers(2, min_bytes=0) as pool:  # past any size: the probes, stacks and logs go to the processes
        pooled, analyses = _diagnosis(hang, tmp_path / "b", pool)
    assert set(analyses.timings) >= {"logs", "health", "stacks", "flows"}
    assert pooled == alone
    assert alone["diagnosis"]["fault"] == "gpu_hang"


def test_logs_in_a_process_of_their_own_give_the_same_diagnosis(hang: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Logs too few to cut into chunks but enough to pay for a process run whole beside the other analyzers."""
    from diagagent.diagnosis import analyses as analyses_module

    alone, _ = _diagnosis(hang, tmp_path / "a", Workers(1))
    monkeypatch.setattr(analyses_module, "LOGS_BESIDE_BYTES", 0)
    with Workers(2) as pool:
        beside, analyses = _diagnosis(hang, tmp_path / "b", pool)
        assert analyses._logs_beside()
    assert beside == alone


def test_a_small_bundle_starts_no_process(hang: Path) -> None:
    pool = Workers(4)
    with Bundle.open(hang) as b:
        scan_bundle(b, runner=pool)
    assert pool._pool is None


RAY_RUN = """
import json, sys
from pathlib import Path
import ray
from diagagent.analysis.workers import RayWorkers
from tests.test_workers import _diagnosis
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
bundle, state = Path(sys.argv[1]), Path(sys.argv[2])
small, cut = RayWorkers("local"), RayWorkers("local", min_bytes=0)  # Ray is up: used as it is
out = {"small": _diagnosis(bundle, state / "small", small)[0], "cut": _diagnosis(bundle, state / "cut", cut)[0],
       "cpus": small.count, "small_tasks": small.tasks, "cut_tasks": cut.tasks}
ray.shutdown()
print(json.dumps(out))
"""


def test_ray_tasks_give_the_same_diagnosis(hang: Path, tmp_path: Path) -> None:
    """A local Ray instance (in a process of its own: Ray takes over signal handlers) reads the chunks as tasks."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'diagagent[ray]')")
    local, _ = _diagnosis(hang, tmp_path / "local", None)
    cut_here, _ = _diagnosis(hang, tmp_path / "cut", Workers(1, min_bytes=0))
    run = subprocess.run([sys.executable, "-c", RAY_RUN, str(hang), str(tmp_path / "ray")], check=False,
                         capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parent.parent)
    assert run.returncode == 0, run.stderr[-3000:]
    on_ray = json.loads(run.stdout.strip().splitlines()[-1])
    assert on_ray["cpus"] == 2 and on_ray["small_tasks"] == 1  # a small bundle: its logs in one chunk
    assert on_ray["cut_tasks"] > 3  # past any size: chunks of logs, probes and stacks, as on a large bundle
    assert on_ray["small"] == local
    assert on_ray["cut"] == cut_here == local


def test_flow_files_read_in_processes_give_the_same_findings(hang: Path, tmp_path: Path) -> None:
    """The flows cut into several files (as per-host exports are): read in chunks by two processes, the same
    findings as the one file read here."""
    import shutil

    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from diagagent.analysis.flows import analyze_flows

    root = tmp_path / "split"
    shutil.copytree(hang, root)
    (export,) = (root / "flows").iterdir()
    table = pcsv.read_csv(export)
    export.unlink()
    step = -(-table.num_rows // 5)
    for i in range(5):
        pq.write_table(table.slice(i * step, step), root / "flows" / f"part-{i}.parquet")
    with Bundle.open(hang) as b:
        whole = analyze_flows(b).model_dump(mode="json")
    with Bundle.open(root) as b, Workers(2, min_bytes=0) as pool:
        cut = analyze_flows(b, workers=pool).model_dump(mode="json")
        assert pool._pool is not None and b.issues == []
    assert cut == whole and whole["has_flows"]
