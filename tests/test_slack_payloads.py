"""Signed payloads of shapes the handlers do not know: each gets a clear private answer, never an exception.

Through the real HTTP server and bolt App on loopback (listeners run before the response, so no polling), with the
mock of Slack's Web API; ends with a bounded hypothesis fuzz over signed payloads: never a 500, never a traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from slack_sdk import WebClient

from diagagent.actions import Ledger
from diagagent.apps.slack import build_app
from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal
from tests.slack_mock import (
    ApiCall,
    MockSlack,
    RawReply,
    button_click,
    event_body,
    mention,
    post_head,
    raw_http,
    serving,
    sign,
    slash_command,
)

SECRET = "payload-secret"
APPROVER = "UAPPROVER"
INTRUDER = "UINTRUDER"
CHANNEL = "C0001"
PATH = "/slack/events"
DROP = object()
FORM = "application/x-www-form-urlencoded"


class Server:
    """One server for the module: post signed bodies, read what the mock of Slack saw since."""

    def __init__(self, port: int, slack: MockSlack, ledger: Ledger, entry_id: int) -> None:
        self.port, self.slack, self.ledger, self.entry_id = port, slack, ledger, entry_id

    def post(self, body: str, content_type: str = FORM) -> RawReply:
        raw = body.encode()
        headers = {"Content-Type": content_type, "Content-Length": str(len(raw)), **sign(SECRET, raw)}
        return raw_http(self.port, post_head(PATH, headers), raw)

    def click(self, **changes: Any) -> tuple[RawReply, list[ApiCall], list[dict[str, Any]]]:
        """A signed click on the entry's Approve button, with top-level keys changed (DROP removes one)."""
        payload = json.loads(dict(parse_qsl(button_click("approve", str(self.entry_id), APPROVER, "1800000000.000001",
                                                         "1700000000.000100", self.slack.response_url("click"))))
                             ["payload"])
        for key, value in changes.items():
            if value is DROP:
                payload.pop(key, None)
            else:
                payload[key] = value
        mark, answered = self.slack.mark(), len(self.slack.responses)
        reply = self.post(urlencode({"payload": json.dumps(payload)}))
        return reply, self.slack.since(mark), self.slack.responses[answered:]


@contextmanager
def _serve(root: Path) -> Iterator[Server]:
    settings = Settings(jobs_dir=root / "jobs", state_dir=root / "state", slack_signing_secret=SECRET,
                        llm_base_url=None, approvers=[APPROVER], executor="dry-run")
    ledger = Ledger.from_settings(settings)
    entry = ledger.submit("42", ActionProposal(kind="evict", nodes=["node-003"], reason="Xid 79"), "diagagent")
    with MockSlack() as slack:
        app = build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url), process_before_response=True)
        with serving(app, settings) as http:
            yield Server(http.server_address[1], slack, ledger, entry.id)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with _serve(tmp_path_factory.mktemp("payloads")) as served:
        yield served


def only_ephemeral(calls: list[ApiCall], user: str = APPROVER) -> str:
    assert [c.method for c in calls] == ["chat.postEphemeral"], [c.method for c in calls]
    assert (calls[0].args["user"], calls[0].args["channel"]) == (user, CHANNEL)
    return str(calls[0].args["text"])


# --- clicks ---------------------------------------------------------------------------------------------------------

def action(**fields: Any) -> list[dict[str, Any]]:
    return [{"action_id": "approve", "block_id": "proposal-1", "type": "button", "action_ts": "1.2", **fields}]


@pytest.mark.parametrize(("changes", "says"), [
    ({"actions": []}, "no button"),
    ({"actions": "approve"}, "no button"),
    ({"actions": [7]}, "no button"),
    ({"actions": action()}, "does not name an action"),
    ({"actions": action(value="9" * 5000)}, "does not name an action"),
    ({"actions": action(value="²")}, "does not name an action"),
    ({"actions": action(value="99999999999999999999")}, "does not name an action"),
    ({"actions": action(value=["1"])}, "does not name an action"),
    ({"actions": action(action_id="deploy", value="1")}, "not one of mine"),
    ({"actions": action(action_id={"x": 1}, value="1")}, "not one of mine"),
    ({"message": DROP, "container": {"type": "message", "channel_id": CHANNEL}}, "which message"),
    ({"message": {"ts": 17}, "container": {"type": "message", "channel_id": CHANNEL}}, "which message"),
], ids=["no-actions", "actions-str", "action-int", "no-value", "huge-value", "unicode-digit", "20-digits",
        "value-list", "unknown-action", "action-id-dict", "no-message", "ts-int"])
def test_a_click_of_an_unknown_shape_gets_a_private_answer(server: Server, changes: dict[str, Any],
                                                           says: str) -> None:
    reply, calls, _ = server.click(**changes)
    assert reply.status == 200
    text = only_ephemeral(calls)
    assert says in text and "Nothing was done" in text and "audit trail" not in text
    assert server.ledger.get(server.entry_id).state == "pending"


@pytest.mark.parametrize("changes", [
    {"user": "UAPPROVER"},  # a string where Slack sends {"id": ...}
    {"user": DROP},
    {"user": {"id": "U<!channel>"}},
    {"user": {"id": ""}},
    {"channel": DROP, "container": DROP},
    {"channel": {"id": 5}, "container": {"type": "message"}},
], ids=["user-str", "no-user", "user-markup", "user-empty", "no-channel", "channel-int"])
def test_a_click_without_a_clicker_or_a_channel_is_answered_through_the_response_url(server: Server,
                                                                                   changes: dict[str, Any]) -> None:
    reply, calls, responses = server.click(**changes)
    assert reply.status == 200 and calls == []
    assert len(responses) == 1 and responses[0]["response_type"] == "ephemeral"
    assert "Nothing was done" in responses[0]["text"] and responses[0]["replace_original"] is False
    assert server.ledger.get(server.entry_id).state == "pending"


def test_a_click_with_nowhere_to_answer_is_one_log_line(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    reply, calls, responses = server.click(user=DROP, response_url=DROP, channel=DROP, container=DROP,
                                           actions=action(value="x" * 10_000))
    assert (reply.status, calls, responses) == (200, [], [])
    assert not [r for r in caplog.records if "xxxxxxxxxx" in r.getMessage()]
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert len(lines) == 1 and len(lines[0]) < 300 and "nowhere to answer" in lines[0]


def test_a_refusal_says_the_click_is_audited_only_when_it_is(server: Server) -> None:
    _, calls, _ = server.click(actions=action(value="999999"))  # an approver, a ledger id that does not exist
    text = only_ephemeral(calls)
    assert "#999999" in text and "audit trail" not in text
    assert server.ledger.audit(999999) == []

    before = len(server.ledger.audit(server.entry_id))
    _, calls, _ = server.click(user={"id": INTRUDER}, actions=action(action_id="reject", value=str(server.entry_id)))
    text = only_ephemeral(calls, INTRUDER)
    assert "not an approver" in text and "audit trail" in text
    assert [a.event for a in server.ledger.audit(server.entry_id)[before:]] == ["reject_refused"]


# --- events and the slash command -----------------------------------------------------------------------------------

def mention_event(**changes: Any) -> str:
    event: dict[str, Any] = {"type": "app_mention", "user": "UASKER", "text": "<@UBOT> why did job 42 die?",
                             "ts": "1700000000.000900", "channel": CHANNEL, "event_ts": "1700000000.000900"}
    for key, value in changes.items():
        if value is DROP:
            event.pop(key, None)
        else:
            event[key] = value
    return event_body(event)


@pytest.mark.parametrize(("changes", "says"), [
    ({"ts": DROP}, "could not read that message"),
    ({"ts": ["1"]}, "could not read that message"),
    ({"text": ["why", "42"]}, "could not read that message"),
    ({"text": "job 42 " * 8000}, "too long"),
    ({"thread_ts": {"a": 1}}, "could not read that message"),
], ids=["no-ts", "ts-list", "text-list", "text-huge", "thread-dict"])
def test_a_mention_of_an_unknown_shape_gets_a_private_answer(server: Server, changes: dict[str, Any],
                                                             says: str) -> None:
    mark = server.slack.mark()
    reply = server.post(mention_event(**changes), "application/json")
    assert reply.status == 200
    text = only_ephemeral(server.slack.since(mark), "UASKER")
    assert says in text


@pytest.mark.parametrize("changes", [{"channel": DROP}, {"channel": 42}, {"user": DROP, "ts": DROP}],
                         ids=["no-channel", "channel-int", "no-user-no-ts"])
def test_a_mention_with_nowhere_to_answer_is_dropped_quietly(server: Server, changes: dict[str, Any]) -> None:
    mark = server.slack.mark()
    reply = server.post(mention_event(**changes), "application/json")
    assert reply.status in (200, 400)  # 400: bolt itself cannot read a channel that is a number
    assert server.slack.since(mark) == []


@pytest.mark.parametrize(("drop", "text", "says"), [
    ("channel_id", "42", "could not read"),
    ("user_id", "42", "could not read"),
    (None, "job 42 " * 8000, "too long"),
], ids=["no-channel", "no-user", "text-huge"])
def test_a_slash_command_of_an_unknown_shape_is_answered_privately(server: Server, drop: str | None, text: str,
                                                                   says: str) -> None:
    fields = dict(parse_qsl(slash_command(text, server.slack.response_url())))
    fields.pop(drop or "", None)
    mark = server.slack.mark()
    reply = server.post(urlencode(fields))
    assert reply.status == 200 and server.slack.since(mark) == []
    answer = json.loads(reply.body)
    assert answer["response_type"] == "ephemeral" and says in answer["text"]


# --- fuzz -----------------------------------------------------------------------------------------------------------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(["UAPPROVER", "C0001", "1700000000.000100", "approve", "reject", "1", "", "²",
                                     "9" * 30, "x" * 3000]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["id", "ts", "value", "action_id", "channel_id", "message_ts", "thread_ts", "type"]), inner,
    max_size=4), max_leaves=8)


def _mutated(base: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A payload Slack would send with one to three of its keys dropped or replaced by junk."""
    changes = st.dictionaries(st.sampled_from(sorted(base)), st.one_of(st.just(DROP), VALUES), min_size=1, max_size=3)
    return changes.map(lambda c: {k: v for k, v in {**base, **c}.items() if v is not DROP})


def _payloads(response_url: str) -> st.SearchStrategy[tuple[str, str]]:
    """Signed bodies of every kind the app listens to, with keys dropped, retyped or filled with junk."""
    response_urls = st.sampled_from([response_url, "not a url", 5, None])
    click = st.fixed_dictionaries(
        {"type": st.just("block_actions")},
        optional={"user": VALUES, "channel": VALUES, "container": VALUES, "message": VALUES, "actions": VALUES,
                  "response_url": response_urls, "team": VALUES})
    event = st.fixed_dictionaries(
        {"type": st.sampled_from(["app_mention", "message"])},
        optional={"user": VALUES, "channel": VALUES, "ts": VALUES, "text": VALUES, "thread_ts": VALUES,
                  "channel_type": st.sampled_from(["im", "channel", 3]), "subtype": VALUES, "bot_id": VALUES})
    command = st.fixed_dictionaries(
        {"command": st.just("/diagagent")},
        optional={"channel_id": st.text(max_size=12), "user_id": st.text(max_size=12), "text": st.text(max_size=40),
                  "response_url": st.just(response_url)})
    good_click = json.loads(dict(parse_qsl(button_click("approve", "1", "UASKER", "1800000000.000001",
                                                        "1700000000.000100", response_url)))["payload"])
    good_event = json.loads(mention("why did job 42 die?", ts="1700000000.000100"))["event"]
    good_command = dict(parse_qsl(slash_command("42", response_url)))
    return st.one_of(
        _mutated(good_click).map(lambda p: (urlencode({"payload": json.dumps(p)}), FORM)),
        _mutated(good_event).map(lambda e: (json.dumps({"type": "event_callback", "team_id": "T0001",
                                                        "event": e}), "application/json")),
        _mutated(good_command).map(lambda c: (urlencode({k: json.dumps(v) if not isinstance(v, str) else v
                                                         for k, v in c.items()}), FORM)),
        click.map(lambda p: (urlencode({"payload": json.dumps(p)}), FORM)),
        event.map(lambda e: (json.dumps({"type": "event_callback", "team_id": "T0001", "event_id": "Ev9",
                                         "event": e}), "application/json")),
        command.map(lambda c: (urlencode(c), FORM)),
        VALUES.map(lambda v: (json.dumps({"type": "block_actions", "actions": v}), "application/json")))


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Its own server: a fuzzed click may decide the ledger entry the other tests expect pending."""
    with _serve(tmp_path_factory.mktemp("fuzz")) as served:
        yield served


def test_fuzz_signed_payloads_never_get_a_500_or_a_traceback(fuzz_server: Server) -> None:
    server = fuzz_server
    statuses: dict[int, int] = {}
    collect = Collect()
    root = logging.getLogger()
    root.addHandler(collect)
    level, root.level = root.level, logging.DEBUG

    @hsettings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(_payloads(server.slack.response_url("fuzz")))
    def check(case: tuple[str, str]) -> None:
        body, content_type = case
        reply = server.post(body, content_type)
        assert reply.status in (200, 400, 404), (reply.status, body[:300])
        statuses[reply.status] = statuses.get(reply.status, 0) + 1

    try:
        check()
    finally:
        root.removeHandler(collect)
        root.setLevel(level)
    fmt = logging.Formatter("%(levelname)s %(name)s: %(message)s")
    ours = [r for r in collect.records if r.name.startswith(("diagagent", "slack_bolt"))]  # not slack_sdk's debug
    lines = [fmt.format(r) for r in ours]
    assert statuses.get(200, 0) >= 100 and statuses.get(400, 0) >= 1, statuses
    assert server.slack.since(0, "chat.postMessage") and server.slack.since(0, "chat.postEphemeral")  # both paths ran
    assert not [r for r in collect.records if r.levelno >= logging.ERROR], lines[:5]
    assert all(len(line) < 400 and "\n" not in line for line in lines), [x[:200] for x in lines if len(x) >= 400]
