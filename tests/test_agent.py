"""The agent end to end: the playbook on a simulated incident, and the LLM agent through the real openai client
over HTTP against a local OpenAI-compatible stub (tool calls, structured submission, loop guards, fallbacks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagagent.agent import Session
from diagagent.config import Settings
from diagagent.sim import simulate
from diagagent.telemetry import Bundle
from tests.openai_stub import OpenAIStub


@pytest.fixture(scope="module")
def ecc_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim") / "job"
    simulate(out, "gpu_ecc_uncorrectable", nodes=8, seed=5, minutes=20)
    return out


def llm_settings(base_url: str, **extra: object) -> Settings:
    return Settings.load(llm_base_url=base_url, llm_model="stub-model", llm_api_key="sk-test", **extra)


def tool_results(request: dict) -> dict[str, dict]:
    """The JSON results of the tool calls so far, by tool name (the last call of each)."""
    names = {}
    for m in request["messages"]:
        for call in m.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
    return {names.get(m.get("tool_call_id"), "?"): json.loads(m["content"])
            for m in request["messages"] if m["role"] == "tool" and m["content"].startswith("{")}


def submit_from_draft(request: dict) -> dict:
    """A scripted model turn: submit the draft's conclusion, citing its evidence plus one made-up id (dropped); a
    made-up host would set the whole submission aside (tests/test_llm_guard.py)."""
    draft = tool_results(request)["draft_diagnosis"]
    return {"tool_calls": [{"name": "DiagnosisSubmission", "arguments": {
        "category": draft["category"], "fault": draft["fault"], "root_cause": "ECC error on " +
        draft["faulty_nodes"][0]["host"], "confidence": 0.9, "stage": draft["stage"], "iteration": draft["iteration"],
        "faulty_nodes": [{"host": draft["faulty_nodes"][0]["host"], "score": 0.95, "reason": "Xid 48",
                          "evidence": [draft["evidence"][0]["id"]]}],
        "evidence": [e["id"] for e in draft["evidence"][:3]] + ["e999"]}}]}


def test_playbook_diagnoses_simulated_ecc_failure(ecc_bundle: Path) -> None:
    with Bundle.open(ecc_bundle) as bundle:
        truth = bundle.truth
        events: list[str] = []
        session = Session(bundle, on_event=lambda e: events.append(e["type"]))
        d = session.diagnose()
        assert session.mode == "playbook"
        assert d.fault == truth.fault and d.category == truth.category
        assert d.faulty_hosts[0] == truth.faulty_nodes[0]
        assert d.stage == truth.stage and abs(d.iteration - truth.iteration) <= 1
        cited = {(e.file, e.line) for e in d.evidence if e.role == "cause"}
        assert cited & {(r.file, r.line) for r in truth.indicating_lines}
        assert {p.kind for p in d.proposals} == {"evict", "restart"}
        assert "analyzer_start" in events and "tool_end" in events
        answer = session.ask("which nodes?")
        assert truth.faulty_nodes[0] in answer.markdown
        healthy = next(h for h in bundle.job.hosts if h not in truth.faulty_nodes)
        why_not = session.ask(f"why not {healthy}?")
        assert f"{healthy} is not named faulty" in why_not.markdown
        assert [c.tool for c in why_not.tool_calls] == ["node_health", "log_nodes"]
        assert "approve" in session.ask("what should we do?").markdown


def test_llm_agent_through_openai_client(ecc_bundle: Path) -> None:
    script = [
        {"tool_calls": [{"name": "overview", "arguments": {}}, {"name": "draft_diagnosis", "arguments": {}}]},
        {"tool_calls": [{"name": "log_events", "arguments": {"top": 3, "role": "cause"}}]},
        submit_from_draft,
        {"content": "The faulty node is the one with the Xid 48 (see e1)."},
    ]
    with OpenAIStub(script) as stub, Bundle.open(ecc_bundle) as bundle:
        session = Session(bundle, llm_settings(stub.base_url))
        d = session.diagnose()
        truth = bundle.truth
        assert session.mode == "llm"
        assert d.fault == truth.fault and d.faulty_hosts == [truth.faulty_nodes[0]]
        assert all(session.ctx.analyses.evidence.get(e.id) == e for e in d.evidence)
        assert any("e999" in n for n in d.notes) and d.llm_unavailable is None
        assert {p.kind for p in d.proposals} == {"evict", "restart"}
        first = stub.requests[0]
        assert first["model"] == "stub-model"
        assert first["messages"][0]["role"] == "system" and "untrusted telemetry" in first["messages"][0]["content"]
        offered = {t["function"]["name"] for t in first["tools"]}
        assert {"draft_diagnosis", "log_events", "propose_action", "DiagnosisSubmission"} <= offered
        assert not any("approve" in name or "execute" in name for name in offered)
        assert session.usage.llm_calls == 3 and session.usage.tokens_in > 0
        answer = session.ask("which node?")
        assert answer.mode == "llm" and "Xid 48" in answer.markdown
        assert stub.requests[-1]["messages"][-1]["content"].rstrip().endswith("Question: which node?")


def test_llm_unreachable_falls_back_to_playbook(ecc_bundle: Path) -> None:
    with Bundle.open(ecc_bundle) as bundle:
        session = Session(bundle, llm_settings("http://127.0.0.1:9/v1", llm_timeout_s=2.0))
        d = session.diagnose()
    assert d.fault == "gpu_ecc_uncorrectable"
    assert "failed" in d.notes[0] and "playbook" in d.notes[0]


def test_step_limit_and_repeat_guard(ecc_bundle: Path) -> None:
    loop = {"tool_calls": [{"name": "log_nodes", "arguments": {"top": 2}}]}
    with OpenAIStub([loop], repeat_last=True) as stub, Bundle.open(ecc_bundle) as bundle:
        session = Session(bundle, llm_settings(stub.base_url, llm_max_steps=4))
        d = session.diagnose()
        assert len(stub.requests) == 4
        tool_msgs = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "tool"]
        assert "already called log_nodes" in tool_msgs[-1]
    assert "did not submit a diagnosis within 4 steps" in d.notes[0]
    assert d.fault == "gpu_ecc_uncorrectable"


def test_diagnose_command_json(ecc_bundle: Path) -> None:
    from typer.testing import CliRunner

    from diagagent.apps.cli import build_app

    result = CliRunner().invoke(build_app(), ["diagnose", str(ecc_bundle), "--json", "--no-submit"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    assert d["fault"] == "gpu_ecc_uncorrectable" and d["evidence"][0]["file"]


def test_eval_with_the_llm_agent_reports_calls_and_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`diagagent eval --agent llm` over real-format cases: each case is one scripted conversation with the stub."""
    from typer.testing import CliRunner

    from diagagent.apps.cli import build_app

    def model(request: dict) -> dict:
        if "draft_diagnosis" in tool_results(request):
            return submit_from_draft(request) if tool_results(request)["draft_diagnosis"]["faulty_nodes"] else {
                "tool_calls": [{"name": "DiagnosisSubmission", "arguments": {
                    "category": tool_results(request)["draft_diagnosis"]["category"], "root_cause": "as drafted",
                    "confidence": 0.5}}]}
        return {"tool_calls": [{"name": "draft_diagnosis", "arguments": {}}]}

    cases = Path(__file__).resolve().parent.parent / "evals" / "cases"
    out = tmp_path / "scores.json"
    with OpenAIStub([model], repeat_last=True) as stub:
        monkeypatch.setenv("DIAGAGENT_LLM_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        result = CliRunner().invoke(build_app(), ["eval", str(cases / "torchrun-1node-8gpu-xid79"),
                                                  str(cases / "deepspeed-zero3-cuda-oom"), "--agent", "llm",
                                                  "--json", str(out)])
        assert result.exit_code == 0, result.output
        assert len(stub.requests) == 4  # two model turns per case
    scores = json.loads(out.read_text())
    assert scores["cases"] == 2 and scores["category_accuracy"] == 1.0
    assert all(c["llm_calls"] == 2 and c["tokens_in"] > 0 and c["tokens_out"] > 0 for c in scores["per_case"])
