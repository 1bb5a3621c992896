"""Policy guardrails: what an action may not do (violations block it) and what it costs (warnings, said plainly).

Checked against the job as `job.yaml` describes it: its nodes, spares, checkpoints and code history.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from diagagent.contract import ActionProposal
from diagagent.telemetry.job import Job


class PolicyResult(BaseModel):
    """The verdict on one proposal: `ok` when nothing blocks it; warnings never block."""

    violations: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def check(proposal: ActionProposal, job: Job) -> PolicyResult:
    """Apply the guardrails for the proposal's kind; `none` has nothing to check."""
    if proposal.kind == "evict":
        return _check_evict(proposal, job)
    if proposal.kind == "restart":
        return _check_restart(proposal, job)
    if proposal.kind == "rollback":
        return _check_rollback(proposal, job)
    return PolicyResult()


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _check_evict(proposal: ActionProposal, job: Job) -> PolicyResult:
    result = PolicyResult()
    nodes = list(dict.fromkeys(proposal.nodes))
    if not nodes:
        result.violations.append("the eviction names no nodes")
        return result
    known = set(job.hosts)
    strangers = [h for h in nodes if h not in known]
    if strangers:
        result.violations.append(f"evicts {', '.join(repr(h) for h in strangers)}: not a node of job {job.job_id}")
    if job.spares is None:
        result.warnings.append(f"evicts {_plural(len(nodes), 'node')}; job.yaml does not say how many spare nodes "
                               "there are: the job may restart smaller or wait")
    elif len(nodes) > job.spares:
        result.warnings.append(f"evicts {_plural(len(nodes), 'node')}, only {_plural(job.spares, 'spare')}: "
                               "the job restarts smaller or waits")
    if known and known <= set(nodes):
        result.warnings.append(f"evicts every node of job {job.job_id}")
    return result


def _check_restart(proposal: ActionProposal, job: Job) -> PolicyResult:
    result = PolicyResult()
    step = proposal.from_step
    if step is None:
        result.violations.append("the restart names no checkpoint step")
        return result
    checkpoint = next((c for c in job.checkpoints if c.step == step), None)
    if checkpoint is None:
        result.violations.append(f"restarts from step {step}: job {job.job_id} has no checkpoint at that step")
        return result
    if not checkpoint.valid:
        result.violations.append(f"restarts from step {step}: that checkpoint is marked invalid")
    if proposal.checkpoint_path is not None and proposal.checkpoint_path != checkpoint.path:
        result.violations.append(f"restarts from {proposal.checkpoint_path!r}: the checkpoint at step {step} "
                                 f"is {checkpoint.path!r}")
    newer = [c.step for c in job.checkpoints if c.step > step]
    if newer:
        result.warnings.append(f"newer checkpoints exist (step {max(newer)}): make sure the job loads step {step}, "
                               "not the latest")
    return result


def _check_rollback(proposal: ActionProposal, job: Job) -> PolicyResult:
    result = PolicyResult()
    target = (proposal.to_commit or "").lower()
    if not target:
        result.violations.append("the rollback names no commit")
        return result
    commits = [c.commit.lower() for c in job.code]
    if target not in commits:
        result.violations.append(f"rolls back to {proposal.to_commit!r}: not a commit in job {job.job_id}'s code "
                                 "history")
    elif target == commits[-1]:
        result.violations.append(f"rolls back to {proposal.to_commit!r}: that is the commit that ran")
    return result


__all__ = ["PolicyResult", "check"]
