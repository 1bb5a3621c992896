"""Approval-gated actions: proposals, policy guardrails, the SQLite Ledger with its audit trail, executors.

Only an authorized operator's approval moves a proposal to an executor, at most once.
"""

from diagagent.actions.executors import (
    ExecutionPlan,
    PolicyUnchecked,
    approve_and_execute,
    current_policy,
    plan,
)
from diagagent.actions.identity import Actor
from diagagent.actions.integrity import VerifyReport
from diagagent.actions.lease import Lease
from diagagent.actions.ledger import (
    AuditRecord,
    CitedLine,
    EntryState,
    Ledger,
    LedgerEntry,
    LedgerError,
    NotAuthorized,
    NotPending,
    UnknownEntry,
    verify_ledger,
)
from diagagent.actions.policy import PolicyResult, check
from diagagent.actions.proposals import propose
from diagagent.actions.templates import TemplateError, UnsafeValue

__all__ = ["Actor", "AuditRecord", "CitedLine", "EntryState", "ExecutionPlan", "Lease", "Ledger", "LedgerEntry", "LedgerError",
           "NotAuthorized", "NotPending", "PolicyResult", "PolicyUnchecked", "TemplateError", "UnknownEntry",
           "UnsafeValue", "VerifyReport", "approve_and_execute", "check", "current_policy", "plan", "propose",
           "verify_ledger"]
