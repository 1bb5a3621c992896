"""Approval-gated actions: proposals, policy guardrails, the SQLite Ledger with its audit trail, executors.

Only an authorized operator's approval moves a proposal to an executor.
"""
