"""The tamper-evident trail on a real SQLite file: each audit row carries the hash of the one before it, and
`diagagent actions verify` reports rows edited, deleted or inserted with raw sqlite3, entries edited by hand, and
dropped triggers (recreated, and said so), exiting non-zero; a clean ledger verifies.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diagagent.actions import Ledger, approve_and_execute
from diagagent.apps.cli import build_app
from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal
from tests.test_actions_proposals import make_job


@pytest.fixture
def ledger(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Ledger:
    """Two entries with some history: #1 approved and run (dry-run), #2 pending after a refused approval."""
    monkeypatch.setenv("DIAGAGENT_APPROVERS", '["alice", "bob"]')
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(tmp_path / "no-jobs"))
    settings = Settings.load()
    ledger = Ledger.from_settings(settings)
    job = make_job()
    first = ledger.submit("42", ActionProposal(kind="evict", nodes=["node-003"]), "carol", job=job)
    approve_and_execute(ledger, first.id, "alice", settings, "dcgmi confirms")
    second = ledger.submit("42", ActionProposal(kind="restart", from_step=2000), "carol", job=job)
    with pytest.raises(Exception, match="not an approver"):
        ledger.approve(second.id, "mallory")
    return ledger


def verify(*extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["actions", "verify", *extra])
    return result.exit_code, result.output


@contextmanager
def raw(ledger: Ledger) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(ledger.path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def trigger_sql(conn: sqlite3.Connection, name: str) -> str:
    return conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)).fetchone()[0]


def test_a_clean_ledger_verifies(ledger: Ledger) -> None:
    code, out = verify()
    assert code == 0, out
    assert "intact" in out
    report = json.loads(verify("--json")[1])
    assert report["ok"] and report["findings"] == [] and report["rows"] == len(ledger.audit())


def test_an_edited_row_is_reported(ledger: Ledger) -> None:
    with raw(ledger) as conn:  # a careful editor: drops the trigger, edits, puts the trigger back exactly
        sql = trigger_sql(conn, "audit_no_update")
        conn.execute("DROP TRIGGER audit_no_update")
        conn.execute("UPDATE audit SET actor = 'bob', reason = 'looks fine' WHERE event = 'approved'")
        conn.execute(sql)
    seq = next(a.seq for a in ledger.audit() if a.event == "approved")
    code, out = verify()
    assert code == 1 and f"audit row #{seq} was edited" in out


def test_a_deleted_row_is_reported_and_the_dropped_trigger_too(ledger: Ledger) -> None:
    refused = next(a.seq for a in ledger.audit() if a.event == "approve_refused")
    middle = next(a.seq for a in ledger.audit() if a.event == "approved")
    with raw(ledger) as conn:
        conn.execute("DROP TRIGGER audit_no_delete")
        conn.execute("DELETE FROM audit WHERE seq IN (?, ?)", (middle, refused))  # one inside, one at the end
    code, out = verify()
    assert code == 1
    assert f"audit row #{middle} is missing" in out and f"after #{refused - 1} are missing" in out
    assert "trigger audit_no_delete is missing" in out and "recreated" in out
    with raw(ledger) as conn:  # recreated: the trail is append-only again
        assert trigger_sql(conn, "audit_no_delete")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM audit")
    code, out = verify()  # the tampering stays on record
    assert code == 1 and "audit_no_delete" in out


def test_an_inserted_back_dated_row_is_reported(ledger: Ledger) -> None:
    from diagagent.actions.ledger import row_hash

    with raw(ledger) as conn:
        seq, head = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        row = {"seq": seq + 1, "entry_id": 2, "at": "2020-01-01T00:00:00+00:00", "actor": "alice",
               "event": "approved", "state_before": "pending", "state_after": "approved", "reason": "",
               "detail": "{}"}
        with pytest.raises(sqlite3.DatabaseError, match="hash of the last row"):  # a row not linked to the head
            conn.execute("INSERT INTO audit (entry_id, at, actor, event, prev_hash, hash) "
                         "VALUES (2, '2020-01-01T00:00:00+00:00', 'alice', 'approved', 'x', 'y')")
        # even with the hash computed as diagagent would: it is dated before the row it follows
        first_hash = row_hash(head, row)
        conn.execute("INSERT INTO audit (seq, entry_id, at, actor, event, state_before, state_after, reason, detail,"
                     " prev_hash, hash) VALUES (:seq, :entry_id, :at, :actor, :event, :state_before, :state_after,"
                     " :reason, :detail, :prev_hash, :hash)", {**row, "prev_hash": head, "hash": first_hash})
        row = {**row, "seq": seq + 2, "at": "2099-01-01T00:00:00+00:00", "event": "rejected",
               "state_before": "approved", "state_after": "rejected"}
        conn.execute("INSERT INTO audit (seq, entry_id, at, actor, event, state_before, state_after, reason, detail,"
                     " prev_hash, hash) VALUES (:seq, :entry_id, :at, :actor, :event, :state_before, :state_after,"
                     " :reason, :detail, :prev_hash, :hash)",
                     {**row, "prev_hash": first_hash, "hash": "0" * 64})
    code, out = verify()
    assert code == 1
    assert f"audit row #{seq + 1} is dated 2020-01-01" in out and f"audit row #{seq + 2} was edited" in out
    assert "entry #2 is pending but its audit trail ends in rejected" in out


def test_entries_cannot_be_reset_or_deleted_by_hand_and_an_edit_is_reported(ledger: Ledger) -> None:
    with raw(ledger) as conn:
        with pytest.raises(sqlite3.DatabaseError, match="not a transition"):
            conn.execute("UPDATE entries SET state = 'pending' WHERE id = 1")
        with pytest.raises(sqlite3.DatabaseError, match="cannot be deleted"):
            conn.execute("DELETE FROM entries WHERE id = 1")
        with pytest.raises(sqlite3.DatabaseError, match="cannot be changed"):
            conn.execute("UPDATE entries SET proposed_by = 'alice' WHERE id = 2")
        conn.execute("DROP TRIGGER entries_transitions")
        conn.execute("UPDATE entries SET state = 'pending' WHERE id = 1")
    code, out = verify()
    assert code == 1 and "entry #1 is pending but its audit trail ends in executed" in out
    assert "trigger entries_transitions is missing" in out


def test_a_trigger_dropped_then_the_ledger_opened_is_recorded_not_silently_repaired(ledger: Ledger) -> None:
    with raw(ledger) as conn:
        conn.execute("DROP TRIGGER audit_no_delete")
    reopened = Ledger(ledger.path, approvers=["alice"])
    assert reopened.alerts and "audit_no_delete" in reopened.alerts[0]
    alert = reopened.audit()[-1]
    assert (alert.actor, alert.event) == ("ledger", "ledger_alert") and "audit_no_delete" in alert.reason
    code, out = verify()
    assert code == 1 and f"audit row #{alert.seq}" in out and "audit_no_delete" in out


def test_a_ledger_from_before_the_chain_is_sealed_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(LEGACY_SCHEMA)
    conn.execute("INSERT INTO entries (job_id, action_key, state, proposal, proposed_by, created_at, updated_at) "
                 "VALUES ('42', 'k', 'pending', ?, 'diagagent', '2026-01-01T00:00:00+00:00', "
                 "'2026-01-01T00:00:00+00:00')", (ActionProposal(kind="none").model_dump_json(),))
    conn.execute("INSERT INTO audit (entry_id, at, actor, event, state_before, state_after) "
                 "VALUES (1, '2026-01-01T00:00:00+00:00', 'diagagent', 'submitted', NULL, 'pending')")
    conn.close()
    ledger = Ledger(path, approvers=["alice"])
    assert [a.event for a in ledger.audit()] == ["submitted", "ledger_migrated"]
    assert ledger.approve(1, "alice").state == "approved"
    assert ledger.verify().ok


LEGACY_SCHEMA = """
CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, action_key TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'executed', 'failed')),
    proposal TEXT NOT NULL, proposed_by TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    decided_by TEXT, decided_at TEXT, decision_reason TEXT NOT NULL DEFAULT '',
    policy_checked INTEGER NOT NULL DEFAULT 0, violations TEXT NOT NULL DEFAULT '[]',
    policy_warnings TEXT NOT NULL DEFAULT '[]', executor TEXT, commands TEXT NOT NULL DEFAULT '[]',
    output TEXT NOT NULL DEFAULT '', UNIQUE (job_id, action_key));
CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, entry_id INTEGER, at TEXT NOT NULL, actor TEXT NOT NULL,
    event TEXT NOT NULL, state_before TEXT, state_after TEXT, reason TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}');
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
"""
