"""The fallback guard: a model's submission that cites nothing valid, names hosts outside the job or contradicts
decisive evidence is set aside for the playbook's diagnosis, with a note saying why (scripted over HTTP by the stub)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagagent.agent import Session
from diagagent.config import Settings
from diagagent.telemetry import Bundle
from tests.openai_stub import OpenAIStub

CASES = Path(__file__).resolve().parent.parent / "evals" / "cases"
DECISIVE = CASES / "megatron-ecc-watchdog-cascade"  # a line proves gpu_ecc_uncorrectable on sw-gpu-023
UNDECIDED = CASES / "megatron-thermal-straggler"  # only a past failure's schema: no line proves the fault
DRAFT = {"tool_calls": [{"name": "draft_diagnosis", "arguments": {}}]}


def _draft(request: dict[str, Any]) -> dict[str, Any]:
    ids = {c["id"]: c["function"]["name"] for m in request["messages"] for c in m.get("tool_calls") or []}
    return next(json.loads(m["content"]) for m in reversed(request["messages"])
                if m["role"] == "tool" and ids.get(m.get("tool_call_id")) == "draft_diagnosis")


def submission(**change: Any) -> Any:
    """A scripted model turn: the draft's conclusion and evidence, with `change` applied (callables get the draft)."""
    def turn(request: dict[str, Any]) -> dict[str, Any]:
        draft = _draft(request)
        args = {"category": draft["category"], "fault": draft["fault"], "confidence": 0.8,
                "root_cause": "as the evidence shows", "stage": draft["stage"], "iteration": draft["iteration"],
                "faulty_nodes": [{"host": n["host"], "score": 0.9} for n in draft["faulty_nodes"][:1]],
                "evidence": [e["id"] for e in draft["evidence"][:3]]}
        args.update({k: v(draft) if callable(v) else v for k, v in change.items()})
        return {"tool_calls": [{"name": "DiagnosisSubmission", "arguments": args}]}

    return turn


def run(case: Path, turn: Any, **settings: Any) -> tuple[Session, Any]:
    with OpenAIStub([DRAFT, turn]) as stub, Bundle.open(case) as bundle:
        session = Session(bundle, Settings.load(llm_base_url=stub.base_url, llm_model="weak", llm_api_key="sk-test",
                                                **settings))
        diagnosis = session.diagnose()
        assert len(stub.requests) == 2
    return session, diagnosis


def playbook(case: Path) -> Any:
    with Bundle.open(case) as bundle:
        return Session(bundle, use_llm=False).diagnose()


def assert_fell_back(session: Session, d: Any, case: Path, *why: str) -> None:
    pb = playbook(case)
    assert (d.fault, d.category, d.faulty_hosts, [(e.file, e.line) for e in d.evidence]) == (
        pb.fault, pb.category, pb.faulty_hosts, [(e.file, e.line) for e in pb.evidence])
    assert d.notes[0].startswith("the LLM's submission was set aside") and "playbook's diagnosis is shown" in d.notes[0]
    assert d.llm_unavailable and all(w in d.notes[0] for w in why), d.notes[0]
    assert session.usage.submitted and session.usage.fallback == d.llm_unavailable


def test_a_submission_citing_no_valid_evidence_falls_back() -> None:
    session, d = run(DECISIVE, submission(evidence=["e999", "e1000"],
                                          faulty_nodes=lambda dr: [{"host": dr["faulty_nodes"][0]["host"], "score": 1,
                                                                    "evidence": ["e998"]}]))
    assert_fell_back(session, d, DECISIVE, "cites no evidence id that a tool showed", "'e999'")


def test_a_submission_citing_nothing_falls_back() -> None:
    session, d = run(DECISIVE, submission(evidence=[]))
    assert_fell_back(session, d, DECISIVE, "(it cites none)")


def test_a_submission_naming_a_host_outside_the_job_falls_back() -> None:
    session, d = run(DECISIVE, submission(faulty_nodes=lambda dr: [
        {"host": dr["faulty_nodes"][0]["host"], "score": 0.9}, {"host": "node-999", "score": 0.5}]))
    assert_fell_back(session, d, DECISIVE, "'node-999', not a host of this job")


def test_a_submission_contradicting_the_decisive_fault_falls_back() -> None:
    session, d = run(DECISIVE, submission(category="network", fault="nccl_timeout"))
    assert_fell_back(session, d, DECISIVE, "it says nccl_timeout (network)", "proves gpu_ecc_uncorrectable",
                     "logs/sw-gpu-023/stdout.log:11")
    session, d = run(DECISIVE, submission(fault=None))  # not naming what a line proves is no better
    assert_fell_back(session, d, DECISIVE, "it says no fault (hardware)")


def test_a_submission_blaming_another_node_than_the_decisive_line_falls_back_naming_real_hosts() -> None:
    """Redacted: the model only knows placeholders; the operator's note names the real hosts."""
    holder: dict[str, Session] = {}

    def blame_healthy(request: dict[str, Any]) -> dict[str, Any]:
        healthy = holder["session"].redactor.redact("sw-gpu-022")
        assert healthy != "sw-gpu-022"
        return submission(faulty_nodes=[{"host": healthy, "score": 0.9}])(request)

    with OpenAIStub([DRAFT, blame_healthy]) as stub, Bundle.open(DECISIVE) as bundle:
        session = Session(bundle, Settings.load(llm_base_url=stub.base_url, llm_model="weak", llm_api_key="sk-test",
                                                redact="on"))
        holder["session"] = session
        d = session.diagnose()
    assert_fell_back(session, d, DECISIVE, "it blames sw-gpu-022", "decisive line (e1, logs/sw-gpu-023/stdout.log:11) "
                                                                   "is on sw-gpu-023")


def test_a_valid_submission_stands_where_no_line_decides() -> None:
    """Not a veto on disagreement: with no decisive line, a model citing real evidence may name another fault."""
    session, d = run(UNDECIDED, submission(fault="gpu_hang", root_cause="a GPU hung"))
    assert d.fault == "gpu_hang" and d.root_cause == "a GPU hung" and d.llm_unavailable is None
    assert session.usage.submitted and session.usage.fallback is None
    session, d = run(DECISIVE, submission())  # agreeing with the decisive line: it stands
    assert d.llm_unavailable is None and d.root_cause == "as the evidence shows"


def test_a_submission_the_agent_cannot_resolve_falls_back_instead_of_crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    from diagagent.agent import llm

    def broken(*args: Any) -> Any:
        raise KeyError("e1")

    monkeypatch.setattr(llm, "resolve_submission", broken)
    _, d = run(DECISIVE, submission())
    assert "could not be used (KeyError" in d.notes[0] and d.fault == "gpu_ecc_uncorrectable"


def test_eval_reports_per_case_whether_the_model_submitted_and_whether_it_fell_back(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch
                                                                                     ) -> None:
    from typer.testing import CliRunner

    from diagagent.apps.cli import build_app

    good, bad = submission(), submission(faulty_nodes=[{"host": "node-999", "score": 1}])

    def model(request: dict[str, Any]) -> dict[str, Any]:
        if not any(m.get("tool_calls") for m in request["messages"] if m["role"] == "assistant"):
            return DRAFT
        return (bad if "gpt-13b-0211" in json.dumps(request["messages"][:2]) else good)(request)

    out = tmp_path / "scores.json"
    with OpenAIStub([model], repeat_last=True) as stub:
        monkeypatch.setenv("DIAGAGENT_LLM_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("COLUMNS", "200")  # the per-case table on one line per case
        result = CliRunner().invoke(build_app(), ["eval", str(CASES / "k8s-ib-link-flap"), str(DECISIVE),
                                                  "--agent", "llm", "--json", str(out)])
    assert result.exit_code == 0, result.output
    per_case = {c["case"]: c for c in json.loads(out.read_text())["per_case"]}
    assert per_case["k8s-ib-link-flap"]["llm_submitted"] and "node-999" in per_case["k8s-ib-link-flap"]["llm_fallback"]
    assert per_case[DECISIVE.name]["llm_submitted"] and per_case[DECISIVE.name]["llm_fallback"] is None
    rows = {line.split("│")[2].strip(): line for line in result.output.splitlines() if line.count("│") > 7}
    cells = {case: [c.strip() for c in line.split("│")[-3:-1]] for case, line in rows.items()}
    assert "fell back" in result.output and cells == {"k8s-ib-link-flap": ["yes", "yes"], DECISIVE.name: ["yes", "no"]}



@pytest.mark.parametrize("cap", [512, None])
def test_a_rambling_model_is_cut_off_at_the_output_cap(cap: int | None) -> None:
    """DIAGAGENT_LLM_MAX_OUTPUT_TOKENS goes out as max_tokens, the field llama.cpp's, vLLM's and Ollama's servers read."""
    with OpenAIStub([DRAFT, submission()]) as stub, Bundle.open(DECISIVE) as bundle:
        d = Session(bundle, Settings.load(llm_base_url=stub.base_url, llm_model="weak",
                                          llm_max_output_tokens=cap)).diagnose()
    assert d.llm_unavailable is None and len(stub.requests) == 2
    assert [r.get("max_tokens") for r in stub.requests] == [cap, cap]



@pytest.mark.parametrize("server", ["openai", "llama-cpp-python"])
def test_the_llama_cpp_python_dialect(server: str) -> None:
    """llama-cpp-python's server answers tool_choice=required with a 500 and rejects a null content (an assistant
    turn that only calls tools); DIAGAGENT_LLM_SERVER=llama-cpp-python sends auto and "" instead."""
    with OpenAIStub([DRAFT, submission()]) as stub, Bundle.open(DECISIVE) as bundle:
        d = Session(bundle, Settings.load(llm_base_url=stub.base_url, llm_model="weak", llm_server=server)).diagnose()
    assert d.llm_unavailable is None
    assert [r.get("tool_choice") for r in stub.requests] == ["required" if server == "openai" else "auto"] * 2
    tool_turn = stub.requests[1]["messages"][2]
    assert tool_turn["role"] == "assistant" and tool_turn["tool_calls"]
    assert tool_turn["content"] == (None if server == "openai" else "")
