"""The incident simulator: every fault writes a bundle that loads, whose truth follows docs/conventions.md and
whose indicating lines really hold the fault's evidence; determinism; the `diagagent simulate` command.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diagagent.apps.cli import build_app
from diagagent.sim import FAULTS, SIM_VERSION, simulate
from diagagent.telemetry import Bundle
from diagagent.telemetry.readers import iter_raw_lines

CATEGORY = {
    "gpu_ecc_uncorrectable": "hardware",
    "gpu_fell_off_bus": "hardware",
    "nvlink_error": "hardware",
    "gpu_straggler": "hardware",
    "gpu_hang": "hardware",
    "node_crash": "hardware",
    "ib_link_flap": "network",
    "nic_down": "network",
    "slow_link": "network",
    "host_oom_killed": "infrastructure",
    "storage_checkpoint_write_failure": "infrastructure",
    "nccl_internal_error": "framework",
    "pytorch_internal_assert": "framework",
    "cuda_oom": "user_code",
    "user_shape_mismatch_at_init": "user_code",
    "user_import_error": "user_code",
    "nan_loss_divergence": "data",
    "dataloader_corrupt_sample": "data",
}

# What each cited line must say: the real error text of the fault (not just any line).
EVIDENCE = {
    "gpu_ecc_uncorrectable": r"CUDA error: uncorrectable ECC error encountered|NVRM: Xid \(PCI:[0-9a-f:]+\): (48|63|94|95),"
    r"|DRAM Uncorrectable\s+: [1-9]",
    "gpu_fell_off_bus": r"NVRM: Xid \(PCI:[0-9a-f:]+\): 79, .*GPU has fallen off the bus"
    r"|CUDA error: (unspecified launch failure|unknown error)|GPU is lost",
    "nvlink_error": r"CUDA error: uncorrectable NVLink error|NVRM: Xid \(PCI:[0-9a-f:]+\): 74, .*NVLink: fatal error",
    "gpu_straggler": r"HW Thermal Slowdown\s+: Active|GPU Current Temp\s+: (8[5-9]|9\d) C",
    "node_crash": r"Kernel panic - not syncing|Machine Check Exception",
    "ib_link_flap": r"NCCL WARN NET/IB : Got completion from peer [\d.]+<\d+> with status=12|mlx5_core \S+ ib\d: Link down"
    r"|LinkDownedCounter:\.+[1-9]",
    "nic_down": r"NCCL WARN NET/IB : Got completion from peer [\d.]+<\d+> with status=12|mlx5_core \S+ ib\d: Link down"
    r"|Cable error|LinkDownedCounter:\.+[1-9]|State: Down",
    "slow_link": r"PortXmitWait:\.+\d{9,}|# Avg bus bandwidth\s+: [1-6]?\d\.\d+",
    "host_oom_killed": r"Out of memory: Killed process \d+ \(python3\)|Detected 1 oom_kill event",
    "storage_checkpoint_write_failure": r"OSError: \[Errno (28|122)\] (No space left on device|Disk quota exceeded)|"
                                        r"LustreError: .*operation ost_write .* failed: rc = -(28|122)",
    "nccl_internal_error": r"NCCL WARN .*(proxy|opType)|NCCL error: internal error - please report this issue to the NCCL",
    "pytorch_internal_assert": r"RuntimeError: .*INTERNAL ASSERT FAILED at",
    "cuda_oom": r"OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ GiB\. GPU \d has a total capacity",
    "user_shape_mismatch_at_init": r"RuntimeError: Error\(s\) in loading state_dict for|size mismatch for .*copying a param",
    "user_import_error": r"ImportError: cannot import name '\w+' from '[\w.]+'",
    "nan_loss_divergence": r"found NaN in local forward loss|lm loss: NAN|loss scale already at minimum",
    "dataloader_corrupt_sample": r"Caught (ValueError|UnicodeDecodeError) in DataLoader worker process \d+"
    r"|^ValueError: buffer is smaller|^UnicodeDecodeError: 'utf-8' codec",
}
RESTART_CATEGORIES = {"hardware", "network", "infrastructure", "framework"}


def _line(bundle: Bundle, rel: str, number: int) -> str:
    for n, text in iter_raw_lines(bundle.root / rel, rel, []):
        if n == number:
            return text
    raise AssertionError(f"{rel} has no line {number}")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sim")
    out = {}
    for i, fault in enumerate(FAULTS):
        out[fault] = root / fault
        simulate(out[fault], fault, 16, seed=100 + i, minutes=4, job_id=str(4200 + i))
    return out


def test_list_prints_one_fault_id_per_line_and_nothing_else() -> None:
    result = CliRunner().invoke(build_app(), ["simulate", "--list"])
    assert result.exit_code == 0, result.output
    ids = result.stdout.splitlines()
    assert len(ids) >= 18
    assert ids == list(FAULTS)
    assert all(re.fullmatch(r"[a-z0-9_]+", i) for i in ids)


def test_unknown_fault_is_a_clear_error_listing_valid_ids(tmp_path: Path) -> None:
    result = CliRunner().invoke(build_app(), ["simulate", str(tmp_path / "b"), "--fault", "gpu_on_fire"])
    assert result.exit_code != 0
    assert "gpu_on_fire" in result.output and "gpu_ecc_uncorrectable" in result.output
    with pytest.raises(ValueError, match="valid faults"):
        simulate(tmp_path / "c", "gpu_on_fire", 4, 1)


def test_cli_writes_a_bundle(tmp_path: Path) -> None:
    out = tmp_path / "job-7"
    result = CliRunner().invoke(
        build_app(),
        [
            "simulate",
            str(out),
            "--fault",
            "nic_down",
            "--nodes",
            "4",
            "--seed",
            "3",
            "--minutes",
            "2",
            "--job-id",
            "7",
        ],
    )
    assert result.exit_code == 0, result.output
    with Bundle.open(out) as b:
        assert b.job.job_id == "7" and len(b.job.nodes) == 4
        assert b.truth is not None and b.truth.fault == "nic_down"


def test_faults_cover_the_conventions() -> None:
    assert set(CATEGORY) <= set(FAULTS)
    assert {FAULTS[f].category for f in FAULTS} == {
        "hardware",
        "network",
        "infrastructure",
        "framework",
        "user_code",
        "data",
    }
    assert isinstance(SIM_VERSION, str) and SIM_VERSION


@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_fault_bundle_loads_and_its_truth_follows_conventions(
    bundles: dict[str, Path], fault: str
) -> None:
    with Bundle.open(bundles[fault]) as b:
        job, truth = b.job, b.truth
        assert truth is not None and truth.fault == fault
        assert truth.category == CATEGORY[fault] == FAULTS[fault].category
        assert (
            job.parallelism is not None and job.parallelism.world_size == len(job.nodes) * job.gpus_per_node
        )
        assert job.parallelism.tp <= job.gpus_per_node
        assert set(b.missing) <= {"stacks"}
        assert len(b.log_files) >= job.world_size
        assert {f.host for f in b.probe_files} == set(job.hosts)
        assert all(h in job.hosts for h in truth.faulty_nodes or [])
        kinds = [a.kind for a in truth.actions or []]
        newest_valid = max(c.step for c in job.checkpoints if c.valid)
        if truth.category in ("hardware", "network"):
            assert kinds == ["evict", "restart"]
            assert truth.actions[0].nodes == truth.faulty_nodes and len(truth.faulty_nodes) == 1
            assert truth.actions[1].from_step == newest_valid
        elif fault in ("user_shape_mismatch_at_init", "user_import_error"):
            assert kinds == ["rollback"] and truth.actions[0].to_commit == job.code[-2].commit
            assert job.code[-1].at > job.code[-2].at and job.code[-1].at < job.started_at
        elif fault in ("cuda_oom", "dataloader_corrupt_sample"):
            assert kinds == ["none"]
        elif fault == "nan_loss_divergence":
            assert kinds == ["restart"] and truth.actions[0].from_step < truth.iteration
            assert truth.actions[0].from_step == max(
                c.step for c in job.checkpoints if c.valid and c.step < truth.iteration
            )
        else:
            assert truth.category in RESTART_CATEGORIES and kinds == ["restart"]
            assert truth.actions[0].from_step == newest_valid
        if truth.stage == "init":
            assert truth.iteration is None
        else:
            assert truth.iteration is not None and truth.iteration > 0
        assert job.status == {"slow": "slow", "hang": "hung", "crash": "failed"}[FAULTS[fault].outcome]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_indicating_lines_hold_the_faults_real_evidence(bundles: dict[str, Path], fault: str) -> None:
    with Bundle.open(bundles[fault]) as b:
        refs = b.truth.indicating_lines or []
        if fault == "gpu_hang":
            assert refs == []  # silent: only the stacks show it
            return
        assert 1 <= len(refs) <= 10
        pattern = re.compile(EVIDENCE[fault])
        for ref in refs:
            text = _line(b, ref.file, ref.line)
            assert pattern.search(text), f"{ref.file}:{ref.line} does not show {fault}: {text[:200]!r}"
            for host in b.truth.faulty_nodes or []:
                assert f"/{host}/" in ref.file or "slurm-" in ref.file


def test_the_root_error_is_buried_in_a_cascade_of_watchdog_timeouts(bundles: dict[str, Path]) -> None:
    with Bundle.open(bundles["gpu_ecc_uncorrectable"]) as b:
        timeouts = 0
        watchdog = re.compile(
            r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=\d+, OpType=\w+"
        )
        for lf in b.log_files:
            for line in b.iter_log_lines(lf):
                if watchdog.search(line.text) and "ProcessGroupNCCL.cpp:616]" in line.text:
                    timeouts += 1
        host = b.truth.faulty_nodes[0]
        assert timeouts > 8 * (len(b.job.nodes) // 2)
        assert any(f"/{host}/" in r.file for r in b.truth.indicating_lines)


def test_logs_mix_timestamp_formats_progress_bars_and_bad_bytes(bundles: dict[str, Path]) -> None:
    from diagagent.telemetry import parse_timestamp

    with Bundle.open(bundles["gpu_ecc_uncorrectable"]) as b:
        texts = [line.text for lf in b.log_files for line in b.iter_log_lines(lf)]
        assert any("\ufffd" in t for t in texts)
        assert any(issue.problem.startswith("bytes that are not UTF-8") for issue in b.issues)
        stamped = [t for t in texts if parse_timestamp(t, b.year) is not None]
        assert len(stamped) > 20 and len(stamped) < len(
            texts
        )  # Python logging, glog, syslog, and lines with none
        assert any(re.match(r"\[rank\d+\]:\[[EW]\d{4} ", t) for t in texts)
        assert any(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", t) for t in texts)
    raw = [p.read_bytes() for p in bundles["gpu_ecc_uncorrectable"].rglob("rank-0.log*")]
    import gzip as _gzip

    data = b"".join(_gzip.decompress(r) if r[:2] == b"\x1f\x8b" else r for r in raw)
    assert b"\r" in data or b"Training epoch" in data or b"[Rank 0] step=" in data


def test_node_crash_logs_just_end_on_the_faulty_node(bundles: dict[str, Path]) -> None:
    with Bundle.open(bundles["node_crash"]) as b:
        host = b.truth.faulty_nodes[0]
        error = re.compile(r"Traceback|Error|WARN|Watchdog")
        for lf in b.log_files:
            if lf.host == host and lf.rank is not None:
                assert not any(
                    error.search(line.text)
                    and "UserWarning" not in line.text
                    and "FutureWarning" not in line.text
                    and "DeprecationWarning" not in line.text
                    and "GID table" not in line.text
                    for line in b.iter_log_lines(lf)
                )


def test_hang_has_a_stack_dump_per_rank_with_the_stuck_rank_elsewhere(bundles: dict[str, Path]) -> None:
    with Bundle.open(bundles["gpu_hang"]) as b:
        assert len(b.stack_files) == b.job.world_size
        host = b.truth.faulty_nodes[0]
        tops: dict[str, set[str]] = {}
        for sf in b.stack_files:
            text = b.read_text(sf.file)
            if sf.file.endswith(".json"):
                main = next(t for t in json.loads(text) if t["thread_name"] == "MainThread")
                top = main["frames"][0]["name"]
            else:
                assert text.startswith("Process ") and "Python v3." in text
                top = re.search(r'\(active\): "MainThread"\n    (\w+) \(', text).group(1)
            tops.setdefault(sf.host, set()).add(top)
        healthy = [h for h in tops if h != host]
        assert all(
            "all_reduce" in tops[h] or "all_gather_into_tensor" in tops[h] or "wait" in tops[h]
            for h in healthy
        )
        assert tops[host] - {"all_reduce", "all_gather_into_tensor", "wait"}


def test_straggler_stacks_hold_several_dumps_and_flows_show_it(bundles: dict[str, Path]) -> None:
    with Bundle.open(bundles["gpu_straggler"]) as b:
        text = b.read_text(b.stack_files[0].file)
        assert text.count("\nProcess ") + text.startswith("Process ") >= 3
        timeline = json.loads((b.root / "truth.json").read_text())["timeline"]
        durations = {t["iteration"]: t["end"] - t["start"] for t in timeline}
        first_slow = b.truth.iteration
        before = [
            d for it, d in durations.items() if first_slow - 6 <= it < first_slow and it > min(durations)
        ]
        after = [d for it, d in durations.items() if it >= first_slow]
        assert min(after) > max(before)


def test_flows_hold_the_job_and_another_tenant_and_match_the_timeline(bundles: dict[str, Path]) -> None:
    import pyarrow as pa

    with Bundle.open(bundles["gpu_ecc_uncorrectable"]) as b:
        table = pa.Table.from_batches(list(b.iter_flow_batches()))
        job_ips = {n.ip for n in b.job.nodes}
        src = set(table.column("src_ip").to_pylist())
        assert job_ips <= src | set(table.column("dst_ip").to_pylist())
        assert src - job_ips  # other tenants, storage, monitoring
        timeline = json.loads((b.root / "truth.json").read_text())["timeline"]
        assert len(timeline) >= 10
        assert all(a["end"] <= b2["start"] + 1e-6 for a, b2 in zip(timeline, timeline[1:], strict=False))
        starts = table.column("start").to_numpy()
        fault_at = json.loads((b.root / "truth.json").read_text())["t_fault"]
        job_rows = [
            s
            for s, a, d in zip(
                starts, table.column("src_ip").to_pylist(), table.column("dst_ip").to_pylist(), strict=True
            )
            if a in job_ips and d in job_ips
        ]
        assert max(job_rows) <= fault_at  # traffic stops when the job breaks
        assert min(job_rows) >= timeline[0]["start"] - 600


def test_some_bundles_carry_flows_as_parquet(tmp_path: Path) -> None:
    from diagagent.sim.faults import fault_spec
    from diagagent.sim.plan import make_plan

    seed = next(
        s
        for s in range(200)
        if make_plan(fault_spec("slow_link"), 8, s, 8, 3, None, None).env.flow_format == "parquet"
    )
    simulate(tmp_path / "b", "slow_link", 8, seed, minutes=3)
    with Bundle.open(tmp_path / "b") as b:
        assert b.flow_files == ["flows/flows.parquet"]
        rows = sum(batch.num_rows for batch in b.iter_flow_batches())
        assert rows > 100 and not b.issues


def test_same_seed_gives_byte_identical_bundles(tmp_path: Path) -> None:
    def digest(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }

    for fault, compress in (("gpu_hang", True), ("storage_checkpoint_write_failure", False)):
        a, b = tmp_path / f"{fault}-a", tmp_path / f"{fault}-b"
        simulate(a, fault, 8, 5, minutes=3, compress=compress)
        simulate(b, fault, 8, 5, minutes=3, compress=compress)
        assert digest(a) == digest(b)
        other = tmp_path / f"{fault}-other"
        simulate(other, fault, 8, 6, minutes=3, compress=compress)
        assert digest(a) != digest(other)


def test_gzip_logs_and_rewriting_an_existing_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    simulate(out, "cuda_oom", 4, 2, minutes=2, compress=True)
    assert list((out / "logs").rglob("*.log.gz"))
    simulate(out, "cuda_oom", 4, 2, minutes=2, compress=False)
    assert not list((out / "logs").rglob("*.log.gz"))
    (tmp_path / "notabundle").mkdir()
    (tmp_path / "notabundle" / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="refusing"):
        simulate(tmp_path / "notabundle", "cuda_oom", 4, 2)


def test_simulate_never_replaces_a_bundle_it_did_not_write(tmp_path: Path) -> None:
    """A real bundle (no simulator's truth.json) is refused with what is there and how to go on; --force writes."""
    import shutil

    real = tmp_path / "x"
    shutil.copytree(Path(__file__).parent.parent / "examples" / "job-42", real)
    (real / "truth.json").unlink()
    before = sorted(str(p.relative_to(real)) for p in real.rglob("*"))
    job_yaml = (real / "job.yaml").read_bytes()
    args = ["simulate", str(real), "--fault", "cuda_oom", "--nodes", "2", "--minutes", "1"]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 2 and "not written by simulate" in result.output and "--force" in result.output
    assert sorted(str(p.relative_to(real)) for p in real.rglob("*")) == before
    assert (real / "job.yaml").read_bytes() == job_yaml
    result = CliRunner().invoke(build_app(), [*args, "--force"])
    assert result.exit_code == 0, result.output
    assert json.loads((real / "truth.json").read_text())["fault"] == "cuda_oom"
    result = CliRunner().invoke(build_app(), [*args[:3], "gpu_hang", *args[4:]])  # its own bundle: replaced
    assert result.exit_code == 0 and json.loads((real / "truth.json").read_text())["fault"] == "gpu_hang"
