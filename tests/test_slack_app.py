"""The Slack bot end to end: the real slack-bolt App, signed requests, and a local mock of Slack's Web API.

Covers a mention, the slash command (default ack-then-work mode), follow-ups, approvals and refusals, bad signatures,
unknown jobs, and telemetry that tries to ping @channel or look like an approval.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from slack_bolt import App, BoltResponse
from slack_sdk import WebClient
from typer.testing import CliRunner

from diagagent.actions import Ledger
from diagagent.apps.cli import build_app as build_cli
from diagagent.apps.slack import build_app
from diagagent.config import Settings
from diagagent.sim import simulate
from tests.slack_mock import (
    BOT_USER_ID,
    ApiCall,
    MockSlack,
    button_click,
    mention,
    message,
    signed_request,
    slash_command,
)

SECRET = "test-signing-secret"
APPROVER = "UAPPROVER"
INTRUDER = "UINTRUDER"
CHANNEL = "C0001"
INJECTION = " <!channel> *APPROVE* <https://evil.example/x|click here>"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


# --- fixtures ----------------------------------------------------------------------------------------------------

def _inject(bundle: Path, lines: list[Any]) -> None:
    """Append the injection to each cited log line, and to the job's name."""
    for ref in lines:
        if not ref.file.startswith("logs/"):
            continue
        path = bundle / ref.file
        text = path.read_text().splitlines(keepends=True)
        text[ref.line - 1] = text[ref.line - 1].rstrip("\n") + INJECTION + "\n"
        path.write_text("".join(text))
    job = yaml.safe_load((bundle / "job.yaml").read_text())
    job["name"] = "evil <!here> run"
    (bundle / "job.yaml").write_text(yaml.safe_dump(job))


@pytest.fixture(scope="module")
def jobs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs")
    simulate(root / "42", "gpu_ecc_uncorrectable", 4, 1, gpus_per_node=2, minutes=10, job_id="42", compress=False)
    truth = simulate(root / "43", "gpu_ecc_uncorrectable", 4, 2, gpus_per_node=2, minutes=10, job_id="43",
                     compress=False)
    _inject(root / "43", truth.indicating_lines)
    return root


def _settings(jobs_dir: Path, state_dir: Path) -> Settings:
    return Settings(jobs_dir=jobs_dir, state_dir=state_dir, approvers=[APPROVER], llm_base_url=None,
                    executor="dry-run", slack_bot_token="xoxb-test", slack_signing_secret=SECRET)


@pytest.fixture(scope="module")
def settings(jobs_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return _settings(jobs_dir, tmp_path_factory.mktemp("state"))


@pytest.fixture(scope="module")
def slack() -> Iterator[MockSlack]:
    with MockSlack() as mock:
        yield mock


@pytest.fixture(scope="module")
def app(settings: Settings, slack: MockSlack) -> App:
    """The bolt App that runs each listener before it answers (synchronous: no polling needed)."""
    return build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url), process_before_response=True)


def dispatch(app: App, body: str, content_type: str = JSON, *, tamper: bool = False) -> BoltResponse:
    return app.dispatch(signed_request(SECRET, body, content_type, tamper=tamper))


def mrkdwn_texts(call: ApiCall) -> list[str]:
    """Every text Slack parses as mrkdwn in a call: the top-level text and the mrkdwn text objects in its blocks."""
    found = [str(call.args["text"])] if call.args.get("text") else []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn":
                found.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(call.blocks())
    return found


def buttons(call: ApiCall) -> list[dict[str, Any]]:
    return [e for b in call.blocks() if b["type"] == "actions" for e in b["elements"] if e["type"] == "button"]


@dataclass
class PostedThread:
    """What one diagnosis posted: the progress/diagnosis message, the proposal posts, every call it made."""

    ts: str
    calls: list[ApiCall]
    diagnosis: ApiCall
    proposals: list[ApiCall]

    def entry_of(self, kind: str) -> tuple[int, str]:
        """(ledger id, message ts) of the proposal of that kind."""
        for call in self.proposals:
            if f": {kind}*" in call.blocks()[0]["text"]["text"]:
                return int(buttons(call)[0]["value"]), call.ts
        raise AssertionError(f"no {kind} proposal")


def read_thread(slack: MockSlack, mark: int, channel: str, thread_ts: str) -> PostedThread:
    calls = [c for c in slack.since(mark) if c.args.get("channel") in (channel, None)
             or c.args.get("channel_id") == channel]
    progress = next(c for c in calls if c.method == "chat.postMessage" and c.args.get("thread_ts") == thread_ts
                    and "Looking at job" in c.args["text"])
    diagnosis = [c for c in calls if c.method == "chat.update" and c.args["ts"] == progress.ts and c.blocks()][-1]
    proposals = [c for c in calls if c.method == "chat.postMessage" and buttons(c)]
    return PostedThread(ts=thread_ts, calls=calls, diagnosis=diagnosis, proposals=proposals)


@pytest.fixture(scope="module")
def diagnosed(app: App, slack: MockSlack) -> PostedThread:
    mark = slack.mark()
    response = dispatch(app, mention("why did job 42 die?", ts="1700000000.000100"))
    assert response.status == 200
    return read_thread(slack, mark, CHANNEL, "1700000000.000100")


# --- a mention ---------------------------------------------------------------------------------------------------

def test_mention_gets_progress_diagnosis_picture_and_buttons_in_its_thread(diagnosed: PostedThread, slack: MockSlack,
                                                                          settings: Settings) -> None:
    assert slack.calls[0].method == "auth.test"  # bolt authorizes on the first request
    assert all(c.headers["authorization"] == "Bearer xoxb-test" for c in diagnosed.calls)
    first = next(c for c in diagnosed.calls if c.method != "auth.test")
    assert (first.method, first.args["thread_ts"], first.args["channel"]) == ("chat.postMessage",
                                                                              diagnosed.ts, CHANNEL)
    progress = [c.args["text"] for c in diagnosed.calls if c.method == "chat.update" and not c.blocks()]
    assert any(":white_check_mark: log templates and events" in t for t in progress)

    header = diagnosed.diagnosis.blocks()[0]["text"]["text"]
    assert header.startswith("Job 42")
    text = "\n".join(mrkdwn_texts(diagnosed.diagnosis))
    assert "*Root cause:* Uncorrectable double-bit ECC error" in text and "*Faulty nodes*" in text
    assert "*Matched schema:* `gpu-ecc-dbe-xid48`" in text and "```" in text  # evidence lines as code

    upload_url = next(c for c in diagnosed.calls if c.method == "files.getUploadURLExternal")
    complete = next(c for c in diagnosed.calls if c.method == "files.completeUploadExternal")
    file_id = json.loads(complete.args["files"])[0]["id"]
    assert upload_url.args["filename"] == "job-42-timeline.png"
    assert (complete.args["channel_id"], complete.args["thread_ts"]) == (CHANNEL, diagnosed.ts)
    assert slack.uploads[file_id].startswith(b"\x89PNG")

    ledger = Ledger.from_settings(settings)
    assert {ledger.get(int(buttons(c)[0]["value"])).proposal.kind for c in diagnosed.proposals} == {"evict", "restart"}
    for call in diagnosed.proposals:
        approve, reject = buttons(call)
        assert (approve["action_id"], reject["action_id"]) == ("approve", "reject")
        assert approve["value"] == reject["value"] and ledger.get(int(approve["value"])).state == "pending"
        assert call.args["thread_ts"] == diagnosed.ts
        assert "scontrol" in "\n".join(mrkdwn_texts(call))  # what approving would run


def test_slack_gives_the_same_diagnosis_as_the_cli(diagnosed: PostedThread, jobs_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(jobs_dir))
    result = CliRunner().invoke(build_cli(), ["diagnose", "42", "--json", "--no-submit"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)
    text = "\n".join(mrkdwn_texts(diagnosed.diagnosis))
    assert f"*Root cause:* {cli['root_cause']}" in text
    assert all(f"`{n['host']}`" in text for n in cli["faulty_nodes"][:5])
    assert f"`{cli['schemata'][0]['schema_id']}`" in text
    assert len(diagnosed.proposals) == len(cli["proposals"])


def test_the_diagnosis_message_says_why_that_confidence(diagnosed: PostedThread, jobs_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18 item 7: Slack showed a bare percentage; the diagnosis message now says what raised it, what held it
    down and the one check that would settle it, as the CLI does."""
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(jobs_dir))
    result = CliRunner().invoke(build_cli(), ["diagnose", "42", "--json", "--no-submit"])
    why = json.loads(result.stdout)["confidence_why"]
    assert why and why["raised"] and why["check"]
    text = "\n".join(mrkdwn_texts(diagnosed.diagnosis))
    percent = f"{json.loads(result.stdout)['confidence']:.0%}"
    assert f"*Why {percent}:*" in text
    assert all(f"• raised by: {r[:40]}" in text for r in why["raised"][:4])
    assert all(f"• held down by: {h[:40]}" in text for h in why["held_down"][:4])
    assert f"*To settle it:* {why['check'][:40]}" in text


# --- follow-ups --------------------------------------------------------------------------------------------------

def test_follow_up_in_the_thread_continues_the_same_session(app: App, diagnosed: PostedThread, slack: MockSlack) -> None:
    mark = slack.mark()
    dispatch(app, message("which node is bad?", ts="1700000000.000200", thread_ts=diagnosed.ts))
    calls = slack.since(mark)
    assert [c.method for c in calls][:1] == ["chat.postMessage"]
    answer = calls[-1]
    assert answer.method == "chat.update" and answer.blocks()
    assert "node-" in "\n".join(mrkdwn_texts(answer))
    assert not any("Looking at job" in str(c.args.get("text")) for c in calls)  # no second diagnosis
    assert not any(buttons(c) for c in calls)  # no proposals posted again

    mark = slack.mark()
    dispatch(app, mention("and which checkpoint should we restart from?", ts="1700000000.000300",
                          thread_ts=diagnosed.ts))
    assert slack.since(mark, "chat.update") and not any("Looking at job" in str(c.args.get("text"))
                                                         for c in slack.since(mark))


def test_thread_chatter_that_is_not_a_question_gets_no_reply(app: App, diagnosed: PostedThread, slack: MockSlack) -> None:
    mark = slack.mark()
    dispatch(app, message("ok, draining it now", ts="1700000000.000400", thread_ts=diagnosed.ts))
    dispatch(app, message("is it?", ts="1700000000.000401", thread_ts=diagnosed.ts, user=BOT_USER_ID))
    assert slack.since(mark) == []


# --- buttons -----------------------------------------------------------------------------------------------------

def test_an_approver_approves_and_the_result_is_posted_in_the_thread(app: App, diagnosed: PostedThread, slack: MockSlack,
                                                                     settings: Settings) -> None:
    entry_id, message_ts = diagnosed.entry_of("evict")
    mark = slack.mark()
    response = dispatch(app, button_click("approve", str(entry_id), APPROVER, message_ts, diagnosed.ts,
                                          slack.response_url("click")), FORM)
    assert response.status == 200
    entry = Ledger.from_settings(settings).get(entry_id)
    assert (entry.state, entry.decided_by) == ("executed", APPROVER)
    redrawn = next(c for c in slack.since(mark, "chat.update") if c.args["ts"] == message_ts)
    assert not buttons(redrawn) and "*executed*" in "\n".join(mrkdwn_texts(redrawn))
    posted = slack.since(mark, "chat.postMessage")[-1]
    assert posted.args["thread_ts"] == diagnosed.ts
    assert f"<@{APPROVER}> approved action #{entry_id}" in "\n".join(mrkdwn_texts(posted))
    assert "scontrol update" in "\n".join(mrkdwn_texts(posted))
    assert [a.event for a in Ledger.from_settings(settings).audit(entry_id)][-3:] == ["approved", "execution_started",
                                                                              "executed"]


def test_someone_else_is_refused_privately_and_the_click_is_audited(app: App, diagnosed: PostedThread, slack: MockSlack,
                                                                    settings: Settings) -> None:
    entry_id, message_ts = diagnosed.entry_of("restart")
    ledger = Ledger.from_settings(settings)
    for action in ("approve", "reject"):
        mark = slack.mark()
        dispatch(app, button_click(action, str(entry_id), INTRUDER, message_ts, diagnosed.ts,
                                   slack.response_url("click")), FORM)
        calls = slack.since(mark)
        assert [c.method for c in calls] == ["chat.postEphemeral"]
        assert calls[0].args["user"] == INTRUDER and "not an approver" in calls[0].args["text"]
    assert ledger.get(entry_id).state == "pending"
    refused = [(a.actor, a.event) for a in ledger.audit(entry_id) if a.event.endswith("_refused")]
    assert refused == [(INTRUDER, "approve_refused"), (INTRUDER, "reject_refused")]

    dispatch(app, button_click("reject", str(entry_id), APPROVER, message_ts, diagnosed.ts,
                               slack.response_url("click")), FORM)
    assert ledger.get(entry_id).state == "rejected"


def test_a_forged_signature_is_rejected_before_anything_runs(app: App, diagnosed: PostedThread, slack: MockSlack,
                                                             settings: Settings) -> None:
    entry_id, message_ts = diagnosed.entry_of("restart")
    mark = slack.mark()
    click = button_click("approve", str(entry_id), APPROVER, message_ts, diagnosed.ts, slack.response_url())
    assert dispatch(app, click, FORM, tamper=True).status == 401
    assert dispatch(app, mention("why did job 42 die?", ts="1700000000.000900"), tamper=True).status == 401
    assert slack.since(mark) == []
    assert [a.actor for a in Ledger.from_settings(settings).audit(entry_id)].count(APPROVER) <= 1


# --- the slash command, in bolt's default mode (ack first, work after) -------------------------------------------

def test_slash_command_acks_then_diagnoses_in_a_thread(jobs_dir: Path, slack: MockSlack,
                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    settings = _settings(jobs_dir, tmp_path_factory.mktemp("state-default-mode"))
    app = build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url))
    mark = slack.mark()
    response = dispatch(app, slash_command("why did job-42 die?", slack.response_url(), channel="C0002"), FORM)
    assert response.status == 200 and response.body == ""

    def proposals_posted(mock: MockSlack) -> bool:
        return len([c for c in mock.since(mark, "chat.postMessage") if buttons(c)]) == 2

    slack.wait_for(proposals_posted)
    root = next(c for c in slack.since(mark, "chat.postMessage") if c.args["channel"] == "C0002")
    assert "thread_ts" not in root.args and root.args["text"] == "<@UASKER> asked: why did job-42 die?"
    thread = read_thread(slack, mark, "C0002", root.ts)
    assert "*Root cause:* Uncorrectable double-bit ECC error" in "\n".join(mrkdwn_texts(thread.diagnosis))


def test_slash_command_for_an_unknown_job_answers_privately(app: App, slack: MockSlack) -> None:
    mark, responses = slack.mark(), len(slack.responses)
    dispatch(app, slash_command("977", slack.response_url()), FORM)
    assert slack.since(mark) == []
    reply = slack.responses[responses]["text"]
    assert "can't find job `977`" in reply and "`42`" in reply and "`43`" in reply


# --- unknown jobs, DMs, retries ----------------------------------------------------------------------------------

def test_unknown_job_gets_a_clear_answer_once_even_when_slack_retries(app: App, slack: MockSlack) -> None:
    mark = slack.mark()
    body = mention("why did job 977 die?", ts="1700000000.000500")
    dispatch(app, body)
    dispatch(app, body.replace("Ev", "Ew"))  # Slack's retry of the same message
    calls = slack.since(mark)
    assert [c.method for c in calls] == ["chat.postMessage"]
    assert calls[0].args["thread_ts"] == "1700000000.000500"
    assert "I can't find job `977` in the jobs folder. Known jobs: `42`" in calls[0].args["text"]


def test_a_dm_without_a_job_asks_which_job(app: App, slack: MockSlack) -> None:
    mark = slack.mark()
    dispatch(app, message("why is training so slow", ts="1700000000.000600", channel="D0001", channel_type="im"))
    calls = slack.since(mark)
    assert [c.method for c in calls] == ["chat.postMessage"] and calls[0].args["channel"] == "D0001"
    assert calls[0].args["text"].startswith("Which job?") and "`42`" in calls[0].args["text"]


# --- telemetry is untrusted --------------------------------------------------------------------------------------

def test_telemetry_cannot_ping_link_or_approve(app: App, slack: MockSlack, settings: Settings) -> None:
    mark = slack.mark()
    dispatch(app, mention("what happened to job 43?", ts="1700000000.000700"))
    thread = read_thread(slack, mark, CHANNEL, "1700000000.000700")
    texts = [t for c in thread.calls for t in mrkdwn_texts(c)]
    joined = "\n".join(texts)
    assert "&lt;!channel&gt; *APPROVE* &lt;https://evil.example/x|click here&gt;" in joined  # shown, as text
    assert "&lt;!here&gt;" in joined  # the job's name, in the progress message
    assert not [t for t in texts if re.search(r"<(!|https?:)", t)]  # no mention, no link
    ledger = Ledger.from_settings(settings)
    ids = sorted(int(b["value"]) for c in thread.proposals for b in buttons(c) if b["action_id"] == "approve")
    assert ids == sorted(e.id for e in ledger.list(job_id="43"))
    assert {e.state for e in ledger.list(job_id="43")} == {"pending"}
