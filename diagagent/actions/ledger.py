"""The Ledger: proposed actions and their states on SQLite, with a hash-chained, append-only audit trail of every attempt.

pending -> approved -> running -> executed | failed, or pending -> rejected; a run whose executor died is `unknown`
until an operator reconciles it. Transitions are atomic, so of concurrent approvals exactly one wins.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from diagagent.actions.identity import Actor, name_key
from diagagent.actions.integrity import (
    AUDIT_TABLE,
    ENTRIES_TABLE,
    GENESIS,
    LEASE_COLUMNS,
    LEGACY_ENTRY_COLUMNS,
    TRIGGERS,
    VerifyReport,
    check_trail,
    restore_triggers,
    row_hash,
    trigger_alert,
    trigger_problems,
)
from diagagent.actions.lease import Lease
from diagagent.actions.policy import PolicyResult, check
from diagagent.config import Settings
from diagagent.contract import ActionProposal, Evidence
from diagagent.telemetry.job import Job

EntryState = Literal["pending", "approved", "running", "unknown", "rejected", "executed", "failed"]
AuditEvent = Literal["submitted", "policy_checked", "policy_rejected", "policy_unchecked", "approved",
                     "approve_refused", "rejected", "reject_refused", "execution_started", "executed", "failed",
                     "execution_lost", "reconciled", "reconcile_refused", "late_result", "ledger_alert",
                     "ledger_migrated"]
Outcome = Literal["succeeded", "failed", "not-run"]
OUTCOMES: dict[str, EntryState] = {"succeeded": "executed", "failed": "failed", "not-run": "pending"}
POLICY_ACTOR = "policy"
LEDGER_ACTOR = "ledger"  # the ledger itself: lost executions, tampering found on open, migrations
BUSY_TIMEOUT_S = 30.0

log = logging.getLogger(__name__)


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE: the write lock is taken up front, so read-check-update cannot interleave; rolled back if the
    block raises, committed when it ends."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class LedgerError(Exception):
    """A refused ledger operation; the message says why, for the operator."""


class UnknownEntry(LedgerError, LookupError):
    pass


class NotAuthorized(LedgerError, PermissionError):
    pass


class NotPending(LedgerError):
    """The entry was already decided (another approver may have won the race)."""


MAX_CITED = 24  # cited lines kept per entry
MAX_CITED_CHARS = 2000  # a cited line longer than this is kept cut


class CitedLine(BaseModel):
    """A line a proposal rests on, kept whole: a diagnosis's evidence ids (e2, e11) mean nothing a week later."""

    kind: str = "log"
    file: str | None = None  # relative to the bundle root
    line: int | None = None
    host: str | None = None
    rank: int | None = None
    text: str = ""  # untrusted telemetry, as logged
    why: str = ""

    @property
    def where(self) -> str:
        """`logs/node-013/kern.log:2 node-013 rank 3`, with what is known."""
        spot = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "")
        who = " ".join(p for p in (self.host or "", f"rank {self.rank}" if self.rank is not None else "") if p)
        return " ".join(p for p in (spot, who) if p) or self.kind


def cited_lines(proposal: ActionProposal, evidence: Sequence[Evidence]) -> list[CitedLine]:
    """The evidence `proposal` cites by id, resolved against its diagnosis's `evidence`, as lines to keep."""
    by_id = {e.id: e for e in evidence}
    out = []
    for eid in dict.fromkeys(proposal.evidence):
        e = by_id.get(eid)
        if e is not None and len(out) < MAX_CITED:
            out.append(CitedLine(kind=e.kind, file=e.file, line=e.line, host=e.host, rank=e.rank,
                                 text=e.text[:MAX_CITED_CHARS], why=e.why))
    return out


class LedgerEntry(BaseModel):
    """One proposed action and where it stands; `violations` and `policy_warnings` are the latest policy check.

    `lease` is set while it runs (and stays on an `unknown` entry: the executor that was lost).
    """

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
    lease: Lease | None = None
    cited: list[CitedLine] = Field(default_factory=list)  # the lines the proposal rests on, as they were


class AuditRecord(BaseModel):
    """One append-only row: who did or tried what, when, why, and (for executions) what ran and its output.

    `hash` chains it to the row before (`prev_hash`); `diagagent actions verify` checks the chain.
    """

    seq: int
    entry_id: int | None
    at: datetime
    actor: str
    event: AuditEvent
    state_before: EntryState | None = None
    state_after: EntryState | None = None
    reason: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)
    prev_hash: str = ""
    hash: str = ""


def action_key(proposal: ActionProposal) -> str:
    """What makes two proposals the same action: kind and targets, not the wording of the reason."""
    target = {"kind": proposal.kind, "nodes": sorted(set(proposal.nodes)), "from_step": proposal.from_step,
              "checkpoint_path": proposal.checkpoint_path, "to_commit": (proposal.to_commit or "").lower() or None}
    return hashlib.sha256(json.dumps(target, sort_keys=True).encode()).hexdigest()[:24]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _lease_of(row: sqlite3.Row) -> Lease | None:
    if row["lease_token"] is None:
        return None
    return Lease(token=row["lease_token"], host=row["lease_host"] or "", pid=row["lease_pid"] or 0,
                 start=row["lease_start"] or "", until=datetime.fromisoformat(row["lease_until"]))


class Ledger:
    """Proposed actions on one SQLite file (WAL); one connection per call, so threads and processes may share it.

    Only a name in `approvers` may approve, reject or reconcile, never the one who proposed the action, and only
    a name in `admins` may act as someone else. Opening checks the triggers: any found missing or altered are
    recreated, and that is recorded in the trail and in `alerts`, never silently.
    """

    def __init__(self, path: Path, approvers: Iterable[str] = (), admins: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self.approvers = frozenset(a.strip() for a in approvers if a.strip())
        self.admins = frozenset(a.strip() for a in admins if a.strip())
        self._approver_keys = frozenset(name_key(a) for a in self.approvers)
        self._admin_keys = frozenset(name_key(a) for a in self.admins)
        self.alerts: list[str] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect()
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            if not self._ready(conn):
                with _immediate(conn):
                    self._set_up(conn)
        finally:
            conn.close()

    @classmethod
    def from_settings(cls, settings: Settings) -> Ledger:
        """`<state_dir>/ledger.sqlite`, with the configured approvers and admins."""
        return cls(settings.state_dir / "ledger.sqlite", settings.approvers, settings.admins)

    def is_approver(self, who: str) -> bool:
        return name_key(who) in self._approver_keys

    def is_admin(self, who: str) -> bool:
        return name_key(who) in self._admin_keys

    def refusal(self, who: str | Actor, proposed_by: str | None = None, entry_id: int | None = None) -> str | None:
        """Why `who` may not decide on an action proposed by `proposed_by` (None: they may)."""
        actor = Actor.of(who)
        if actor.via is not None and not self.is_admin(actor.via):
            return (f"{actor.via} may not act as {actor.name}: only an operator named in DIAGAGENT_ADMINS may "
                    "use --as")
        if not self.is_approver(actor.name):
            return (f"{actor.name or 'an unnamed user'} is not an approver; approvers are set in the settings "
                    "(DIAGAGENT_APPROVERS)")
        if proposed_by is not None and name_key(proposed_by) in actor.people():
            who_proposed = actor.via if actor.via and name_key(actor.via) == name_key(proposed_by) else actor.name
            what = f"action #{entry_id}" if entry_id is not None else "this action"
            return f"{who_proposed} proposed {what} and cannot also decide on it"
        return None

    # --- the file ------------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.row_factory = sqlite3.Row
        return conn

    @staticmethod
    def _tables(conn: sqlite3.Connection) -> set[str]:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    @classmethod
    def _ready(cls, conn: sqlite3.Connection) -> bool:
        if not {"entries", "audit"} <= cls._tables(conn):
            return False
        columns = {r[1] for r in conn.execute("PRAGMA table_info(audit)")}
        return "hash" in columns and not trigger_problems(conn)

    def _set_up(self, conn: sqlite3.Connection) -> None:
        """Create a new ledger, seal one from before the hash chain, or put back triggers changed from outside."""
        tables = self._tables(conn) & {"entries", "audit"}
        if not tables:
            conn.execute(ENTRIES_TABLE)
            conn.execute(AUDIT_TABLE)
            restore_triggers(conn, list(TRIGGERS))
            return
        if "audit" in tables and "hash" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
            self._migrate(conn)
            return
        missing_tables = sorted({"entries", "audit"} - tables)
        conn.execute(ENTRIES_TABLE)
        conn.execute(AUDIT_TABLE)
        problems = trigger_problems(conn)
        restore_triggers(conn, sorted(problems))
        message = trigger_alert(problems, "when the ledger was opened") if problems else ""
        if missing_tables:
            message = (f"table(s) {', '.join(missing_tables)} were missing when the ledger was opened: dropped "
                       "outside diagagent; recreated empty. " + message).strip()
        if message:
            self.alerts.append(message)
            log.warning("ledger %s: %s", self.path, message)
            self._append_audit(conn, None, LEDGER_ACTOR, "ledger_alert", None, None, message,
                               {"triggers": problems, "tables": missing_tables})

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """A ledger written before leases and the hash chain: rebuild `entries`, hash the rows it has, audit that."""
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        if "entries" in self._tables(conn):
            conn.execute("ALTER TABLE entries RENAME TO entries_before_leases")
            conn.execute(ENTRIES_TABLE)
            columns = ", ".join(LEGACY_ENTRY_COLUMNS)
            conn.execute(f"INSERT INTO entries ({columns}) SELECT {columns} FROM entries_before_leases")
            conn.execute("DROP TABLE entries_before_leases")
        else:
            conn.execute(ENTRIES_TABLE)
        conn.execute("ALTER TABLE audit ADD COLUMN prev_hash TEXT NOT NULL DEFAULT ''")
        conn.execute("ALTER TABLE audit ADD COLUMN hash TEXT NOT NULL DEFAULT ''")
        prev = GENESIS
        rows = conn.execute("SELECT * FROM audit ORDER BY seq").fetchall()
        for row in rows:
            digest = row_hash(prev, row)
            conn.execute("UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, digest, row["seq"]))
            prev = digest
        restore_triggers(conn, list(TRIGGERS))
        self._append_audit(conn, None, LEDGER_ACTOR, "ledger_migrated", None, None,
                           f"sealed the {len(rows)} audit row(s) written before the hash chain; entries can now "
                           "hold execution leases", {"rows": len(rows)})

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A connection in a write transaction (`_immediate`), closed after it."""
        conn = self._connect()
        try:
            with _immediate(conn):
                yield conn
        finally:
            conn.close()

    @staticmethod
    def _append_audit(conn: sqlite3.Connection, entry_id: int | None, actor: str, event: AuditEvent,
                      before: str | None, after: str | None, reason: str = "",
                      detail: dict[str, Any] | None = None) -> None:
        """Append one row chained to the last (inside the caller's write transaction, so the chain cannot fork)."""
        last = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        counter = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").fetchone()
        seq = max(last["seq"] if last else 0, counter[0] if counter else 0) + 1
        prev = last["hash"] if last else GENESIS
        row = {"seq": seq, "entry_id": entry_id, "at": _now(), "actor": actor, "event": event, "state_before": before,
               "state_after": after, "reason": reason, "detail": json.dumps(detail or {}, default=str)}
        conn.execute("INSERT INTO audit (seq, entry_id, at, actor, event, state_before, state_after, reason, detail, "
                     "prev_hash, hash) VALUES (:seq, :entry_id, :at, :actor, :event, :state_before, :state_after, "
                     ":reason, :detail, :prev_hash, :hash)", {**row, "prev_hash": prev, "hash": row_hash(prev, row)})

    @staticmethod
    def _row(conn: sqlite3.Connection, entry_id: int) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise UnknownEntry(f"no action #{entry_id} in the ledger")
        return row

    @staticmethod
    def _entry(row: sqlite3.Row) -> LedgerEntry:
        data = {k: v for k, v in dict(row).items() if k != "action_key" and k not in LEASE_COLUMNS}
        stored = json.loads(data["proposal"])
        data["cited"] = stored.pop("cited", None) or []  # kept beside the proposal, in its fixed column
        data["proposal"] = ActionProposal.model_validate(stored)
        data["violations"] = json.loads(data["violations"])
        data["policy_warnings"] = json.loads(data["policy_warnings"])
        data["commands"] = json.loads(data["commands"])
        data["policy_checked"] = bool(data["policy_checked"])
        data["lease"] = _lease_of(row)
        return LedgerEntry.model_validate(data)

    @staticmethod
    def _not_open(row: sqlite3.Row) -> str:
        """Why an entry cannot be decided, run or reconciled now, in its state's words."""
        entry_id, state, lease = row["id"], row["state"], _lease_of(row)
        if state == "unknown":
            return (f"action #{entry_id}'s outcome is unknown: its execution was interrupted"
                    + (f" ({lease.describe()})" if lease else "") + "; it does not run again until someone finds "
                    f"out what happened and records it with `diagagent actions reconcile {entry_id}`")
        if state == "running":
            return (f"action #{entry_id} is running now" + (f" ({lease.describe()})" if lease else ""))
        by_whom = f" by {row['decided_by']}" if row["decided_by"] else ""
        why = f": {row['decision_reason']}" if row["decision_reason"] else ""
        return f"action #{entry_id} is already {state}{by_whom}{why}"

    # --- proposing and deciding ----------------------------------------------------------------------

    def submit(self, job_id: str, proposal: ActionProposal, proposed_by: str, *,
               job: Job | None = None, evidence: Sequence[Evidence] = ()) -> LedgerEntry:
        """Record a proposal as pending; the same action for the same job returns the existing entry, in any state.

        `evidence`: the diagnosis's evidence; each line the proposal cites is stored whole (file, line, host, rank,
        text) with it, since the ids are per run.

        `proposed_by` is the human who asked for the diagnosis: they cannot decide on it. With `job`, the guardrails
        run now and a proposal that violates them is recorded as rejected by policy; without it,
        `approve_and_execute` checks them before anything runs.
        """
        proposed_by = proposed_by.strip()
        if not job_id.strip() or not proposed_by:
            raise LedgerError("a submission needs a job id and who proposed it")
        key = action_key(proposal)
        with self._transaction() as conn:
            row = conn.execute("SELECT * FROM entries WHERE job_id = ? AND action_key = ?", (job_id, key)).fetchone()
            if row is not None:
                return self._entry(row)
            now = _now()
            cited = [c.model_dump(mode="json", exclude_defaults=True) for c in cited_lines(proposal, evidence)]
            stored = {**proposal.model_dump(mode="json"), **({"cited": cited} if cited else {})}
            cur = conn.execute(
                "INSERT INTO entries (job_id, action_key, state, proposal, proposed_by, created_at, updated_at) "
                "VALUES (?, ?, 'pending', ?, ?, ?, ?)",
                (job_id, key, json.dumps(stored, ensure_ascii=False), proposed_by, now, now))
            entry_id = int(cur.lastrowid or 0)
            self._append_audit(conn, entry_id, proposed_by, "submitted", None, "pending", proposal.reason,
                               {"proposal": proposal.model_dump(mode="json"), **({"cited": cited} if cited else {})})
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

    def find(self, job_id: str, proposal: ActionProposal) -> LedgerEntry | None:
        """This job's entry for the same action (kind and targets), in whatever state it is now; None if never recorded."""
        conn = self._connect()
        try:
            row = conn.execute("SELECT * FROM entries WHERE job_id = ? AND action_key = ?",
                               (job_id, action_key(proposal))).fetchone()
        finally:
            conn.close()
        return self._entry(row) if row is not None else None

    def approve(self, entry_id: int, by: str | Actor, reason: str = "") -> LedgerEntry:
        """pending -> approved, only by a configured approver who did not propose it; refusals are audited."""
        return self._decide(entry_id, Actor.of(by), reason, "approved")

    def reject(self, entry_id: int, by: str | Actor, reason: str) -> LedgerEntry:
        """pending -> rejected, only by a configured approver, with a reason; refusals are audited."""
        if not reason.strip():
            raise LedgerError("a rejection needs a reason")
        return self._decide(entry_id, Actor.of(by), reason, "rejected")

    def _decide(self, entry_id: int, actor: Actor, reason: str, outcome: Literal["approved", "rejected"]) -> LedgerEntry:
        refused_event: AuditEvent = "approve_refused" if outcome == "approved" else "reject_refused"
        error: LedgerError | None = None
        with self._transaction() as conn:
            row = self._row(conn, entry_id)
            state = row["state"]
            why = self.refusal(actor, row["proposed_by"], entry_id)
            if why is not None:
                error = NotAuthorized(why)
            else:
                now = _now()
                cur = conn.execute("UPDATE entries SET state = ?, decided_by = ?, decided_at = ?, decision_reason = ?,"
                                   " updated_at = ? WHERE id = ? AND state = 'pending'",
                                   (outcome, str(actor), now, reason, now, entry_id))
                if cur.rowcount == 1:
                    self._append_audit(conn, entry_id, str(actor), outcome, state, outcome, reason)
                else:
                    error = NotPending(self._not_open(row))
            if error is not None:
                self._append_audit(conn, entry_id, str(actor), refused_event, state, state, f"refused: {error}",
                                   {"asked_reason": reason})
            entry = self._entry(self._row(conn, entry_id))
        if error is not None:
            raise error
        return entry

    # --- running -------------------------------------------------------------------------------------

    def start_execution(self, entry_id: int, commands: list[list[str]], *, executor: str,
                        lease_s: float) -> Lease:
        """approved -> running, committed with this process' lease before anything runs; at most once per approval."""
        lease = Lease.take(lease_s)
        with self._transaction() as conn:
            row = self._row(conn, entry_id)
            cur = conn.execute("UPDATE entries SET state = 'running', executor = ?, commands = ?, lease_token = ?, "
                               "lease_host = ?, lease_pid = ?, lease_start = ?, lease_until = ?, updated_at = ? "
                               "WHERE id = ? AND state = 'approved'",
                               (executor, json.dumps(commands), lease.token, lease.host, lease.pid, lease.start,
                                lease.until.isoformat(), _now(), entry_id))
            if cur.rowcount != 1:
                raise NotPending(f"action #{entry_id} is {row['state']}, not approved: nothing may run")
            self._append_audit(conn, entry_id, f"executor:{executor}", "execution_started", "approved", "running",
                               f"run by {lease.describe()}",
                               {"commands": commands, "lease": lease.model_dump(mode="json")})
        return lease

    def record_execution(self, entry_id: int, lease: Lease, output: str, ok: bool) -> LedgerEntry:
        """running (or unknown, if given up for lost meanwhile) -> executed | failed, with what it printed.

        A result that arrives after an operator reconciled the entry is kept in the trail as `late_result`.
        """
        outcome: EntryState = "executed" if ok else "failed"
        with self._transaction() as conn:
            row = self._row(conn, entry_id)
            state, executor = row["state"], f"executor:{row['executor'] or 'unknown'}"
            commands = json.loads(row["commands"])
            if row["lease_token"] != lease.token or state not in ("running", "unknown"):
                self._append_audit(conn, entry_id, executor, "late_result", state, state,
                                   f"a result came after action #{entry_id} was reconciled ({'ok' if ok else 'failed'})",
                                   {"commands": commands, "output": output, "ok": ok, "lease": lease.token})
                return self._entry(self._row(conn, entry_id))
            conn.execute("UPDATE entries SET state = ?, output = ?, lease_token = NULL, lease_host = NULL, "
                         "lease_pid = NULL, lease_start = NULL, lease_until = NULL, updated_at = ? WHERE id = ?",
                         (outcome, output, _now(), entry_id))
            reason = "" if ok else "a command failed"
            if state == "unknown":
                reason = (reason + "; " if reason else "") + "the result came after the run was given up for lost"
            self._append_audit(conn, entry_id, executor, outcome, state, outcome, reason,
                               {"commands": commands, "output": output})
            return self._entry(self._row(conn, entry_id))

    def refuse_execution(self, entry_id: int, output: str, *, executor: str) -> LedgerEntry:
        """approved -> failed without running anything (the commands could not be rendered safely)."""
        with self._transaction() as conn:
            state = self._row(conn, entry_id)["state"]
            cur = conn.execute("UPDATE entries SET state = 'failed', executor = ?, commands = '[]', output = ?, "
                               "updated_at = ? WHERE id = ? AND state = 'approved'",
                               (executor or None, output, _now(), entry_id))
            if cur.rowcount != 1:
                raise NotPending(f"action #{entry_id} is {state}, not approved: nothing may run")
            self._append_audit(conn, entry_id, f"executor:{executor or 'unknown'}", "failed", state, "failed",
                               "nothing ran", {"commands": [], "output": output})
            return self._entry(self._row(conn, entry_id))

    def abandon(self, entry_id: int, lease: Lease, why: str) -> None:
        """running -> unknown: the executor holding `lease` stopped before it could tell what ran."""
        with self._transaction() as conn:
            self._lose(conn, entry_id, lease.token, why)

    def _lose(self, conn: sqlite3.Connection, entry_id: int, token: str | None, why: str) -> None:
        cur = conn.execute("UPDATE entries SET state = 'unknown', updated_at = ? WHERE id = ? AND state = 'running' "
                           "AND lease_token IS ?", (_now(), entry_id, token))
        if cur.rowcount == 1:
            self._append_audit(conn, entry_id, LEDGER_ACTOR, "execution_lost", "running", "unknown",
                               f"the outcome is unknown: {why}; find out what ran and record it with "
                               f"`diagagent actions reconcile {entry_id}`", {"lease": token})

    def _settle_lost(self) -> None:
        """Mark `unknown` every running entry whose executor can no longer finish (its process gone, lease expired)."""
        conn = self._connect()
        try:
            running = conn.execute("SELECT * FROM entries WHERE state = 'running'").fetchall()
            lost = [(r["id"], r["lease_token"], why) for r in running
                    if (why := (lease.lost() if (lease := _lease_of(r)) else "no lease was recorded"))]
            if not lost:
                return
            with _immediate(conn):
                for entry_id, token, why in lost:
                    self._lose(conn, entry_id, token, why)
        finally:
            conn.close()

    def reconcile(self, entry_id: int, by: str | Actor, outcome: Outcome, note: str) -> LedgerEntry:
        """unknown -> executed | failed | pending (not-run: it needs a new approval), as an approver found it.

        Never runs anything; refusals are audited.
        """
        if outcome not in OUTCOMES:
            raise LedgerError(f"unknown outcome {outcome!r}; one of: {', '.join(OUTCOMES)}")
        if not note.strip():
            raise LedgerError("a reconciliation needs a note: what you found, and how")
        actor = Actor.of(by)
        self._settle_lost()
        error: LedgerError | None = None
        with self._transaction() as conn:
            row = self._row(conn, entry_id)
            state = row["state"]
            why = self.refusal(actor)
            if why is not None:
                error = NotAuthorized(why)
            elif state != "unknown":
                error = NotPending(self._not_open(row) + ": only an action whose outcome is unknown is reconciled")
            else:
                after = OUTCOMES[outcome]
                found = f"[reconciled by {actor}: {outcome}: {note.strip()}]"
                output = f"{row['output']}\n{found}" if row["output"] else found
                undecide = ", decided_by = NULL, decided_at = NULL, decision_reason = ''" if after == "pending" else ""
                conn.execute(f"UPDATE entries SET state = ?, output = ?, updated_at = ?{undecide}, lease_token = NULL, "
                             "lease_host = NULL, lease_pid = NULL, lease_start = NULL, lease_until = NULL "
                             "WHERE id = ? AND state = 'unknown'", (after, output, _now(), entry_id))
                self._append_audit(conn, entry_id, str(actor), "reconciled", state, after, note.strip(),
                                   {"outcome": outcome, "lease": row["lease_token"]})
            if error is not None:
                self._append_audit(conn, entry_id, str(actor), "reconcile_refused", state, state, f"refused: {error}",
                                   {"outcome": outcome, "note": note})
            entry = self._entry(self._row(conn, entry_id))
        if error is not None:
            raise error
        return entry

    # --- reading -------------------------------------------------------------------------------------

    def get(self, entry_id: int) -> LedgerEntry:
        self._settle_lost()
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
        self._settle_lost()
        conn = self._connect()
        try:
            rows = conn.execute("SELECT * FROM entries WHERE (? IS NULL OR job_id = ?) AND (? IS NULL OR state = ?) "
                                "ORDER BY id", (job_id, job_id, state, state)).fetchall()
        finally:
            conn.close()
        return [self._entry(r) for r in rows]

    def verify(self) -> VerifyReport:
        return verify_ledger(self.path)


def verify_ledger(path: Path, *, repair: bool = True) -> VerifyReport:
    """Check the chain, the entries against their trails, and the triggers, reading the file as it is.

    Triggers found missing or altered are reported and then (with `repair`) recreated, which the trail records and
    the report's `recreated` says. Nothing else is changed: a broken chain stays broken, for someone to look at.
    """
    path = Path(path)
    if not path.is_file():
        raise LedgerError(f"no ledger at {path}")
    report = VerifyReport(path=str(path))
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        if not {"entries", "audit"} <= Ledger._tables(conn):
            report.findings.append("the ledger's tables are missing: dropped outside diagagent")
            return report
        if "hash" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
            conn.close()
            Ledger(path)  # a ledger from before the chain: sealed (and audited) as any command would
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.row_factory = sqlite3.Row
        problems = trigger_problems(conn)
        report.findings += [f"trigger {name} is {how}: changed outside diagagent" + (" (recreated)" if repair else "")
                            for name, how in sorted(problems.items())]
        conn.execute("BEGIN")
        try:
            check_trail(conn, report)
        finally:
            conn.execute("COMMIT")
        if problems and repair:
            with _immediate(conn):
                restore_triggers(conn, sorted(problems))
                Ledger._append_audit(conn, None, LEDGER_ACTOR, "ledger_alert", None, None,
                                     trigger_alert(problems, "by `diagagent actions verify`"), {"triggers": problems})
            report.recreated = sorted(problems)
    finally:
        conn.close()
    return report


__all__ = ["Actor", "AuditRecord", "EntryState", "Ledger", "LedgerEntry", "LedgerError", "NotAuthorized",
           "NotPending", "Outcome", "UnknownEntry", "action_key", "verify_ledger"]
