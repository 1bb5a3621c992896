"""The Ledger on a real SQLite file: idempotent submit, who may decide, one winner under concurrent approvals
(threads and processes) with every attempt audited, and an audit table that refuses UPDATE and DELETE.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from diagagent.actions import Ledger, LedgerError, NotAuthorized, NotPending, UnknownEntry
from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal
from tests.test_actions_proposals import make_job

EVICT = ActionProposal(kind="evict", nodes=["node-003"], reason="Xid 79 on node-003", evidence=["e1"])


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite", approvers=["alice", "bob"])


def events(ledger: Ledger, entry_id: int) -> list[tuple[str, str]]:
    return [(a.actor, a.event) for a in ledger.audit(entry_id)]


def test_submit_is_pending_and_audited(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    assert entry.state == "pending" and entry.proposal == EVICT and entry.proposed_by == "diagagent"
    assert events(ledger, entry.id) == [("diagagent", "submitted")]
    assert ledger.get(entry.id) == entry


def test_submit_is_idempotent_for_the_same_action_of_the_same_job(ledger: Ledger) -> None:
    first = ledger.submit("42", EVICT, "diagagent")
    reworded = EVICT.model_copy(update={"reason": "another wording", "evidence": ["e7"]})
    assert ledger.submit("42", reworded, "agent:llm").id == first.id
    assert ledger.submit("43", EVICT, "diagagent").id != first.id
    other = ledger.submit("42", ActionProposal(kind="evict", nodes=["node-004"]), "diagagent")
    assert other.id != first.id
    assert [e.id for e in ledger.list(job_id="42")] == [first.id, other.id]
    assert events(ledger, first.id) == [("diagagent", "submitted")]


def test_submit_from_many_threads_makes_one_entry(ledger: Ledger) -> None:
    ids: list[int] = []
    threads = [threading.Thread(target=lambda: ids.append(ledger.submit("42", EVICT, "diagagent").id))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 1 and len(ledger.list()) == 1


def test_a_violation_at_submission_rejects_the_entry_by_policy(ledger: Ledger) -> None:
    bad = ActionProposal(kind="restart", from_step=3000)  # marked invalid in make_job()
    entry = ledger.submit("42", bad, "diagagent", job=make_job())
    assert entry.state == "rejected" and entry.decided_by == "policy" and entry.policy_checked
    assert entry.violations == ["restarts from step 3000: that checkpoint is marked invalid"]
    assert events(ledger, entry.id) == [("diagagent", "submitted"), ("policy", "policy_rejected")]
    with pytest.raises(NotPending, match="already rejected by policy: restarts from step 3000"):
        ledger.approve(entry.id, "alice")


def test_a_clean_check_at_submission_stays_pending(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent", job=make_job())
    assert entry.state == "pending" and entry.policy_checked and entry.violations == []


def test_approval_by_a_non_approver_is_refused_and_audited(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    with pytest.raises(NotAuthorized, match="mallory is not an approver"):
        ledger.approve(entry.id, "mallory", "looks right")
    assert ledger.get(entry.id).state == "pending"
    refused = ledger.audit(entry.id)[-1]
    assert (refused.actor, refused.event, refused.state_after) == ("mallory", "approve_refused", "pending")
    assert "not an approver" in refused.reason and refused.detail == {"asked_reason": "looks right"}


def test_no_configured_approvers_means_nobody_may_approve(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite")
    entry = ledger.submit("42", EVICT, "diagagent")
    for who in ("root", "admin", ""):
        with pytest.raises(NotAuthorized):
            ledger.approve(entry.id, who)
    assert ledger.get(entry.id).state == "pending"
    assert [a.event for a in ledger.audit(entry.id)].count("approve_refused") == 3


def test_the_proposer_cannot_approve_its_own_proposal(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite", approvers=["diagagent", "alice"])
    entry = ledger.submit("42", EVICT, "diagagent")
    with pytest.raises(NotAuthorized, match="proposed action"):
        ledger.approve(entry.id, "diagagent")
    assert ledger.approve(entry.id, "alice").state == "approved"


def test_approve_then_record_execution(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    approved = ledger.approve(entry.id, " alice ", "ECC confirmed by dcgmi")
    assert (approved.state, approved.decided_by, approved.decision_reason) == ("approved", "alice",
                                                                               "ECC confirmed by dcgmi")
    lease = ledger.start_execution(entry.id, [["scontrol", "requeue", "42"]], executor="slurm", lease_s=60)
    running = ledger.get(entry.id)
    assert running.state == "running" and running.lease == lease and running.commands == [["scontrol", "requeue", "42"]]
    with pytest.raises(NotPending, match="not approved: nothing may run"):  # one execution per approval
        ledger.start_execution(entry.id, [], executor="slurm", lease_s=60)
    done = ledger.record_execution(entry.id, lease, "ok", True)
    assert done.state == "executed" and done.commands == [["scontrol", "requeue", "42"]] and done.output == "ok"
    assert done.lease is None
    last = ledger.audit(entry.id)[-1]
    assert (last.actor, last.event, last.detail["commands"]) == ("executor:slurm", "executed",
                                                                 [["scontrol", "requeue", "42"]])
    assert [a.event for a in ledger.audit(entry.id)] == ["submitted", "approved", "execution_started", "executed"]


def test_a_failed_execution_is_recorded_as_failed(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    ledger.approve(entry.id, "bob")
    lease = ledger.start_execution(entry.id, [["kubectl", "cordon", "node-003"]], executor="kubernetes", lease_s=60)
    assert ledger.record_execution(entry.id, lease, "[exit 1]", False).state == "failed"


def test_nothing_is_executed_without_approval(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    with pytest.raises(NotPending, match="not approved: nothing may run"):
        ledger.start_execution(entry.id, [["scontrol", "requeue", "42"]], executor="slurm", lease_s=60)
    assert ledger.get(entry.id).state == "pending"


def test_a_lease_held_elsewhere_is_lost_when_it_expires_and_a_late_result_still_counts(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    ledger.approve(entry.id, "alice")
    lease = ledger.start_execution(entry.id, [["scontrol", "requeue", "42"]], executor="slurm", lease_s=0)
    assert ledger.get(entry.id).state == "running"  # this process holds it: alive, so not lost however long it takes
    with sqlite3.connect(ledger.path) as conn:  # as if another host held it: only the expiry can tell
        conn.execute("UPDATE entries SET lease_host = 'node-elsewhere' WHERE id = ?", (entry.id,))
    lost = ledger.get(entry.id)
    assert lost.state == "unknown"
    assert ledger.audit(entry.id)[-1].event == "execution_lost" and "expired" in ledger.audit(entry.id)[-1].reason
    with pytest.raises(NotPending, match="outcome is unknown"):
        ledger.approve(entry.id, "bob")
    done = ledger.record_execution(entry.id, lease, "ok", True)
    assert done.state == "executed" and "given up for lost" in ledger.audit(entry.id)[-1].reason


def test_a_running_execution_cannot_be_reconciled_and_a_result_after_reconcile_is_kept(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    ledger.approve(entry.id, "alice")
    lease = ledger.start_execution(entry.id, [["scontrol", "requeue", "42"]], executor="slurm", lease_s=600)
    with pytest.raises(NotPending, match="is running now"):
        ledger.reconcile(entry.id, "bob", "failed", "looked at sinfo")
    ledger.abandon(entry.id, lease, "interrupted")
    assert ledger.reconcile(entry.id, "bob", "failed", "node-003 is not drained").state == "failed"
    assert ledger.record_execution(entry.id, lease, "ok", True).state == "failed"
    assert [a.event for a in ledger.audit(entry.id)][-3:] == ["execution_lost", "reconciled", "late_result"]
    assert ledger.verify().ok


def test_reject_needs_an_approver_and_a_reason(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    with pytest.raises(LedgerError, match="needs a reason"):
        ledger.reject(entry.id, "alice", "  ")
    with pytest.raises(NotAuthorized):
        ledger.reject(entry.id, "mallory", "no")
    rejected = ledger.reject(entry.id, "alice", "node-003 passed dcgmi diag -r 3")
    assert rejected.state == "rejected" and rejected.decision_reason == "node-003 passed dcgmi diag -r 3"
    with pytest.raises(NotPending, match="already rejected by alice"):
        ledger.approve(entry.id, "bob")
    assert [a.event for a in ledger.audit(entry.id)] == ["submitted", "reject_refused", "rejected",
                                                        "approve_refused"]


def test_unknown_entry(ledger: Ledger) -> None:
    with pytest.raises(UnknownEntry, match="no action #99"):
        ledger.approve(99, "alice")


def test_list_filters_by_job_and_state(ledger: Ledger) -> None:
    a = ledger.submit("42", EVICT, "diagagent")
    b = ledger.submit("42", ActionProposal(kind="restart", from_step=2000), "diagagent")
    c = ledger.submit("7", EVICT, "diagagent")
    ledger.approve(b.id, "alice")
    assert [e.id for e in ledger.list(state="pending")] == [a.id, c.id]
    assert [e.id for e in ledger.list(job_id="42", state="approved")] == [b.id]
    assert [e.id for e in ledger.list()] == [a.id, b.id, c.id]


def test_audit_rows_cannot_be_updated_or_deleted(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    with pytest.raises(NotAuthorized):
        ledger.approve(entry.id, "mallory")
    conn = sqlite3.connect(ledger.path)
    try:
        for sql in ("UPDATE audit SET actor = 'alice', event = 'approved'", "DELETE FROM audit",
                    "DELETE FROM audit WHERE event = 'approve_refused'"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
    finally:
        conn.close()
    assert events(ledger, entry.id) == [("diagagent", "submitted"), ("mallory", "approve_refused")]


def test_the_file_is_in_wal_mode_and_survives_reopening(ledger: Ledger) -> None:
    entry = ledger.submit("42", EVICT, "diagagent")
    reopened = Ledger(ledger.path, approvers=["alice"])
    assert reopened.approve(entry.id, "alice").state == "approved"
    conn = sqlite3.connect(ledger.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_from_settings_uses_the_state_dir_and_the_configured_approvers(isolated_settings: Path) -> None:
    ledger = Ledger.from_settings(Settings(approvers=["carol"]))
    assert ledger.path == isolated_settings / "ledger.sqlite" and ledger.path.is_file()
    assert ledger.is_approver("carol") and not ledger.is_approver("alice")


def test_concurrent_approvals_from_threads_one_wins_and_all_are_audited(tmp_path: Path) -> None:
    approvers = [f"op{i}" for i in range(8)]
    ledger = Ledger(tmp_path / "l.sqlite", approvers=approvers)
    entry = ledger.submit("42", EVICT, "diagagent")
    start = threading.Barrier(len(approvers))
    outcomes: dict[str, str] = {}

    def attempt(who: str) -> None:
        start.wait()
        try:
            Ledger(ledger.path, approvers=approvers).approve(entry.id, who)
            outcomes[who] = "won"
        except NotPending:
            outcomes[who] = "lost"

    threads = [threading.Thread(target=attempt, args=(who,)) for who in approvers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [who for who, o in outcomes.items() if o == "won"]
    assert len(winners) == 1 and len(outcomes) == len(approvers)
    assert ledger.get(entry.id).decided_by == winners[0]
    trail = ledger.audit(entry.id)[1:]
    assert sorted(a.actor for a in trail) == sorted(approvers)
    assert [a.actor for a in trail if a.event == "approved"] == winners
    assert sum(a.event == "approve_refused" for a in trail) == len(approvers) - 1


def _approve_in_process(path: str, who: str, entry_id: int, start: multiprocessing.synchronize.Barrier,
                        results: multiprocessing.queues.Queue) -> None:
    start.wait()
    try:
        Ledger(Path(path), approvers=[who]).approve(entry_id, who)
        results.put((who, "won"))
    except NotPending:
        results.put((who, "lost"))


def test_concurrent_approvals_from_processes_one_wins_and_all_are_audited(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite", approvers=[])
    entry = ledger.submit("42", EVICT, "diagagent")
    ctx = multiprocessing.get_context("fork")
    who = [f"op{i}" for i in range(4)]
    start, results = ctx.Barrier(len(who)), ctx.Queue()
    procs = [ctx.Process(target=_approve_in_process, args=(str(ledger.path), w, entry.id, start, results))
             for w in who]
    for p in procs:
        p.start()
    outcomes = dict(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert all(p.exitcode == 0 for p in procs)
    winners = [w for w, o in outcomes.items() if o == "won"]
    assert len(winners) == 1 and sorted(outcomes) == who
    assert ledger.get(entry.id).state == "approved" and ledger.get(entry.id).decided_by == winners[0]
    trail = ledger.audit(entry.id)[1:]
    assert sorted((a.actor, a.event) for a in trail) == sorted(
        (w, "approved" if w in winners else "approve_refused") for w in who)


def test_policy_warnings_are_stored_with_the_entry(ledger: Ledger) -> None:
    """A proposal built elsewhere (the LLM agent) without warnings still carries the guardrails' warnings."""
    entry = ledger.submit("42", EVICT, "agent:llm", job=make_job(spares=0))
    assert entry.state == "pending" and EVICT.warnings == []
    assert entry.policy_warnings == ["evicts 1 node, only 0 spares: the job restarts smaller or waits"]
