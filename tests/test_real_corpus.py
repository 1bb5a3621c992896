"""The real corpus (evals/real): every case loads, every indicating line is verbatim in its file, every source is
free of the reserved list; and add_case.py writes a case from a paste and refuses what is not verbatim."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from diagagent.telemetry import Bundle

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "evals" / "real"
CASES = sorted(p.parent for p in REAL.glob("*/*/truth.json"))
IDS = [f"{p.parent.name}/{p.name}" for p in CASES]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reserved_tool() -> Path | None:
    for parent in ROOT.parents:
        tool = parent / "shared" / "tools" / "reserved_source.py"
        if tool.is_file():
            return tool
    return None


@cache  # read once, not once per case: the schemata are the slow part of each case's check
def _known_faults() -> frozenset[str]:
    text = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
    ids = set(re.findall(r"`([a-z0-9]+(?:_[a-z0-9]+)+)`", text))
    for path in (ROOT / "knowledge" / "schemata").glob("*.yaml"):
        ids |= {s["fault"] for s in yaml.safe_load(path.read_text(encoding="utf-8"))["schemata"]}
    return frozenset(ids)


def _repo(source: str) -> str:
    m = re.match(r"https://github\.com/([^/]+/[^/]+)", source)
    return m.group(1).lower() if m else source.split("/")[2]


def test_corpus_size_spread_and_frozen_test_split() -> None:
    truths = [json.loads((c / "truth.json").read_text()) for c in CASES]
    repos = {_repo(t["source"]) for t in truths}
    assert len(CASES) >= 150, f"{len(CASES)} cases"
    assert len(repos) >= 60, f"{len(repos)} repositories"
    assert len(list(REAL.glob("test/*/truth.json"))) >= 50
    assert len({t["source"] for t in truths}) >= 0.9 * len(truths), "one thread gives one case, rarely two"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_loads_and_its_lines_are_verbatim(case: Path) -> None:
    with Bundle.open(case) as bundle:
        truth = bundle.truth
        assert truth is not None and bundle.job.job_id == case.name
        assert bundle.log_files or bundle.probe_files or bundle.stack_files  # a py-spy dump alone: dev:torchtitan-1342
    raw = json.loads((case / "truth.json").read_text())
    assert raw["source"].startswith("https://") and raw["confidence"] in ("high", "medium", "low")
    assert raw.get("note"), "a note says what is missing or unusual"
    assert raw["fault"] is None or raw["fault"] in _known_faults(), raw["fault"]
    assert 1 <= len(truth.indicating_lines) <= 5
    for ref in truth.indicating_lines:
        lines = (case / ref.file).read_bytes().decode("utf-8").split("\n")
        assert ref.text is not None and lines[ref.line - 1] == ref.text, f"{ref.file}:{ref.line} is not verbatim"
    known_hosts = {p.name for part in ("logs", "probes", "stacks") for p in (case / part).glob("*")}
    assert set(raw.get("faulty_nodes") or []) <= known_hosts


def test_every_source_is_free() -> None:
    tool = _reserved_tool()
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("shared/tools/reserved_source.py is not beside the checkout: sources cannot be checked")
        pytest.skip("shared/tools/reserved_source.py is not beside this checkout")
    reserved = _load(tool, "reserved_source").reserved
    sources = {json.loads((c / "truth.json").read_text())["source"] for c in CASES}
    assert not [s for s in sorted(sources) if reserved(s)]


def test_add_case_writes_a_bundle_and_refuses_what_is_not_verbatim(tmp_path: Path) -> None:
    add_case = _load(REAL / "add_case.py", "add_case")
    if _reserved_tool() is None:
        add_case._reserved = lambda url: False
    (tmp_path / "paste.txt").write_text(
        "worker-1: [rank9]: Traceback (most recent call last):\n"
        "worker-1: [rank9]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "worker-0: [rank0]: iteration 10 done\n"
        "worker-0: [rank0]: iteration 11 done\n", encoding="utf-8")
    note = {"id": "demo-1", "source": "https://github.com/example/repo/issues/1", "framework": "deepspeed",
            "category": "user_code", "fault": "cuda_illegal_memory_access", "stage": "training",
            "confidence": "low", "note": "made up for the test", "faulty_nodes": ["worker-1"],
            "logs": [{"path": "paste.txt", "split": r"^(?P<host>[\w-]+): "}],
            "indicating": [{"text": "RuntimeError: CUDA error: an illegal memory access was encountered"},
                           {"text": "iteration 1", "occurrence": 2, "role": "context"}]}
    annotation = tmp_path / "a.yaml"
    annotation.write_text(yaml.safe_dump(note), encoding="utf-8")
    folder = add_case.add_case(annotation, "dev", tmp_path / "real")
    truth = json.loads((folder / "truth.json").read_text())
    assert [(r["file"], r["line"], r["role"]) for r in truth["indicating_lines"]] == [
        ("logs/worker-1/stdout.log", 2, "cause"), ("logs/worker-0/stdout.log", 2, "context")]
    assert (folder / "logs/worker-0/stdout.log").read_text().endswith("[rank0]: iteration 11 done\n")
    with Bundle.open(folder) as bundle:
        assert bundle.job.hosts == ["worker-1", "worker-0"] and bundle.job.framework == "deepspeed"

    def refused(**change) -> str:
        annotation.write_text(yaml.safe_dump({**note, "id": "demo-2", **change}), encoding="utf-8")
        with pytest.raises(add_case.CaseError) as err:
            add_case.add_case(annotation, "dev", tmp_path / "real")
        return str(err.value)

    assert "not in the log verbatim" in refused(indicating=[{"text": "RuntimeError: CUDA error: illegal memory"}])
    assert "on 2 lines" in refused(indicating=[{"text": "iteration 1"}])
    assert "not log folders" in refused(faulty_nodes=["worker-7"])
    assert "exists" in refused(id="demo-1")
    add_case._reserved = lambda url: url.endswith("/issues/2")  # the shared list is hashed: stand in for it
    assert "reserved" in refused(source="https://github.com/example/repo/issues/2")
