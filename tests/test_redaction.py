"""Redaction before anything leaves the machine: the Redactor's placeholders and round trip, DIAGAGENT_REDACT, the LLM
agent against the loopback stub over HTTP (no host, IP, path, user or secret of the bundle in any request body, the
operator and the tools see real names), and what a shared Chroma server stores."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagagent.agent import Session
from diagagent.config import Settings
from diagagent.telemetry import Bundle
from diagagent.telemetry.redact import PLACEHOLDER, Redactor, is_loopback_url
from tests.openai_stub import OpenAIStub
from tests.test_schemata_backends import chroma_server  # noqa: F401 - the real `chroma run` fixture

CASE = Path(__file__).resolve().parent.parent / "evals" / "cases" / "megatron-ecc-watchdog-cascade"
HOSTS = ["sw-gpu-021", "sw-gpu-022", "sw-gpu-023", "sw-gpu-024"]
IPS = ["10.44.0.21", "10.44.0.22", "10.44.0.23", "10.44.0.24"]
PLANTED = [  # appended to sw-gpu-023's log: what a real job's output carries
    ("[2026-10-07 08:25:16] [ERROR] checkpoint save to /lustre/proj-atlas/alice-run7/ckpt/iter_0021932 failed: "
     "Input/output error (launched by USER=alice from /home/alice/src/megatron)"),
    ("[2026-10-07 08:25:16] [INFO] env WANDB_API_KEY=9f8e7d6c5b4a39281706 mirror https://alice:hunter2@"
     "pypi.corp.example.com/simple eth0 0c:42:a1:9f:00:11 peer 192.168.77.5"),
]
SECRETS = ["alice", "proj-atlas", "hunter2", "9f8e7d6c5b4a39281706", "pypi.corp.example.com", "0c:42:a1:9f:00:11",
           "192.168.77.5", "/home/alice", *HOSTS, *IPS]


# --- the Redactor ------------------------------------------------------------------------------------------


def test_placeholders_are_stable_and_map_back() -> None:
    r = Redactor(hosts=HOSTS, ips=IPS)
    text = "\n".join(PLANTED + ["sw-gpu-023:1021 NCCL INFO OOB eth0:10.44.0.23<0> logs/sw-gpu-023/stdout.log"])
    red = r.redact(text)
    assert not [s for s in SECRETS if s in red], red
    assert "host-3:1021" in red and "logs/host-3/stdout.log" in red and "ip-3<0>" in red
    assert "/home/user-1/src/megatron" in red and "USER=user-1" in red
    assert "path-1/ckpt/iter_0021932" in red  # the informative tail of a job path stays
    assert "Input/output error" in red and "mlx5" not in red
    assert r.redact(text) == red  # the same value gets the same placeholder every time
    assert r.restore(red) == text
    assert r.restore_value({"node": "host-3", "nodes": ["host-1", "host-12"]}) == {
        "node": "sw-gpu-023", "nodes": ["sw-gpu-021", "host-12"]}  # an unissued placeholder stays as it is


def test_what_is_not_identifying_is_left_alone() -> None:
    r = Redactor(hosts=HOSTS)
    text = ("[rank18]:[E1007 08:25:15.170000 ProcessGroupNCCL.cpp:632] Watchdog caught collective operation timeout"
            " NumelIn=1 Timeout(ms)=600000 Xid 48 PCI:0000:18:00.0 CUDA 12.4.1 tokens: 40960 user quota exceeded "
            'File "/usr/lib/python3.11/site-packages/torch/distributed/c10d.py", line 3')
    assert r.redact(text) == text


def test_secret_shapes() -> None:
    r = Redactor()
    for secret in ("sk-abcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnopqrstuvwxyz0123", "hf_abcdefghijklmnopqrstuvwx",
                   "AKIAABCDEFGHIJKLMNOP", "xoxb-123456789012-abcdefghij"):
        red = r.redact(f"found {secret} in the env dump")
        assert secret not in red and PLACEHOLDER.search(red), red
    assert r.redact('{"password": "s3cr3t!", "HF_TOKEN": "abcd1234"}') == \
        '{"password": "secret-6", "HF_TOKEN": "secret-7"}'


_word = st.sampled_from(["error", "rank", "NCCL", "timeout", "on", "at", "Xid", "79", "GPU", "=", ":", ",", "(", "/"])
_sensitive = st.sampled_from(["sw-gpu-022", "10.44.0.22", "/home/bob/x", "/scratch/team/run/ckpt", "USER=bob",
                              "aa:bb:cc:dd:ee:ff", "token=abcdef123456", "https://u:pw@h.example.com/"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_word, _sensitive), min_size=1, max_size=12))
def test_redact_then_restore_is_the_identity(parts: list[str]) -> None:
    r = Redactor(hosts=HOSTS, ips=IPS)
    text = " ".join(parts)
    red = r.redact(text)
    assert r.restore(red) == text
    for leak in ("sw-gpu-022", "10.44.0.22", "bob", "aa:bb:cc", "abcdef123456", ":pw@", "/scratch/team"):
        assert leak not in red


def test_redact_setting() -> None:
    assert is_loopback_url("http://127.0.0.1:8080/v1") and is_loopback_url("http://localhost:1/v1")
    assert is_loopback_url("http://[::1]:8000") and not is_loopback_url("https://api.openai.com/v1")
    assert not is_loopback_url("http://10.0.0.5:8000/v1") and not is_loopback_url(None)
    remote, local = "https://llm.example.com/v1", "http://127.0.0.1:9/v1"
    assert Settings(redact="auto").redact_for(remote) and not Settings(redact="auto").redact_for(local)
    assert Settings(redact="on").redact_for(local) and not Settings(redact="off").redact_for(remote)


def test_redact_setting_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_REDACT", "off")
    assert Settings.load().redact == "off"
    monkeypatch.setenv("DIAGAGENT_REDACT", "sometimes")
    with pytest.raises(ValueError, match="redact"):
        Settings.load()


# --- the LLM agent over HTTP -------------------------------------------------------------------------------


@pytest.fixture()
def planted_case(tmp_path: Path) -> tuple[Path, int]:
    case = tmp_path / "case"
    shutil.copytree(CASE, case)
    log = case / "logs" / "sw-gpu-023" / "stdout.log"
    lines = log.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join(lines + PLANTED) + "\n", encoding="utf-8")
    return case, len(lines) + 1


def _tool_text(request: dict, name: str) -> str:
    ids = {c["id"]: c["function"]["name"] for m in request["messages"] for c in m.get("tool_calls") or []}
    return next(m["content"] for m in reversed(request["messages"])
                if m["role"] == "tool" and ids.get(m.get("tool_call_id")) == name)


def _script(planted_line: int) -> list:
    def submit(request: dict) -> dict:
        draft = json.loads(_tool_text(request, "draft_diagnosis"))
        path = re.search(r"(path-\d+)/ckpt/iter_0021932", _tool_text(request, "show_lines"))
        return {"tool_calls": [{"name": "DiagnosisSubmission", "arguments": {
            "category": "hardware", "fault": "gpu_ecc_uncorrectable", "confidence": 0.9, "stage": "training",
            "root_cause": f"Xid 48 on host-3 (ip-3); checkpoint under {path.group(1) if path else '?'} failed",
            "faulty_nodes": [{"host": "host-3", "score": 0.95, "reason": "Xid 48 on host-3"}],
            "evidence": [e["id"] for e in draft["evidence"][:2]]}}]}

    return [
        {"tool_calls": [{"name": "overview", "arguments": {}}, {"name": "draft_diagnosis", "arguments": {}}]},
        {"tool_calls": [{"name": "show_lines", "arguments": {"file": "logs/host-3/stdout.log",
                                                              "line": planted_line, "context": 1}},
                        {"name": "node_health", "arguments": {"node": "host-3"}}]},
        submit,
        {"content": "host-3 had the Xid 48; host-2 only timed out in the watchdog."},
    ]


def _run(case: Path, planted_line: int, redact: str) -> tuple[Session, list[dict], list[dict]]:
    events: list[dict] = []
    with OpenAIStub(_script(planted_line)) as stub, Bundle.open(case) as bundle:
        settings_ = Settings.load(llm_base_url=stub.base_url, llm_model="stub-model", llm_api_key="sk-test",
                                  redact=redact)
        session = Session(bundle, settings_, on_event=events.append)
        session.diagnose()
        session.ask("why not sw-gpu-022? it logged the timeout at 10.44.0.22 first")
        return session, stub.requests, [e for e in events if e["type"] == "tool_end"]


def test_nothing_identifying_reaches_the_llm_endpoint(planted_case: tuple[Path, int]) -> None:
    case, line = planted_case
    session, requests, tool_events = _run(case, line, "on")
    assert len(requests) == 4
    bodies = [json.dumps(r) for r in requests]
    leaks = sorted({s for s in SECRETS for body in bodies if s in body})
    assert not leaks, f"sent to the endpoint: {leaks}"
    # the tools got real arguments: show_lines found the planted line, node_health the real node
    shown = _tool_text(requests[2], "show_lines")
    assert re.search(r"path-\d+/ckpt/iter_0021932", shown) and "/home/user-1/src/megatron" in shown, shown
    node_health = json.loads(_tool_text(requests[2], "node_health"))
    assert node_health["nodes"][0]["host"] == "host-3" and node_health["nodes"][0]["verdict"] == "faulty"
    # the operator sees real names: in the diagnosis, the answer, and the tool calls shown live
    d = session.diagnosis
    assert d is not None and d.faulty_hosts == ["sw-gpu-023"]
    assert d.root_cause == "Xid 48 on sw-gpu-023 (10.44.0.23); checkpoint under /lustre/proj-atlas/alice-run7 failed"
    assert d.faulty_nodes[0].reason == "Xid 48 on sw-gpu-023"
    assert session.answers[0].markdown == "sw-gpu-023 had the Xid 48; sw-gpu-022 only timed out in the watchdog."
    live = next(e for e in tool_events if e["tool"] == "show_lines")
    assert live["args"]["file"] == "logs/sw-gpu-023/stdout.log" and "/home/alice/src/megatron" in live["result"]


def test_the_same_run_without_redaction_leaks(planted_case: tuple[Path, int]) -> None:
    """The control: with DIAGAGENT_REDACT=off the stub sees the real names, so the test above can fail."""
    case, line = planted_case
    session, requests, _ = _run(case, line, "off")
    bodies = " ".join(json.dumps(r) for r in requests)
    assert "sw-gpu-023" in bodies and "sw-gpu-022" in bodies and "10.44.0.22" in bodies
    d = session.diagnosis  # the model's placeholders mean nothing without the mapping: its answer is set aside
    assert d is not None and "'host-3', not a host of this job" in (d.llm_unavailable or "")
    assert d.faulty_hosts == ["sw-gpu-023"]  # the playbook's answer


def test_loopback_endpoint_is_not_redacted_by_default(planted_case: tuple[Path, int]) -> None:
    case, _ = planted_case
    with Bundle.open(case) as bundle:
        assert Session(bundle, Settings.load(llm_base_url="http://127.0.0.1:9/v1")).redactor is None
        remote = Session(bundle, Settings.load(llm_base_url="https://llm.example.com/v1"))
        assert remote.redactor is not None and remote.redactor.redact("sw-gpu-021") == "host-1"


# --- a shared Chroma server ---------------------------------------------------------------------------------


def test_seed_schemata_pass_through_redaction_unchanged() -> None:
    from diagagent.config import packaged_content_dir
    from diagagent.schemata import read_schemata_dir
    from diagagent.schemata.cache import redacted_schema

    seeds = read_schemata_dir(packaged_content_dir("knowledge") / "schemata")
    assert len(seeds) >= 40
    changed = [s.id for s in seeds if redacted_schema(s, Redactor()) != s]
    assert not changed  # shipped knowledge names no site: a shared server gets it as it is


def test_a_shared_chroma_server_stores_no_site_names(chroma_server: str, tmp_path: Path) -> None:  # noqa: F811
    import chromadb

    from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence, NodeScore
    from diagagent.schemata import SchemaCache

    settings_ = Settings(state_dir=tmp_path / "state", chroma_url=chroma_server, redact="on")
    cache = SchemaCache.open(settings_)
    evidence = [Evidence(id="e1", kind="log", role="cause", host="sw-gpu-023", file="logs/sw-gpu-023/stdout.log",
                         line=3, text=PLANTED[0]),
                Evidence(id="e2", kind="log", role="symptom", host="sw-gpu-023", text=PLANTED[1])]
    diagnosis = Diagnosis(job_id="1183402", fault="site_storage_eio", category="infrastructure",
                          root_cause="Lustre OST behind /lustre/proj-atlas returned EIO to sw-gpu-023 (10.44.0.23)",
                          faulty_nodes=[NodeScore(host="sw-gpu-023", score=0.9)], evidence=evidence,
                          proposals=[ActionProposal(kind="evict", nodes=["sw-gpu-023"], reason="evict sw-gpu-023")])
    learned = cache.learn(diagnosis, "alice", "confirmed")
    assert learned.fault == "site_storage_eio" and "host-1" in learned.root_cause
    raw = chromadb.HttpClient(host="127.0.0.1", port=int(chroma_server.rsplit(":", 1)[1]))
    stored = raw.get_collection(cache.collection.name).get(ids=[learned.id], include=["documents", "metadatas"])
    text = json.dumps(stored)
    assert learned.id in text
    leaks = [s for s in SECRETS if s in text]
    assert not leaks, f"stored on the shared server: {leaks}"
    # learning is still useful: the same failure on other hosts finds the schema
    hits = cache.search(["checkpoint save to /lustre/other/run/ckpt/iter_1 failed: Input/output error"], k=3)
    assert learned.id in [h.id for h in hits]


def test_a_loopback_chroma_server_is_not_redacted_by_default(tmp_path: Path) -> None:
    from diagagent.schemata import SchemaCache

    assert not SchemaCache.open(Settings(state_dir=tmp_path, chroma_url=None)).shared
    assert Settings(chroma_url="http://127.0.0.1:8000").redact_for("http://127.0.0.1:8000") is False
    assert Settings(chroma_url="https://chroma.example.com").redact_for("https://chroma.example.com")
