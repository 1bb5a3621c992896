"""Hostile and broken input: job.yaml bombs and bad values, cut or bomb-sized compressed logs, read budgets,
oversized tarballs and symlinks out of a bundle. Each is refused with a clear error or read within its budget."""

from __future__ import annotations

import gzip
import io
import shutil
import tarfile
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagagent.analysis.logscan import scan_bundle
from diagagent.apps.bundle_summary import summarize
from diagagent.config import Settings
from diagagent.telemetry import Bundle, BundleError, Job, ReadIssue
from diagagent.telemetry.limits import ReadBudget, ReadLimits
from diagagent.telemetry.readers import LineChunks
from tests.conftest import JOB_YAML

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "job-42"
CAUSE = "RuntimeError: CUDA error: uncorrectable ECC error encountered"


def _bundle(root: Path, logs: dict[str, bytes], job_yaml: str = JOB_YAML) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "job.yaml").write_text(job_yaml)
    for rel, data in logs.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _refusal(text: str, limits: ReadLimits | None = None) -> BundleError:
    with pytest.raises(BundleError) as err:
        Job.from_yaml(text, "bundles/x/job.yaml", limits)
    assert err.value.file == "bundles/x/job.yaml"
    return err.value


# --- job.yaml ------------------------------------------------------------------------------------------------


def test_an_impossible_date_is_an_error_naming_the_key_and_line() -> None:
    err = _refusal(JOB_YAML.replace("started_at: 2026-11-20T08:00:00Z", "started_at: 2026-13-45T00:00:00Z"))
    assert err.line == 5
    assert "key 'started_at'" in err.message and "2026-13-45" in err.message and "date-time" in err.message


def test_a_number_too_long_to_convert_is_an_error_naming_the_key() -> None:
    err = _refusal(JOB_YAML + "exit_code: " + "7" * 5000 + "\n")
    assert "key 'exit_code'" in err.message and err.line == JOB_YAML.count("\n") + 1


def test_deep_nesting_is_refused_before_it_is_built() -> None:
    err = _refusal(JOB_YAML + "extra: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert "limits.yaml_depth" in err.message


def test_an_alias_bomb_is_refused_before_it_is_built() -> None:
    bomb = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    bomb += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]  # 9^10 values
    err = _refusal(JOB_YAML + "\n".join(bomb) + "\nhistory: *a9\n")
    assert "limits.yaml_values" in err.message
    assert "limits.yaml_aliases" in _refusal(JOB_YAML + "\n".join(bomb) + "\n", ReadLimits(yaml_aliases=20)).message


def test_a_recursive_anchor_and_an_oversized_file_are_refused() -> None:
    assert "recursive" in _refusal(JOB_YAML + "loop: &loop [*loop]\n").message
    assert "limits.job_yaml_bytes" in _refusal(JOB_YAML + "pad: " + "x" * 5000 + "\n",
                                               ReadLimits(job_yaml_bytes=4096)).message


def test_sizes_past_the_limits_are_errors_naming_the_key() -> None:
    huge = JOB_YAML.replace("gpus_per_node: 2", "gpus_per_node: 10000000")
    err = _refusal(huge)
    assert "key 'gpus_per_node'" in err.message and "limits.max_gpus_per_node" in err.message and err.line == 7
    err = _refusal(JOB_YAML.replace("tp: 2,", "tp: 1000000000000,"))
    assert "parallelism.tp" in err.message and "limits.max_ranks" in err.message
    err = _refusal(JOB_YAML.replace("ranks: [6, 7]", "ranks: [6, 99999999]"))
    assert "nodes.3.ranks" in err.message and err.line == 13
    assert "limits.max_nodes" in _refusal(JOB_YAML, ReadLimits(max_nodes=3)).message


def test_gpus_per_node_that_disagrees_with_the_ranks_is_a_note_and_the_ranks_win() -> None:
    job = Job.from_yaml(JOB_YAML.replace("gpus_per_node: 2", "gpus_per_node: 16"))
    assert job.gpus_per_node == 2
    [(line, note)] = job.load_notes
    assert line == 7 and "gpus_per_node 16 disagrees with nodes[].ranks (2 ranks per node)" in note
    assert Job.from_yaml(JOB_YAML).load_notes == []


@pytest.mark.slow
def test_gpus_per_node_that_disagrees_with_the_ranks_does_not_make_every_node_faulty(tmp_path: Path) -> None:
    from diagagent.diagnosis import diagnose

    root = tmp_path / "job-42"
    shutil.copytree(EXAMPLE, root)
    (root / "job.yaml").write_text((root / "job.yaml").read_text().replace("gpus_per_node: 8", "gpus_per_node: 16"))
    with Bundle.open(root) as b:
        d = diagnose(b, Settings.load())
    assert d.fault == "gpu_ecc_uncorrectable" and d.faulty_hosts == ["node-013"]
    assert any(n.startswith("job.yaml:") and "gpus_per_node 16 disagrees" in n for n in d.notes)


# --- cut and bomb-sized compressed logs ------------------------------------------------------------------------


def _numbered(n: int) -> bytes:
    return b"".join(b"[2026-11-20 09:00:%02d] iteration %d ok\n" % (i % 60, i) for i in range(n))


def test_a_cut_gzip_log_is_read_to_the_break_by_the_analyzer_and_by_show(tmp_path: Path) -> None:
    body = _numbered(40) + (CAUSE + "\n").encode() + _numbered(5000)
    data = gzip.compress(body)
    root = _bundle(tmp_path / "b", {"logs/node-001/rank-0.log.gz": data[: len(data) * 6 // 10]})
    with Bundle.open(root) as b:
        scan = scan_bundle(b, workers=1)
        read = scan.files[0].lines
        assert 41 < read < 5041
        assert any(o.line == 41 for per_host in scan.first.values() for o in per_host.values())  # the cause
        [cut] = [i for i in b.issues if i.kind == "truncated"]
        assert cut.file == "logs/node-001/rank-0.log.gz" and cut.line == read + 1
        assert f"read {read:,} lines" in cut.problem
    with Bundle.open(root) as b:
        assert summarize(b).parts[0].records == read  # `diagagent show` reads the same lines


def test_a_cut_zstd_log_is_read_to_the_break(tmp_path: Path) -> None:
    data = zstandard.ZstdCompressor().compress(_numbered(20000))
    root = _bundle(tmp_path / "b", {"logs/node-001/rank-0.log.zst": data[: len(data) // 2]})
    with Bundle.open(root) as b:
        lines = list(b.iter_all_log_lines())
        assert 1000 < len(lines) < 20000 and lines[0].text.endswith("iteration 0 ok")
        assert [i.kind for i in b.issues] == ["truncated"] and "rank-0.log.zst" in b.issues[0].file


def test_a_newline_bomb_costs_a_few_chunks_not_a_line_each(tmp_path: Path) -> None:
    blank = 32 << 20  # 32 Mi empty lines (32 KiB of gzip), then one that says something
    comp = gzip.compress(b"\n" * blank + CAUSE.encode() + b"\n", compresslevel=9)
    path = tmp_path / "rank-0.log.gz"
    path.write_bytes(comp)
    issues: list[ReadIssue] = []
    chunks = LineChunks(path, "logs/n/rank-0.log.gz", issues)
    got = [(first, lines) for first, lines in chunks]
    assert chunks.lines == blank + 1 and chunks.bytes == blank + len(CAUSE) + 1
    assert chunks.kept < 100  # each run of blank lines handed on once
    assert got[-1][0] + len(got[-1][1]) - 1 == blank + 1 and got[-1][1][-1] == CAUSE.encode()
    assert issues == []
    root = _bundle(tmp_path / "b", {"logs/node-001/rank-0.log.gz": comp})
    with Bundle.open(root) as b:
        scan = scan_bundle(b, workers=1)
        assert scan.lines_read == blank + 1
        assert any(o.line == blank + 1 for t in scan.first.values() for o in t.values())


def test_each_read_budget_stops_the_file_and_says_which_budget_and_what_was_read(tmp_path: Path) -> None:
    text = _numbered(5000)
    path = tmp_path / "rank-0.log"
    path.write_bytes(text)
    for limits, budget_name in ((ReadLimits(file_lines=1000), "file_lines"), (ReadLimits(bundle_lines=1000), "bundle_lines"),
                                (ReadLimits(file_bytes=10_000), "file_bytes")):
        issues: list[ReadIssue] = []
        chunks = LineChunks(path, "logs/n/rank-0.log", issues, ReadBudget(limits))
        lines = [line for _, ls in chunks for line in ls]
        assert len(lines) == chunks.lines and (chunks.lines == 1000 or chunks.bytes == 10_000)
        [hit] = issues
        assert hit.kind == "budget" and hit.file == "logs/n/rank-0.log" and f"limits.{budget_name}" in hit.problem
        assert f"read {chunks.lines:,} lines" in hit.problem
    bomb = tmp_path / "bomb.log.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (8 << 20), compresslevel=9))
    issues = []
    chunks = LineChunks(bomb, "logs/n/bomb.log.gz", issues, ReadBudget(ReadLimits(max_ratio=100,
                                                                                      ratio_after_bytes=1 << 20)))
    list(chunks)
    assert chunks.bytes < 8 << 20 and "limits.max_ratio" in issues[0].problem


def test_the_bundle_budget_is_shared_by_every_file_of_a_pass(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b", {f"logs/node-00{i}/rank-{i}.log": _numbered(1000) for i in range(1, 4)})
    with Bundle.open(root, ReadLimits(bundle_lines=2500)) as b:
        scan = scan_bundle(b, workers=1)
        assert scan.lines_read == 2500
        hits = [i for i in b.issues if i.kind == "budget"]
        assert [i.file for i in hits] == ["logs/node-003/rank-3.log"] and "limits.bundle_lines" in hits[0].problem
        assert any("limits.bundle_lines" in n for n in scan.issues)


def test_limits_come_from_settings() -> None:
    assert Settings.load().limits == ReadLimits()


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_LIMITS", '{"file_lines": 10, "tar_bytes": 1000}')
    limits = Settings.load().limits
    assert (limits.file_lines, limits.tar_bytes, limits.file_bytes) == (10, 1000, ReadLimits().file_bytes)


# --- tarballs ------------------------------------------------------------------------------------------------------


def _tar(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


def test_a_tarball_over_the_size_cap_is_extracted_up_to_it_and_says_so(tmp_path: Path) -> None:
    members = {"job-42/logs/node-001/rank-0.log": _numbered(100), "job-42/logs/node-002/rank-2.log": b"\0" * (4 << 20),
               "job-42/job.yaml": JOB_YAML.encode()}
    tar = _tar(tmp_path / "job-42.tar.gz", members)
    with Bundle.open(tar, ReadLimits(tar_bytes=1 << 20)) as b:
        assert b.job.job_id == "42"  # job.yaml is taken even past the cap
        assert [lf.file for lf in b.log_files] == ["logs/node-001/rank-0.log"]
        [hit] = [i for i in b.issues if i.kind == "budget"]
        assert hit.file == "job-42.tar.gz" and "limits.tar_bytes" in hit.problem
    first = _tar(tmp_path / "job-first.tar.gz", {"job-42/job.yaml": JOB_YAML.encode(), **members})
    with Bundle.open(first, ReadLimits(tar_members=2)) as b:
        assert [lf.file for lf in b.log_files] == ["logs/node-001/rank-0.log"]
        assert "limits.tar_members" in str(b.issues[0])
    with pytest.raises(BundleError, match="missing.*limits.tar_members"):  # job.yaml came after the cap
        Bundle.open(tar, ReadLimits(tar_members=1))


def test_a_tarball_member_linking_out_is_skipped_and_named(tmp_path: Path) -> None:
    tar = _tar(tmp_path / "job-42.tgz", {"job-42/job.yaml": JOB_YAML.encode(),
                                         "job-42/logs/node-001/rank-0.log": _numbered(10)},
               {"job-42/logs/node-001/passwd.log": "/etc/passwd"})
    with Bundle.open(tar) as b:
        assert [lf.file for lf in b.log_files] == ["logs/node-001/rank-0.log"]
        [hit] = [i for i in b.issues if i.kind == "link"]
        assert "passwd.log" in hit.problem


# --- symlinks ------------------------------------------------------------------------------------------------------


def test_a_symlink_out_of_a_bundle_is_skipped_by_every_reader_and_named(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.log").write_text(CAUSE + "\n")
    (outside / "dmesg.txt").write_text("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    root = _bundle(tmp_path / "b", {"logs/node-001/rank-0.log": _numbered(10)})
    (root / "logs" / "node-001" / "rank-1.log").symlink_to(outside / "secret.log")
    (root / "logs" / "node-001" / "rank-0-copy.log").symlink_to("rank-0.log")  # inside: read
    (root / "probes").symlink_to(outside)
    with Bundle.open(root) as b:
        assert [lf.file for lf in b.log_files] == ["logs/node-001/rank-0-copy.log", "logs/node-001/rank-0.log"]
        assert b.probe_files == [] and "probes" in b.missing
        assert b.lines_around("logs/node-001/rank-1.log", 1) == []  # what show_lines reads
        assert list(b.iter_raw_lines("logs/node-001/rank-1.log")) == []
        links = {i.file: i for i in b.issues if i.kind == "link"}
        assert set(links) == {"logs/node-001/rank-1.log", "probes"}
        assert "out of the bundle" in links["probes"].problem


def test_a_job_yaml_linking_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.yaml").write_text(JOB_YAML)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "job.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    with pytest.raises(BundleError, match="symlink out of the bundle"):
        Bundle.open(tmp_path / "b")


@pytest.mark.slow
def test_an_outside_log_linked_in_does_not_change_the_diagnosis(tmp_path: Path) -> None:
    from diagagent.diagnosis import diagnose

    root = tmp_path / "job-42"
    shutil.copytree(EXAMPLE, root)
    outside = tmp_path / "outside.log"
    outside.write_text("[2026-11-19 15:40:00] node-005 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, "
                       "GPU has fallen off the bus.\n" * 3)
    (root / "logs" / "node-005" / "xid.log").symlink_to(outside)
    with Bundle.open(root) as b:
        d = diagnose(b, Settings.load())
    assert d.fault == "gpu_ecc_uncorrectable" and d.faulty_hosts == ["node-013"]
    assert not any(e.file == "logs/node-005/xid.log" for e in d.evidence)
    assert any("logs/node-005/xid.log" in n and "symlink out of the bundle" in n for n in d.notes)


# --- fuzz: only the documented error escapes, and it names the file -----------------------------------------------

YAML_BITS = st.sampled_from(["job_id: 1\n", "nodes:\n", "  - {host: a, ranks: [0, 1]}\n", "gpus_per_node: ", "&a ",
                             "*a", "[", "]", "{", "}", ": ", "- ", "\n", "  ", "2026-13-45T00:00:00Z", "!!binary ",
                             "!!python/object:os.system ", "99999999999999999999", "'", '"', "<<: *a\n", "~", "#"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(YAML_BITS, st.text(max_size=8)), max_size=30))
def test_fuzz_job_yaml_raises_only_bundle_errors_naming_the_file(parts: list[str]) -> None:
    try:
        Job.from_yaml("".join(parts), "fuzz/job.yaml", ReadLimits(yaml_values=10_000, yaml_depth=8))
    except BundleError as exc:
        assert exc.file == "fuzz/job.yaml" and str(exc).startswith("fuzz/job.yaml")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600) | st.lists(st.sampled_from([b"\n", b" \n", b"\r\n", b"x", b"ab\n"]),
                                               max_size=400).map(b"".join),
       packing=st.sampled_from(["plain", "gz", "cut-gz", "zst", "cut-zst"]))
def test_fuzz_the_line_reader_keeps_every_line_and_its_number(tmp_path: Path, data: bytes, packing: str) -> None:
    name = "f.log" + {"plain": "", "gz": ".gz", "cut-gz": ".gz", "zst": ".zst", "cut-zst": ".zst"}[packing]
    raw = data
    if packing != "plain":
        raw = gzip.compress(data) if "gz" in packing else zstandard.ZstdCompressor().compress(data)
        raw = raw[: len(raw) // 2] if packing.startswith("cut") else raw
    path = tmp_path / name
    path.write_bytes(raw)
    issues: list[ReadIssue] = []
    chunks = LineChunks(path, "logs/" + name, issues, max_line=64, block=16)
    got = {first + i: line for first, lines in chunks for i, line in enumerate(lines)}
    assert all(i.file == "logs/" + name for i in issues)
    if packing.startswith("cut"):
        return
    expected = data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n") if data else []
    assert chunks.lines == len(expected)
    for n, line in enumerate(expected, start=1):
        if line.strip():
            assert got[n] == line[:64]
        else:
            assert got.get(n, b"").strip() == b""
