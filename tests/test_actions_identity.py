"""Who may approve, through the real CLI and the real Ledger: the OS user (never LOGNAME/USER), `--as` only for an
operator in DIAGAGENT_ADMINS (audited as "X acting as Y"), never whoever asked for the diagnosis, names casefolded.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from diagagent.actions import Ledger, NotAuthorized, approve_and_execute
from diagagent.apps.cli import build_app
from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal
from tests.test_actions_proposals import make_job

ME = pwd.getpwuid(os.geteuid()).pw_name
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "job-42"
EVICT = ActionProposal(kind="evict", nodes=["node-003"], reason="Xid 79 on node-003")


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Job 42 in the jobs dir; LOGNAME and friends say alice, who is an approver; the OS user is someone else."""
    assert ME.casefold() not in ("alice", "bob", "carol")
    root = tmp_path / "jobs" / "42"
    root.mkdir(parents=True)
    (root / "job.yaml").write_text(yaml.safe_dump(make_job().model_dump(mode="json")))
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(tmp_path / "jobs"))
    monkeypatch.setenv("DIAGAGENT_APPROVERS", '["alice", "bob"]')
    monkeypatch.delenv("DIAGAGENT_ADMINS", raising=False)
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(var, "alice")
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "jobs"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.output


def proposed_by_carol() -> tuple[Ledger, int]:
    ledger = Ledger.from_settings(Settings.load())
    return ledger, ledger.submit("42", EVICT, "carol").id


def test_logname_and_user_do_not_change_who_you_are(jobs: Path) -> None:
    ledger, entry_id = proposed_by_carol()
    code, out = run("actions", "approve", str(entry_id), "--yes")
    assert code == 1 and f"approval refused: {ME} is not an approver" in out
    assert ledger.get(entry_id).state == "pending"
    assert [(a.actor, a.event) for a in ledger.audit(entry_id)][-1] == (ME, "approve_refused")


def test_as_without_admin_rights_is_refused_and_audited(jobs: Path) -> None:
    ledger, entry_id = proposed_by_carol()
    for command in ("approve", "reject"):
        code, out = run("actions", command, str(entry_id), "--as", "alice", "--yes" if command == "approve"
                        else "--reason=no")
        assert code == 1 and f"{ME} may not act as alice" in out and "DIAGAGENT_ADMINS" in out
    assert ledger.get(entry_id).state == "pending"
    refused = [(a.actor, a.event) for a in ledger.audit(entry_id) if a.event.endswith("_refused")]
    assert refused == [(f"{ME} acting as alice", "approve_refused"), (f"{ME} acting as alice", "reject_refused")]


def test_an_admin_may_act_as_an_approver_and_is_audited_as_such(jobs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_ADMINS", f'["{ME.upper()}"]')  # names compare casefolded
    ledger, entry_id = proposed_by_carol()
    code, out = run("actions", "approve", str(entry_id), "--as", "Alice", "--yes")
    assert code == 0, out
    done = ledger.get(entry_id)
    assert (done.state, done.decided_by) == ("executed", f"{ME} acting as Alice")
    assert [(a.actor, a.event) for a in ledger.audit(entry_id) if a.event == "approved"] == [
        (f"{ME} acting as Alice", "approved")]


def test_who_asked_for_the_diagnosis_cannot_approve_its_proposals(jobs: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_APPROVERS", f'["{ME}", "bob"]')
    monkeypatch.setenv("DIAGAGENT_ADMINS", f'["{ME}"]')
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(tmp_path / "elsewhere"))  # checked against the bundle's job
    code, out = run("diagnose", str(EXAMPLE))
    assert code == 0, out
    ledger = Ledger.from_settings(Settings.load())
    entry = ledger.list(job_id="42")[0]
    assert entry.proposed_by == ME
    code, out = run("actions", "approve", str(entry.id), "--yes")
    assert code == 1 and f"{ME} proposed action #{entry.id} and cannot also decide on it" in out
    code, out = run("actions", "approve", str(entry.id), "--as", "bob", "--yes")  # nor by acting as someone else
    assert code == 1 and "proposed action" in out
    assert ledger.get(entry.id).state == "pending"
    # a second person may
    done = approve_and_execute(ledger, entry.id, "BOB", Settings.load())
    assert done.state == "executed" and done.decided_by == "BOB"


def test_names_compare_case_insensitively(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite", approvers=[" Alice ", "bob"])
    entry = ledger.submit("42", EVICT, "Bob")
    with pytest.raises(NotAuthorized, match="proposed action"):
        ledger.approve(entry.id, "BOB")
    assert ledger.is_approver("ALICE") and ledger.is_approver("alice")
    assert ledger.approve(entry.id, "aLiCe").state == "approved"


def test_chat_refuses_as_without_admin_rights(jobs: Path) -> None:
    code, out = run("chat", str(EXAMPLE), "--as", "alice")
    assert code == 2 and f"{ME} may not act as someone else" in out and "DIAGAGENT_ADMINS" in out


async def test_in_the_tui_who_asked_for_the_diagnosis_cannot_approve_it(tmp_path: Path) -> None:
    from diagagent.apps.tui import DiagApp
    from diagagent.apps.tui.confirm import ConfirmDecision
    from diagagent.telemetry import Bundle
    from tests.test_tui import canned_source, settings_for, settle, static_text, write_tiny_bundle

    ledger = Ledger(tmp_path / "ledger.sqlite", ["Alice"])
    with Bundle.open(write_tiny_bundle(tmp_path / "job-7")) as bundle:
        app = DiagApp(bundle, settings_for(tmp_path / "state", tmp_path), user="alice", ledger=ledger,
                      incident_source=canned_source())
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert {e.proposed_by for e in ledger.list()} == {"alice"}
            await pilot.press("f6", "a")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDecision)
            assert "You are alice and proposed this action" in static_text(app, "#confirm-text")
            await pilot.click("#confirm")
            await settle(pilot)
            assert static_text(app, "#action-status").startswith(
                "Approval refused: alice proposed action #1 and cannot also decide on it")
    assert ledger.get(1).state == "pending" and ledger.audit(1)[-1].event == "approve_refused"


def test_in_slack_who_asked_for_the_diagnosis_cannot_approve_it(tmp_path: Path) -> None:
    """The asking user's id (from the signed event) proposes; their own Approve click is refused, another's is not."""
    from slack_sdk import WebClient

    from diagagent.apps.slack import build_app as build_slack
    from diagagent.sim import simulate
    from tests.slack_mock import MockSlack, button_click, mention
    from tests.test_slack_app import APPROVER, CHANNEL, _settings, dispatch, read_thread

    simulate(tmp_path / "jobs" / "42", "gpu_ecc_uncorrectable", 4, 1, gpus_per_node=2, minutes=10, job_id="42",
             compress=False)
    settings = _settings(tmp_path / "jobs", tmp_path / "state").model_copy(update={"approvers": [APPROVER, "uasker"]})
    with MockSlack() as slack:
        app = build_slack(settings, WebClient(token="xoxb-test", base_url=slack.api_url), process_before_response=True)
        mark = slack.mark()
        dispatch(app, mention("why did job 42 die?", ts="1700000000.000100", user="UASKER"))
        thread = read_thread(slack, mark, CHANNEL, "1700000000.000100")
        ledger = Ledger.from_settings(settings)
        entries = ledger.list(job_id="42")
        assert entries and {e.proposed_by for e in entries} == {"UASKER"}
        entry_id, message_ts = thread.entry_of("evict")
        mark = slack.mark()
        dispatch(app, button_click("approve", str(entry_id), "UASKER", message_ts, thread.ts,
                                   slack.response_url("click")), "application/x-www-form-urlencoded")
        refusal = slack.since(mark, "chat.postEphemeral")
        assert refusal and "UASKER proposed action" in refusal[0].args["text"]
        assert ledger.get(entry_id).state == "pending"
        dispatch(app, button_click("approve", str(entry_id), APPROVER, message_ts, thread.ts,
                                   slack.response_url("click")), "application/x-www-form-urlencoded")
        assert ledger.get(entry_id).state == "executed" and ledger.get(entry_id).decided_by == APPROVER
