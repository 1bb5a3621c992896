"""The Ledger's SQLite schema and what keeps it honest: triggers, the audit trail's hash chain, and checks on both.

Each audit row carries the hash of the row before it, so a row edited, deleted or inserted from outside shows as a break.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from diagagent.contract import ActionProposal

GENESIS = "0" * 64  # the prev_hash of the first audit row
AUDIT_FIELDS = ("seq", "entry_id", "at", "actor", "event", "state_before", "state_after", "reason", "detail")
STATES = ("pending", "approved", "running", "unknown", "rejected", "executed", "failed")
# the only moves an entry's state may make; anything else (say executed -> pending by hand) the trigger refuses
TRANSITIONS = (("pending", "approved"), ("pending", "rejected"), ("approved", "running"), ("approved", "failed"),
               ("running", "executed"), ("running", "failed"), ("running", "unknown"), ("unknown", "executed"),
               ("unknown", "failed"), ("unknown", "pending"))
LEASE_COLUMNS = ("lease_token", "lease_host", "lease_pid", "lease_start", "lease_until")

_STATE_LIST = ", ".join(f"'{s}'" for s in STATES)
_TRANSITION_LIST = ", ".join(f"'{a}>{b}'" for a, b in TRANSITIONS)
ENTRIES_TABLE = f"""CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    action_key TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ({_STATE_LIST})),
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
    lease_token TEXT,
    lease_host TEXT,
    lease_pid INTEGER,
    lease_start TEXT,
    lease_until TEXT,
    UNIQUE (job_id, action_key)
)"""
AUDIT_TABLE = """CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id INTEGER,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    event TEXT NOT NULL,
    state_before TEXT,
    state_after TEXT,
    reason TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}',
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
)"""
# the columns an entry had before leases (a ledger from then is rebuilt with them)
LEGACY_ENTRY_COLUMNS = ("id", "job_id", "action_key", "state", "proposal", "proposed_by", "created_at", "updated_at",
                        "decided_by", "decided_at", "decision_reason", "policy_checked", "violations",
                        "policy_warnings", "executor", "commands", "output")

_FIXED = ("id", "job_id", "action_key", "proposal", "proposed_by", "created_at")
TRIGGERS: dict[str, str] = {
    "audit_no_update": "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit "
                       "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END",
    "audit_no_delete": "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit "
                       "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END",
    "audit_chained": "CREATE TRIGGER audit_chained BEFORE INSERT ON audit "
                     "WHEN NEW.prev_hash IS NOT COALESCE((SELECT hash FROM audit ORDER BY seq DESC LIMIT 1), "
                     f"'{GENESIS}') "
                     "BEGIN SELECT RAISE(ABORT, 'an audit row must carry the hash of the last row'); END",
    "entries_no_delete": "CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries "
                         "BEGIN SELECT RAISE(ABORT, 'ledger entries cannot be deleted'); END",
    "entries_fixed": f"CREATE TRIGGER entries_fixed BEFORE UPDATE OF {', '.join(_FIXED)} ON entries "
                     f"WHEN {' OR '.join(f'NEW.{c} IS NOT OLD.{c}' for c in _FIXED)} "
                     "BEGIN SELECT RAISE(ABORT, 'what was proposed, and by whom, cannot be changed'); END",
    "entries_transitions": "CREATE TRIGGER entries_transitions BEFORE UPDATE OF state ON entries "
                           "WHEN NEW.state IS NOT OLD.state AND OLD.state || '>' || NEW.state NOT IN "
                           f"({_TRANSITION_LIST}) "
                           "BEGIN SELECT RAISE(ABORT, 'not a transition a ledger entry may make'); END",
}


def row_hash(prev_hash: str, row: Mapping[str, Any]) -> str:
    """sha256 over the previous row's hash and this row's stored values, in AUDIT_FIELDS order, as compact JSON."""
    body = json.dumps([row[f] for f in AUDIT_FIELDS], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


def _normal(sql: str) -> str:
    return " ".join(sql.split())


def trigger_problems(conn: sqlite3.Connection) -> dict[str, str]:
    """Our triggers that are `missing` or `altered` (their SQL is not ours), by name."""
    have = {name: sql or "" for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")}
    problems = {}
    for name, sql in TRIGGERS.items():
        if name not in have:
            problems[name] = "missing"
        elif _normal(have[name]) != _normal(sql):
            problems[name] = "altered"
    return problems


def restore_triggers(conn: sqlite3.Connection, names: list[str]) -> None:
    for name in names:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute(TRIGGERS[name])


def trigger_alert(problems: dict[str, str], when: str) -> str:
    """What an operator reads about triggers found missing or altered, then recreated."""
    listed = ", ".join(f"{name} ({how})" for name, how in sorted(problems.items()))
    return (f"trigger(s) {listed} found {when}: changed outside diagagent, so the ledger was unprotected; recreated. "
            "Rows edited or deleted meanwhile show as breaks in `diagagent actions verify`")


class VerifyReport(BaseModel):
    """What `verify` found: `findings` empty means the trail is whole; `recreated` names triggers put back."""

    path: str
    rows: int = 0
    head_seq: int = 0
    head_hash: str = GENESIS
    findings: list[str] = Field(default_factory=list)
    recreated: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


def _when(at: str) -> datetime | None:
    try:
        return datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None


def check_trail(conn: sqlite3.Connection, report: VerifyReport) -> None:
    """Walk the chain and compare each entry with its trail, adding what is wrong to `report.findings`."""
    rows = conn.execute("SELECT * FROM audit ORDER BY seq").fetchall()
    findings = report.findings
    prev_hash, prev_seq, prev_at, prev_when = GENESIS, 0, "", None
    for r in rows:
        seq = r["seq"]
        if seq > prev_seq + 1:
            gap = f"row #{prev_seq + 1} is" if seq == prev_seq + 2 else f"rows #{prev_seq + 1}..#{seq - 1} are"
            findings.append(f"audit {gap} missing: deleted")
        elif r["prev_hash"] != prev_hash:
            findings.append(f"audit row #{seq} does not follow row #{prev_seq}: a row was inserted or deleted "
                            "before it, or its link was edited")
        if row_hash(r["prev_hash"], r) != r["hash"]:
            findings.append(f"audit row #{seq} was edited: its content does not match its hash")
        when = _when(r["at"])
        if when is None:
            findings.append(f"audit row #{seq} has no readable date ({r['at']!r})")
        elif prev_when is not None and when < prev_when:
            findings.append(f"audit row #{seq} is dated {r['at']}, before row #{prev_seq} ({prev_at}): back-dated "
                            "or inserted")
        if r["event"] == "ledger_alert":
            findings.append(f"audit row #{seq} ({r['at']}) records tampering: {r['reason']}")
        prev_hash, prev_seq, prev_at, prev_when = r["hash"], seq, r["at"], when or prev_when
    counter = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").fetchone()
    if counter is not None and counter[0] > prev_seq:
        findings.append(f"audit rows after #{prev_seq} are missing: the last {counter[0] - prev_seq} row(s) were "
                        "deleted")
    report.rows, report.head_seq, report.head_hash = len(rows), prev_seq, prev_hash
    _check_entries(conn, rows, findings)


def _check_entries(conn: sqlite3.Connection, rows: list[sqlite3.Row], findings: list[str]) -> None:
    trails: dict[int, list[sqlite3.Row]] = {}
    for r in rows:
        if r["entry_id"] is not None:
            trails.setdefault(r["entry_id"], []).append(r)
    for e in conn.execute("SELECT id, state, proposal, proposed_by FROM entries ORDER BY id").fetchall():
        trail = trails.pop(e["id"], [])
        if not trail:
            findings.append(f"entry #{e['id']} has no audit trail")
            continue
        first = trail[0]
        if first["event"] != "submitted" or first["actor"] != e["proposed_by"]:
            findings.append(f"entry #{e['id']} says it was proposed by {e['proposed_by']!r}; its audit trail "
                            f"begins with {first['event']} by {first['actor']!r}")
        elif not _same_proposal(first["detail"], e["proposal"]):
            findings.append(f"entry #{e['id']}'s proposal is not the one its audit trail says was submitted")
        if trail[-1]["state_after"] != e["state"]:
            findings.append(f"entry #{e['id']} is {e['state']} but its audit trail ends in {trail[-1]['state_after']}"
                            ": the entry was edited outside diagagent")
    for entry_id, trail in sorted(trails.items()):
        findings.append(f"audit row #{trail[0]['seq']} is about entry #{entry_id}, which is not in the ledger: "
                        "deleted")


def _same_proposal(detail: str, stored: str) -> bool:
    try:
        said = json.loads(detail)
        submitted = said.get("proposal")
        if submitted is None:  # written before proposals were kept in the trail
            return True
        kept = json.loads(stored)
        return (ActionProposal.model_validate(submitted) == ActionProposal.model_validate(kept)
                and said.get("cited", []) == kept.get("cited", []))  # the cited lines, as they were
    except (ValueError, AttributeError, ValidationError):
        return False


__all__ = ["AUDIT_FIELDS", "GENESIS", "TRIGGERS", "VerifyReport", "check_trail", "restore_triggers", "row_hash",
           "trigger_alert", "trigger_problems"]
