"""The Slack bot's parts alone: finding the job in plain English, escaping for Block Kit, and the thread sessions.

No Slack and no diagnosis here: hand-made JobRefs, Diagnoses and ledger entries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from diagagent.actions import LedgerEntry
from diagagent.agent.session import Answer
from diagagent.apps.slack import blocks
from diagagent.apps.slack.jobs import JobDirectory, find_job, plain_text
from diagagent.apps.slack.sessions import EventRelay, SeenMessages, SessionStore, ThreadSession
from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence, NodeScore
from diagagent.telemetry.store import JobRef

REFS = [JobRef(job_id="42", name="llama3-70b-pretrain", status="failed", path="/jobs/42"),
        JobRef(job_id="1234", name="mixtral-8x7b-sft", status="hung", path="/jobs/job-1234"),
        JobRef(job_id="7", name=None, status="slow", path="/jobs/7.tar.gz")]


# --- finding the job --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "job_id"), [
    ("<@UBOT> why did job 42 die?", "42"),
    ("why did job-42 die", "42"),
    ("job #1234 is stuck", "1234"),
    ("Job ID: 1234?", "1234"),
    ("what happened to llama3-70b-pretrain", "42"),
    ("what happened to llama-70b-pretrain?", "42"),  # a dropped digit
    ("is mixtral-8x7b-sft hung", "1234"),
    ("42", "42"),
    ("what happened at iteration 2186 in llama3-70b-pretrain?", "42"),  # a number that is not a job
    ("why is 7 slow", "7"),
])
def test_finds_the_job_in_plain_english(text: str, job_id: str) -> None:
    found = find_job(text, REFS)
    assert found.job is not None and found.job.job_id == job_id


@pytest.mark.parametrize(("text", "asked"), [
    ("why did job 977 die?", "977"),
    ("what about job gpt5-run", "gpt5-run"),
    ("is 4711 done", "4711"),
])
def test_an_unknown_job_is_reported_by_what_was_asked(text: str, asked: str) -> None:
    found = find_job(text, REFS)
    assert found.unknown and found.asked == asked


@pytest.mark.parametrize("text", ["why did the job die?", "what is all-reduce doing", "hello"])
def test_a_message_without_a_job_names_none(text: str) -> None:
    found = find_job(text, REFS)
    assert (found.job, found.asked) == (None, None)


def test_only_job_x_is_explicit() -> None:
    assert find_job("and job 1234?", REFS).explicit
    assert not find_job("compare with mixtral-8x7b-sft", REFS).explicit


def test_plain_text_drops_markup_and_decodes_entities() -> None:
    text = "<@U1> see <https://x.example/a|the log> in <#C1|ops> &lt;job&gt; &amp; <!here>"
    assert plain_text(text) == "see the log in #ops <job> &"


def test_job_directory_rereads_the_folder_for_an_unknown_job(tmp_path: Path) -> None:
    class Store:
        def __init__(self) -> None:
            self.refs: list[JobRef] = []
            self.reads = 0

        def list(self) -> list[JobRef]:
            self.reads += 1
            return list(self.refs)

    store = Store()
    directory = JobDirectory(store, max_age_s=3600, clock=lambda: 0.0)  # type: ignore[arg-type]
    assert directory.lookup("job 42").unknown
    store.refs = REFS[:1]  # the bundle arrives
    found = directory.lookup("job 42")
    assert found.job is not None and found.job.job_id == "42"
    reads = store.reads
    directory.lookup("which node?")  # no id asked: the cached list serves
    assert store.reads == reads


# --- Block Kit ---------------------------------------------------------------------------------------------------

def _diagnosis(text: str) -> Diagnosis:
    return Diagnosis(job_id="42", status="failed", root_cause=f"ECC error {text}", confidence=0.9,
                     faulty_nodes=[NodeScore(host="node-001", score=0.9, reason=f"shows '{text}'")],
                     evidence=[Evidence(id="e1", kind="log", file="logs/a`b.log", line=3, host="node-001",
                                        text=f"RuntimeError {text} ```")],
                     proposals=[ActionProposal(kind="evict", nodes=["node-001"], reason=text)])


def test_diagnosis_blocks_escape_telemetry() -> None:
    hostile = "<!channel> *APPROVE* <https://evil.example|x> & <*>"
    rendered = str(blocks.diagnosis_blocks(_diagnosis(hostile), REFS[0], 1.5))
    assert "<!channel>" not in rendered and "<https://" not in rendered
    assert "```RuntimeError &lt;!channel&gt; *APPROVE* &lt;https://evil.example|x&gt; &amp; &lt;*&gt; ˋˋˋ```" \
        in rendered  # literal inside code; a backtick cannot close it
    assert "ECC error &lt;!channel&gt; ∗APPROVE∗" in rendered  # running text: no bold either
    assert "`logs/aˋb.log:3 (node-001)`" in rendered


def test_answers_keep_their_emphasis_but_not_the_datas() -> None:
    answer = Answer(question="q", mode="playbook", markdown="## Nodes\n- **node-001**: shows 'Xid <*>, pid=<*>'")
    text = blocks.answer_blocks(answer)[0]["text"]["text"]
    assert text == "*Nodes*\n• *node-001*: shows 'Xid &lt;∗&gt;, pid=&lt;∗&gt;'"


def _entry(state: str, decided_by: str | None = None) -> LedgerEntry:
    now = datetime.now(UTC)
    return LedgerEntry(id=5, job_id="42", state=state, proposal=ActionProposal(kind="evict", nodes=["node-001"]),
                       proposed_by="diagagent", created_at=now, updated_at=now, decided_by=decided_by)


def test_only_a_pending_proposal_has_buttons_and_they_carry_only_its_id() -> None:
    pending = blocks.proposal_blocks(_entry("pending"), None, "no template")
    actions = [b for b in pending if b["type"] == "actions"]
    assert [(e["action_id"], e["value"]) for e in actions[0]["elements"]] == [("approve", "5"), ("reject", "5")]
    decided = blocks.proposal_blocks(_entry("executed", "U0APPROVER"), None)
    assert not [b for b in decided if b["type"] == "actions"]
    assert "decided by <@U0APPROVER>" in str(decided)
    assert "decided by alice" in str(blocks.proposal_blocks(_entry("rejected", "alice"), None))


# --- sessions --------------------------------------------------------------------------------------------------

def _thread(key: tuple[str, str]) -> ThreadSession:
    return ThreadSession(key=key, job=REFS[0], session=None, relay=EventRelay())  # type: ignore[arg-type]


def test_session_store_drops_the_least_recently_used_thread() -> None:
    store = SessionStore(capacity=2)
    for ts in ("1", "2"):
        store.put(_thread(("C", ts)))
    assert store.get(("C", "1")) is not None  # now the most recent
    store.put(_thread(("C", "3")))
    assert store.get(("C", "2")) is None and store.get(("C", "1")) is not None and len(store) == 2


def test_seen_messages_and_relay() -> None:
    seen = SeenMessages(capacity=2)
    assert seen.first_time("C", "1") and not seen.first_time("C", "1")
    seen.first_time("C", "2")
    seen.first_time("C", "3")
    assert seen.first_time("C", "1")  # forgotten beyond capacity
    relay, got = EventRelay(), []
    relay({"type": "x"})
    relay.target = got.append
    relay({"type": "y"})
    assert got == [{"type": "y"}]
