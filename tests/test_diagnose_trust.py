"""Issue 18 items 2, 3, 5 and 7 through the real CLI on the example bundle: the ledger's state in the report and the
CLI, the cited lines kept in the ledger and what approving runs, a failing LLM said first, and why the confidence."""

from __future__ import annotations

import json
import os
import pwd
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diagagent.actions import Ledger, approve_and_execute
from diagagent.apps.cli import build_app
from diagagent.config import Settings

EXAMPLE = Path(__file__).parent.parent / "examples" / "job-42"
ME = pwd.getpwuid(os.geteuid()).pw_name


@pytest.fixture
def operators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_APPROVERS", '["alice"]')
    monkeypatch.setenv("DIAGAGENT_ADMINS", f'["{ME}"]')
    monkeypatch.setenv("COLUMNS", "200")


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.output


def test_reports_and_the_cli_show_the_ledger_state_and_the_ledger_keeps_cited_lines(
        tmp_path: Path, operators: None) -> None:
    code, out = cli("diagnose", str(EXAMPLE), "--report", str(tmp_path / "first.md"))
    assert code == 0, out
    first = (tmp_path / "first.md").read_text()
    assert "#1 pending" in first and "diagagent actions approve 1" in first
    assert "approve with" in out

    # item 3: what approving runs, and each cited line whole (file, line, host, rank, text), not per-run ids
    code, out = cli("actions", "show", "1")
    assert code == 0, out
    assert "scontrol update nodename=node-013 state=drain" in out and "dry-run" in out
    assert "logs/node-013/" in out and "Xid" in out and not re.search(r"evidence\s+e\d", out)
    shown = json.loads(cli("actions", "show", "1", "--json")[1])
    cited = shown["entry"]["cited"]
    assert cited and all(c["file"] and c["line"] and c["text"] for c in cited if c["kind"] in ("log", "probe"))
    assert any(c["host"] == "node-013" for c in cited)
    assert shown["would_run"]["commands"]
    assert cli("actions", "verify")[0] == 0  # the kept lines are part of what the audit trail vouches for

    # item 2: decided actions are reported as decided, with no command to approve them
    cfg = Settings.load()  # alice decides (whoever ran the diagnosis proposed them, so cannot)
    assert approve_and_execute(Ledger.from_settings(cfg), 1, "alice", cfg, "dcgmi confirms").state == "executed"
    assert Ledger.from_settings(cfg).reject(2, "alice", "the checkpoint is fine").state == "rejected"
    code, out = cli("diagnose", str(EXAMPLE), "--report", str(tmp_path / "second.html"))
    assert code == 0, out
    second = (tmp_path / "second.html").read_text()
    assert "#1 executed" in second and "#2 rejected" in second
    assert "why that confidence" in second and "to settle it:" in second  # item 7, in the report too
    assert "pending" not in second.split("Proposed actions")[1].split("</table>")[0]
    assert "actions approve" not in second
    assert "executed" in out and "rejected" in out and "pending" not in out and "approve with" not in out
    code, out = cli("diagnose", str(EXAMPLE), "--no-submit", "--report", str(tmp_path / "third.md"))
    assert code == 0 and "#1 executed" in (tmp_path / "third.md").read_text()


def test_a_failing_llm_is_said_first_and_marked_in_the_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on the discard port
    monkeypatch.setenv("DIAGAGENT_LLM_TIMEOUT_S", "2")
    monkeypatch.setenv("COLUMNS", "200")
    code, out = cli("diagnose", str(EXAMPLE), "--llm", "--no-submit")
    assert code == 0
    assert out.lstrip().startswith("LLM unavailable, offline playbook answer")
    assert out.index("LLM unavailable") < out.index("category")
    result = CliRunner().invoke(build_app(), ["diagnose", str(EXAMPLE), "--llm", "--no-submit", "--json"])
    d = json.loads(result.stdout)
    assert d["llm_unavailable"] and "127.0.0.1:9" in d["llm_unavailable"] and d["fault"] == "gpu_ecc_uncorrectable"
    monkeypatch.delenv("DIAGAGENT_LLM_BASE_URL")
    result = CliRunner().invoke(build_app(), ["diagnose", str(EXAMPLE), "--llm", "--no-submit", "--json"])
    assert "DIAGAGENT_LLM_BASE_URL" in json.loads(result.stdout)["llm_unavailable"]


def test_the_confidence_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(build_app(), ["diagnose", str(EXAMPLE), "--no-submit", "--json"])
    d = json.loads(result.stdout)
    why = d["confidence_why"]
    assert why["basis"].startswith(f"{d['confidence']:.0%}")
    assert any("xid" in r.lower() for r in why["raised"]) and why["check"]
    code, out = cli("diagnose", str(EXAMPLE), "--no-submit")
    assert code == 0 and "  + " in out and "to settle it:" in out
