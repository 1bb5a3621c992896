"""The telemetry contract: job.yaml, rank geometry, bundle parts, streaming readers and their bad-input paths."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import pytest

from diagagent.telemetry import Bundle, BundleError, Job, JobStore, UnknownJob, parse_timestamp
from diagagent.telemetry.readers import MAX_LINE_BYTES
from tests.conftest import JOB_YAML


def test_job_geometry_follows_megatron_order() -> None:
    job = Job.from_yaml(JOB_YAML)
    assert job.world_size == 8
    assert job.host_of(5) == "node-003"
    # tp fastest, then cp, dp, pp: rank 5 = tp 1, dp 0, pp 1
    c = job.coords(5)
    assert (c.tp, c.cp, c.dp, c.pp) == (1, 0, 0, 1)
    assert job.group_of("tp", 5) == [4, 5]
    assert job.group_of("dp", 5) == [5, 7]
    assert job.group_of("pp", 5) == [1, 5]
    assert job.ip_to_host["10.0.0.3"] == "node-003"


def test_ranks_assigned_in_order_when_missing() -> None:
    job = Job.from_yaml('job_id: 7\ngpus_per_node: 4\nnodes: [{host: a}, {host: b}]\n')
    assert job.job_id == "7"
    assert job.host_of(5) == "b" and job.host_to_ranks["a"] == [0, 1, 2, 3]


def test_job_yaml_type_error_names_key_and_line(tmp_path: Path) -> None:
    bad = JOB_YAML.replace("spares: 2", "spares: plenty")
    (tmp_path / "job.yaml").write_text(bad)
    with pytest.raises(BundleError) as err:
        Bundle.open(tmp_path)
    msg = str(err.value)
    assert "spares" in msg and "plenty" in msg
    assert err.value.line == bad.splitlines().index("spares: plenty") + 1


def test_nested_type_error_names_nested_key() -> None:
    with pytest.raises(BundleError) as err:
        Job.from_yaml(JOB_YAML.replace("{step: 1000,", "{step: soon,"))
    assert "checkpoints.0.step" in str(err.value)
    assert err.value.line == JOB_YAML.splitlines().index("checkpoints:") + 2


def test_a_list_key_left_empty_is_an_empty_list_and_numeric_ids_are_text() -> None:
    job = Job.from_yaml('job_id: "7"\nstatus: failed\ncheckpoints:\ncode:\nhistory:\n')
    assert (job.checkpoints, job.code, job.history) == ([], [], [])
    assert Job.from_yaml('job_id: "7"\nhistory: [5511804, job-6]\n').history == ["5511804", "job-6"]  # Slurm's ids


def test_open_mpis_and_yarns_stdout_and_stderr_are_logs_and_other_files_are_counted_not_read(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text('job_id: "7"\nnodes:\n  - {host: gpu-1, ranks: [0, 1]}\n')
    files = {"logs/gpu-1/1/rank.1/stdout": "step 1\n", "logs/gpu-1/1/rank.1/stderr": "boom\n",
             "logs/gpu-1/container_e42_01_000002.stderr": "OSError: HDFS read failed\n",
             "logs/gpu-1/notes.md": "# what I did\n", "logs/gpu-1/plot.png": "png"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    with Bundle.open(tmp_path) as b:
        read = {f.file: (f.host, f.rank) for f in b.log_files}
        issues = [i for i in b.issues if i.file.startswith("logs/")]
    assert read == {"logs/gpu-1/1/rank.1/stdout": ("gpu-1", 1), "logs/gpu-1/1/rank.1/stderr": ("gpu-1", 1),
                    "logs/gpu-1/container_e42_01_000002.stderr": ("gpu-1", None)}
    assert len(issues) == 1 and issues[0].count == 2 and issues[0].lost
    assert "logs/gpu-1/notes.md" in issues[0].problem and "logs/gpu-1/plot.png" in issues[0].problem


def test_a_node_the_scheduler_never_placed_is_left_out_and_noted_not_a_refused_job() -> None:
    # a KubeRay worker pod still Pending has no host: 'host: null, ip: null, state: Pending'
    job = Job.from_yaml('job_id: "7"\nnodes:\n  - {host: gpu-1, ranks: [0]}\n'
                        "  - {host: null, ip: null, state: Pending, ranks: [1]}\n  - {host: gpu-3, ranks: [2]}\n")
    assert job.hosts == ["gpu-1", "gpu-3"] and job.rank_to_host == {0: "gpu-1", 2: "gpu-3"}
    note = "nodes[1] names no host (a node never placed, as a pending pod): left out of the job's nodes"
    assert job.load_notes == [(4, note)]


def test_invalid_yaml_and_missing_job_yaml(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="not valid YAML"):
        Job.from_yaml("job_id: [unclosed\n")
    with pytest.raises(BundleError, match="job.yaml"):
        Bundle.open(tmp_path)


def test_bundle_with_only_job_yaml(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB_YAML)
    with Bundle.open(tmp_path) as b:
        assert b.missing == ["logs", "flows", "stacks", "probes"]
        assert list(b.iter_all_log_lines()) == []
        assert list(b.iter_flow_batches()) == []
        assert b.truth is None


def test_parts_and_ranks_from_names_and_prefixes(small_bundle: Path) -> None:
    with Bundle.open(small_bundle) as b:
        assert b.missing == []
        files = {f.file: f for f in b.log_files}
        assert files["logs/node-001/rank-0.log"].rank == 0
        assert files["logs/node-002/stdout.log"].rank is None
        lines = list(b.iter_log_lines(files["logs/node-002/stdout.log"]))
        assert [ln.rank for ln in lines] == [2, 3, None, None]  # [default1] is local rank 1 of node-002 -> 3
        assert lines[1].line == 2 and lines[1].host == "node-002"
        assert b.stack_files[0].rank == 0 and b.probe_files[0].name == "dmesg"


def test_flows_normalized_from_epoch_and_iso(small_bundle: Path) -> None:
    with Bundle.open(small_bundle) as b:
        batches = list(b.iter_flow_batches())
    starts = [v for batch in batches for v in batch.column("start").to_pylist()]
    assert starts == [1795161600.0, 1795161601.0]


def test_flow_file_missing_columns_is_reported(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB_YAML)
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "x.csv").write_text("when,src,dst\n1,a,b\n")
    with Bundle.open(tmp_path) as b:
        assert list(b.iter_flow_batches()) == []
        assert "lacks column(s) start, end, src_ip, dst_ip, bytes" in str(b.issues[0])


def test_truncated_gzip_keeps_lines_before_the_break(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB_YAML)
    (tmp_path / "logs" / "node-001").mkdir(parents=True)
    body = "".join(f"iteration {i} ok\n" for i in range(5000)).encode()
    data = gzip.compress(body)
    (tmp_path / "logs" / "node-001" / "rank-0.log.gz").write_bytes(data[: len(data) // 2])
    with Bundle.open(tmp_path) as b:
        lines = list(b.iter_all_log_lines())
        assert 0 < len(lines) < 5000
        assert lines[0].text == "iteration 0 ok"
        assert "compressed data ends" in b.issues[-1].problem
        assert b.issues[-1].file == "logs/node-001/rank-0.log.gz"


def test_invalid_utf8_and_one_megabyte_line(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB_YAML)
    (tmp_path / "logs" / "node-001").mkdir(parents=True)
    huge = b"x" * (MAX_LINE_BYTES + 5000)
    (tmp_path / "logs" / "node-001" / "rank-1.log").write_bytes(
        b"ok line\nbad \xff\xfe bytes\n" + huge + b"\nafter\n")
    with Bundle.open(tmp_path) as b:
        lines = list(b.iter_all_log_lines())
        assert [ln.line for ln in lines] == [1, 2, 3, 4]
        assert "\ufffd" in lines[1].text
        assert len(lines[2].text) == MAX_LINE_BYTES
        assert lines[3].text == "after"
        problems = {i.problem.split(",")[0]: i for i in b.issues}
        assert problems["bytes that are not UTF-8"].line == 2
        assert any("longer than" in i.problem and i.line == 3 for i in b.issues)


def test_progress_bars_split_on_carriage_return(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB_YAML)
    (tmp_path / "logs" / "node-001").mkdir(parents=True)
    (tmp_path / "logs" / "node-001" / "rank-0.log").write_bytes(
        b" 10%|#  | 1/10\r 20%|##  | 2/10\rRuntimeError: boom\r 30%|###  | 3/10\n")
    with Bundle.open(tmp_path) as b:
        texts = [ln.text for ln in b.iter_all_log_lines()]
    assert texts == ["RuntimeError: boom", " 30%|###  | 3/10"]


def test_tarball_bundle(small_bundle: Path, tmp_path: Path) -> None:
    tgz = tmp_path / "job-42.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(small_bundle, arcname="job-42")
    with Bundle.open(tgz) as b:
        assert b.job.job_id == "42" and len(b.log_files) == 2
        root = b.root
    assert not root.exists()


@pytest.mark.parametrize("name,rank", [("rank-136.log", 136), ("rank136.log", 136), ("worker_rank_7.log", 7),
                                       ("nemo_log_globalrank-12_localrank-4.txt", 12), ("stdout.log", None)])
def test_rank_from_file_name(name: str, rank: int | None) -> None:
    from diagagent.telemetry.readers import rank_from_name

    assert rank_from_name(name) == rank


def test_job_store(small_bundle: Path) -> None:
    store = JobStore(small_bundle.parent)
    assert store.path_of("42") == small_bundle
    assert store.path_of("job 42") == small_bundle
    assert store.path_of("llama3-8b-pretrain") == small_bundle
    with pytest.raises(UnknownJob, match="Known jobs: 42"):
        store.path_of("43")


@pytest.mark.parametrize("line,expected", [
    ("2026-11-20T10:01:02.500Z rank 3 ok", 1795168862.5),
    ("[2026-11-20 10:01:02,500] INFO x", 1795168862.5),
    ("2026-11-20T11:01:02+01:00 x", 1795168862.0),
    ("[rank0]:[E1120 10:01:02.500000 ProcessGroupNCCL.cpp:683] x", 1795168862.5),
    ("Nov 20 10:01:02 node-017 kernel: NVRM: Xid", 1795168862.0),
    ("[Fri Nov 20 10:01:02 2026] NVRM: Xid (PCI:0000:3b:00): 79", 1795168862.0),
    ("1795168862.25 flow", 1795168862.25),
    ("11/20/2026 10:01:02 - INFO - transformers.trainer - ***** Running training *****", 1795168862.0),
    ("node-017:1234:5678 [3] NCCL WARN NET/IB : Got completion", None),
    ("[12345.678901] NVRM: Xid (PCI:0000:3b:00): 79", None),
])
def test_timestamps(line: str, expected: float | None) -> None:
    assert parse_timestamp(line, year=2026) == expected


def test_show_command_json(small_bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from typer.testing import CliRunner

    from diagagent.apps.cli import build_app

    result = CliRunner().invoke(build_app(), ["show", str(small_bundle), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    logs = next(p for p in summary["parts"] if p["part"] == "logs")
    assert logs["records"] == 7 and summary["world_size"] == 8 and summary["missing"] == []
    bad = CliRunner().invoke(build_app(), ["show", str(small_bundle / "nope")])
    assert bad.exit_code == 2




def test_lines_around_stays_inside_the_bundle(small_bundle: Path) -> None:
    with Bundle.open(small_bundle) as b:
        assert b.lines_around("logs/node-001/rank-0.log", 2, 1) == [
            (1, "[2026-11-20 08:00:05,120] [INFO] [megatron] building GPT model ..."),
            (2, b.lines_around("logs/node-001/rank-0.log", 2, 0)[0][1]),
            (3, b.lines_around("logs/node-001/rank-0.log", 3, 0)[0][1])]
        assert b.lines_around("../../etc/passwd", 1) == []
        assert b.lines_around("logs/node-001/absent.log", 1) == []
        with pytest.raises(BundleError, match="leaves the bundle"):
            b.read_text("../job-42/../../etc/passwd")
