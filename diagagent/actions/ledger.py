"""The Ledger: proposed actions and their states on SQLite, with an append-only audit trail of every attempt.

pending -> approved -> executed | failed, or pending -> rejected. Transitions are atomic, so of concurrent approvals
exactly one wins; the audit table refuses UPDATE and DELETE by trigger.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from diagagent.actions.policy import PolicyResult, check
from diagagent.config import Settings
from diagagent.contract import ActionProposal
from diagagent.telemetry.job import Job

EntryState = Literal["pending", "approved", "rejected", "executed", "failed"]
AuditEvent = Literal["submitted", "policy_checked", "policy_rejected", "policy_unchecked", "approved",
                     "approve_refused", "rejected", "reject_refused", "executed", "failed"]
POLICY_ACTOR = "policy"
BUSY_TIMEOUT_S = 30.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    action_key TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'executed', 'failed')),
    proposal TEXT NOT NULL,
    proposed_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT,
    decision_reason TEXT NOT NULL DEFAULT '',
    policy_checked INTEGER NOT NULL DEFAULT 0,
    violations TEXT NOT NULL DEFAULT '[]',
    policy_warnings TEXT NOT NULL DEFAULT '[]',
    executor TEXT,
    commands TEXT NOT NULL DEFAULT '[]',
    output TEXT NOT NULL DEFAULT '',
    UNIQUE (job_id, action_key)
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id INTEGER,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    event TEXT NOT NULL,
    state_before TEXT,
    state_after TEXT,
    reason TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
"""


class LedgerError(Exception):
    """A refused ledger operation; the message says why, for the operator."""


class UnknownEntry(LedgerError, LookupError):
    pass


class NotAuthorized(LedgerError, PermissionError):
    pass


class NotPending(LedgerError):
    """The entry was already decided (another approver may have won the race)."""


class LedgerEntry(BaseModel):
    """One proposed action and where it stands; `violations` and `policy_warnings` are the latest policy check."""

    id: int
    job_id: str
    state: EntryState
    proposal: ActionProposal
    proposed_by: str
    created_at: datetime
    updated_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None
    decision_reason: str = ""
    policy_checked: bool = False
    violations: list[str] = Field(default_factory=list)
    policy_warnings: list[str] = Field(default_factory=list)
    executor: str | None = None
    commands: list[list[str]] = Field(default_factory=list)
    output: str = ""


class AuditRecord(BaseModel):
    """One append-only row: who did or tried what, when, why, and (for executions) what ran and its output."""

    seq: int
    entry_id: int | None
    at: datetime
    actor: str
    event: AuditEvent
    state_before: EntryState | None = None
    state_after: EntryState | None = None
    reason: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)


def action_key(proposal: ActionProposal) -> str:
    """What makes two proposals the same action: kind and targets, not the wording of the reason."""
    target = {"kind": proposal.kind, "nodes": sorted(set(proposal.nodes)), "from_step": proposal.from_step,
              "checkpoint_path": proposal.checkpoint_path, "to_commit": (proposal.to_commit or "").lower() or None}
    return hashlib.sha256(json.dumps(target, sort_keys=True).encode()).hexdigest()[:24]


def _now() -> str:
    return datetime.now(UTC).isoformat()


class Ledger:
    """Proposed actions on one SQLite file (WAL); one connection per call, so threads and processes may share it.

    Only a name in `approvers` may approve or reject, and never the one who proposed the action.
    """

    def __init__(self, path: Path, approvers: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self.approvers = frozenset(a.strip() for a in approvers if a.strip())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect()
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
        finally:
            conn.close()

    @classmethod
    def from_settings(cls, settings: Settings) -> Ledger:
        """`<state_dir>/ledger.sqlite`, with the configured approvers."""
        return cls(settings.state_dir / "ledger.sqlite", settings.approvers)

    def is_approver(self, who: str) -> bool:
        return who.strip() in self.approvers

    # --- connections ---------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.row_factory = sqlite3.Row
        return conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: the write lock is taken up front, so read-check-update cannot interleave."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    @staticmethod
    def _append_audit(conn: sqlite3.Connection, entry_id: int | None, actor: str, event: AuditEvent,
                      before: str | None, after: str | None, reason: str = "",
                      detail: dict[str, Any] | None = None) -> None:
        conn.execute("INSERT INTO audit (entry_id, at, actor, event, state_before, state_after, reason, detail) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (entry_id, _now(), actor, event, before, after, reason, json.dumps(detail or {})))

    @staticmethod
    def _row(conn: sqlite3.Connection, entry_id: int) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise UnknownEntry(f"no action #{entry_id} in the ledger")
        return row

    @staticmethod
    def _entry(row: sqlite3.Row) -> LedgerEntry:
        data = dict(row)
        data.pop("action_key")
        data["proposal"] = ActionProposal.model_validate_json(data["proposal"])
        data["violations"] = json.loads(data["violations"])
        data["policy_warnings"] = json.loads(data["policy_warnings"])
        data["commands"] = json.loads(data["commands"])
        data["policy_checked"] = bool(data["policy_checked"])
        return LedgerEntry.model_validate(data)

    # --- writing -------------------------------------------------------------------------------------

    def submit(self, job_id: str, proposal: ActionProposal, proposed_by: str, *,
               job: Job | None = None) -> LedgerEntry:
        """Record a proposal as pending; the same action for the same job returns the existing entry, in any state.

        With `job`, the guardrails run now and a proposal that violates them is recorded as rejected by policy;
        without it, `approve_and_execute` checks them before anything runs.
        """
        if not job_id.strip() or not proposed_by.strip():
            raise LedgerError("a submission needs a job id and who proposed it")
        key = action_key(proposal)
        with self._transaction() as conn:
            row = conn.execute("SELECT * FROM entries WHERE job_id = ? AND action_key = ?", (job_id, key)).fetchone()
            if row is not None:
                return self._entry(row)
            now = _now()
            cur = conn.execute(
                "INSERT INTO entries (job_id, action_key, state, proposal, proposed_by, created_at, updated_at) "
                "VALUES (?, ?, 'pending', ?, ?, ?, ?)",
                (job_id, key, proposal.model_dump_json(), proposed_by, now, now))
            entry_id = int(cur.lastrowid or 0)
            self._append_audit(conn, entry_id, proposed_by, "submitted", None, "pending", proposal.reason,
                               {"proposal": proposal.model_dump()})
            if job is not None:
                self._apply_policy(conn, entry_id, check(proposal, job))
            return self._entry(self._row(conn, entry_id))

    def record_policy(self, entry_id: int, policy: PolicyResult | None, note: str = "") -> LedgerEntry:
        """Store the guardrails' verdict (a violation rejects a pending entry); None audits that it could not run."""
        with self._transaction() as conn:
            if policy is None:
                state = self._row(conn, entry_id)["state"]
                self._append_audit(conn, entry_id, POLICY_ACTOR, "policy_unchecked", state, state, note)
            else:
                self._apply_policy(conn, entry_id, policy, note)
            return self._entry(self._row(conn, entry_id))

    def _apply_policy(self, conn: sqlite3.Connection, entry_id: int, policy: PolicyResult, note: str = "") -> None:
        state = self._row(conn, entry_id)["state"]
        now = _now()
        conn.execute("UPDATE entries SET policy_checked = 1, violations = ?, policy_warnings = ?, updated_at = ? "
                     "WHERE id = ?", (json.dumps(policy.violations), json.dumps(policy.warnings), now, entry_id))
        detail = {"violations": policy.violations, "warnings": policy.warnings}
        if policy.ok or state != "pending":
            self._append_audit(conn, entry_id, POLICY_ACTOR, "policy_checked", state, state, note, detail)
            return
        reason = "; ".join(policy.violations)
        conn.execute("UPDATE entries SET state = 'rejected', decided_by = ?, decided_at = ?, decision_reason = ? "
                     "WHERE id = ? AND state = 'pending'", (POLICY_ACTOR, now, reason, entry_id))
        self._append_audit(conn, entry_id, POLICY_ACTOR, "policy_rejected", state, "rejected", reason, detail)

    def approve(self, entry_id: int, by: str, reason: str = "") -> LedgerEntry:
        """pending -> approved, only by a configured approver who did not propose it; refusals are audited."""
        return self._decide(entry_id, by, reason, "approved")

    def reject(self, entry_id: int, by: str, reason: str) -> LedgerEntry:
        """pending -> rejected, only by a configured approver, with a reason; refusals are audited."""
        if not reason.strip():
            raise LedgerError("a rejection needs a reason")
        return self._decide(entry_id, by, reason, "rejected")

    def _decide(self, entry_id: int, by: str, reason: str, outcome: Literal["approved", "rejected"]) -> LedgerEntry:
        by = by.strip()
        refused_event: AuditEvent = "approve_refused" if outcome == "approved" else "reject_refused"
        error: LedgerError | None = None
        with self._transaction() as conn:
            row = self._row(conn, entry_id)
            state = row["state"]
            if by not in self.approvers:
                error = NotAuthorized(f"{by or 'an unnamed user'} is not an approver; approvers are set in the "
                                      "settings (DIAGAGENT_APPROVERS)")
            elif by == row["proposed_by"]:
                error = NotAuthorized(f"{by} proposed action #{entry_id} and cannot also decide on it")
            else:
                now = _now()
                cur = conn.execute("UPDATE entries SET state = ?, decided_by = ?, decided_at = ?, decision_reason = ?,"
                                   " updated_at = ? WHERE id = ? AND state = 'pending'",
                                   (outcome, by, now, reason, now, entry_id))
                if cur.rowcount == 1:
                    self._append_audit(conn, entry_id, by, outcome, state, outcome, reason)
                else:
                    by_whom = f" by {row['decided_by']}" if row["decided_by"] else ""
                    why = f": {row['decision_reason']}" if row["decision_reason"] else ""
                    error = NotPending(f"action #{entry_id} is already {state}{by_whom}{why}")
            if error is not None:
                self._append_audit(conn, entry_id, by or "(unnamed)", refused_event, state, state,
                                   f"refused: {error}", {"asked_reason": reason})
            entry = self._entry(self._row(conn, entry_id))
        if error is not None:
            raise error
        return entry

    def record_execution(self, entry_id: int, commands: list[list[str]], output: str, ok: bool, *,
                         executor: str = "") -> LedgerEntry:
        """approved -> executed | failed, with what ran and what it printed."""
        outcome: EntryState = "executed" if ok else "failed"
        with self._transaction() as conn:
            state = self._row(conn, entry_id)["state"]
            cur = conn.execute("UPDATE entries SET state = ?, executor = ?, commands = ?, output = ?, updated_at = ? "
                               "WHERE id = ? AND state = 'approved'",
                               (outcome, executor or None, json.dumps(commands), output, _now(), entry_id))
            if cur.rowcount != 1:
                raise NotPending(f"action #{entry_id} is {state}, not approved: nothing may run")
            self._append_audit(conn, entry_id, f"executor:{executor or 'unknown'}", outcome, state, outcome,
                               "" if ok else "a command failed", {"commands": commands, "output": output})
            return self._entry(self._row(conn, entry_id))

    # --- reading -------------------------------------------------------------------------------------

    def get(self, entry_id: int) -> LedgerEntry:
        conn = self._connect()
        try:
            return self._entry(self._row(conn, entry_id))
        finally:
            conn.close()

    def audit(self, entry_id: int | None = None) -> list[AuditRecord]:
        """The trail in the order it was written; one entry's, or all."""
        conn = self._connect()
        try:
            if entry_id is None:
                rows = conn.execute("SELECT * FROM audit ORDER BY seq").fetchall()
            else:
                rows = conn.execute("SELECT * FROM audit WHERE entry_id = ? ORDER BY seq", (entry_id,)).fetchall()
        finally:
            conn.close()
        return [AuditRecord.model_validate({**dict(r), "detail": json.loads(r["detail"])}) for r in rows]

    def list(self, job_id: str | None = None, state: EntryState | None = None) -> list[LedgerEntry]:
        """Entries, oldest first, optionally of one job and/or in one state."""
        conn = self._connect()
        try:
            rows = conn.execute("SELECT * FROM entries WHERE (? IS NULL OR job_id = ?) AND (? IS NULL OR state = ?) "
                                "ORDER BY id", (job_id, job_id, state, state)).fetchall()
        finally:
            conn.close()
        return [self._entry(r) for r in rows]


__all__ = ["AuditRecord", "EntryState", "Ledger", "LedgerEntry", "LedgerError", "NotAuthorized", "NotPending",
           "UnknownEntry", "action_key"]
