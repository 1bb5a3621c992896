"""`collect k8s` with the real `kubectl` against a loopback API server serving the recorded JSON and logs of a failed
PyTorchJob (tests/kube_api.py): the bundle, its diagnosis, `--previous` logs, events, node conditions, bad refs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from diagagent.apps.cli import build_app as build_cli
from diagagent.telemetry.collect import CollectError, K8sCollector, K8sSource
from diagagent.telemetry.collect.k8s import parse_ref
from tests.kube_api import KubeAPI, kube_api, need_kubectl

BAD_NODE = "gke-a3-pool-1-b3e8"


@pytest.fixture(scope="module")
def api() -> Iterator[KubeAPI]:
    need_kubectl()
    with kube_api() as server:
        yield server


@pytest.fixture
def kubeconfig(api: KubeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = api.kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.setenv("DIAGAGENT_STATE_DIR", str(tmp_path / "state"))
    return path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_cli(), list(args))
    return result.exit_code, result.output


def test_collect_k8s_then_diagnose_names_the_bad_node(api: KubeAPI, kubeconfig: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    code, text = _cli("collect", "k8s", "ml/llama-ft", "-o", str(out), "--json")
    assert code == 0, text
    assert json.loads(text)["status"] == "failed"
    job = yaml.safe_load((out / "job.yaml").read_text())
    assert job["k8s"]["kind"] == "pytorchjob" and job["gpus_per_node"] == 8 and job["exit_code"] == 1
    assert [n["host"] for n in job["nodes"]] == ["gke-a3-pool-1-7c2f", "gke-a3-pool-1-9d41", BAD_NODE]
    restarted = out / "logs" / BAD_NODE
    assert (restarted / "llama-ft-worker-1.pytorch.previous.log").is_file()  # the run before the restart
    assert "/api/v1/namespaces/ml/pods/llama-ft-worker-1/log?container=pytorch&previous=true" in api.requests
    assert not any("previous" in r and "worker-0" in r for r in api.requests)  # only restarted containers
    assert "BackOff pod/llama-ft-worker-1" in (restarted / "k8s-events.log").read_text()
    assert "other-job" not in json.dumps([p.read_text() for p in out.rglob("k8s-events.log")])
    probe = json.loads((out / "probes" / BAD_NODE / "k8s-node-conditions.json").read_text())
    assert probe["status"] == "fail" and "Xid" in probe["detail"]
    assert "not-a-secret" not in "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())

    code, text = _cli("diagnose", str(out), "--json", "--no-submit")
    assert code == 0, text
    d = json.loads(text)
    assert [n["host"] for n in d["faulty_nodes"]] == [BAD_NODE] and d["fault"] == "gpu_ecc_uncorrectable"


def test_bad_refs_and_missing_jobs_are_clear_errors(api: KubeAPI, kubeconfig: Path, tmp_path: Path) -> None:
    with pytest.raises(CollectError, match="no PyTorchJob, JobSet or Job named 'nope' in namespace 'ml'"):
        K8sCollector().collect("ml/nope", tmp_path / "x")
    assert not (tmp_path / "x").exists()
    for bad in ("ml/../etc", "ML/Job", "a/b/c/d", "widget/ml/x"):
        with pytest.raises(CollectError):
            parse_ref(bad)
    assert parse_ref("llama-ft", "ml") == (None, "ml", "llama-ft")
    assert parse_ref("pytorchjob/ml/llama-ft") == ("pytorchjob", "ml", "llama-ft")


def test_an_existing_folder_that_is_not_a_collected_bundle_is_not_overwritten(api: KubeAPI, kubeconfig: Path,
                                                                              tmp_path: Path) -> None:
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    code, text = _cli("collect", "k8s", "ml/llama-ft", "-o", str(keep))
    assert code == 2 and "not an earlier collected bundle" in text and (keep / "notes.txt").read_text() == "mine"


def test_the_k8s_job_source_lists_and_collects_by_name(api: KubeAPI, kubeconfig: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    source = K8sSource(tmp_path / "collected", namespace="ml")
    assert [(r.job_id, r.status) for r in source.list()] == [("llama-ft", "failed")]
    path = source.path_of("llama-ft")
    assert (path / "job.yaml").is_file()
    before = len(api.requests)
    source.path_of("llama-ft")  # a finished job is collected once
    assert len(api.requests) == before + 3  # only the listing (three kinds)
    monkeypatch.setenv("DIAGAGENT_JOB_SOURCE", "k8s")
    monkeypatch.setenv("DIAGAGENT_K8S_NAMESPACE", "ml")
    code, text = _cli("diagnose", "llama-ft", "--json", "--no-submit")
    assert code == 0, text
    assert json.loads(text)["fault"] == "gpu_ecc_uncorrectable"
    code, text = _cli("diagnose", "llama-70b", "--json", "--no-submit")
    assert code == 2 and "Known jobs: llama-ft" in text
