"""Executors and `approve_and_execute`, the one path from an operator's approval to a command that runs.

dry-run records what it would run; slurm and kubernetes run argv lists from tools/actions.yaml without a shell;
script runs the configured program with the entry as JSON on stdin. What ran, and its output, go to the audit trail.
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess

from pydantic import BaseModel

from diagagent.actions.identity import Actor
from diagagent.actions.ledger import Ledger, LedgerEntry
from diagagent.actions.policy import PolicyResult, check
from diagagent.actions.templates import TEMPLATES_FILE, ActionTemplates, Argv, TemplateError, render_for
from diagagent.config import Settings
from diagagent.telemetry import BundleError, JobStore, UnknownJob
from diagagent.telemetry.job import Job

MAX_OUTPUT_CHARS = 20_000  # per command, kept in the ledger


class ExecutionPlan(BaseModel):
    """What approving an entry will do: the executor, the argv lists, and whether they really run."""

    executor: str
    renders: str  # whose templates: the executor itself, or the one dry-run stands in for
    commands: list[Argv]
    runs: bool
    stdin: str | None = None
    timeout_s: float = 600.0


def load_templates(settings: Settings) -> ActionTemplates:
    return ActionTemplates.load(settings.content_dir("tools") / TEMPLATES_FILE)


def plan(entry: LedgerEntry, settings: Settings, templates: ActionTemplates | None = None) -> ExecutionPlan:
    """Render what the configured executor would do for the entry; TemplateError if it cannot be done safely."""
    templates = templates or load_templates(settings)
    executor = settings.executor
    renders = templates.dry_run_renders if executor == "dry-run" else executor
    commands = render_for(templates, renders, entry.proposal, entry.job_id, entry.id)
    stdin = None
    if renders == "script" and commands:
        stdin = entry.model_dump_json(include={"id", "job_id", "proposal", "proposed_by", "decided_by",
                                               "decision_reason"})
    return ExecutionPlan(executor=executor, renders=renders, commands=commands, runs=executor != "dry-run",
                         stdin=stdin, timeout_s=templates.of(renders).timeout_s)


def run_plan(execution: ExecutionPlan) -> tuple[str, bool]:
    """Run each argv in turn (never through a shell), stopping at the first failure; (transcript, all ok)."""
    if not execution.runs:
        shown = "\n".join(f"$ {shlex.join(argv)}" for argv in execution.commands) or "(nothing to run)"
        return f"dry run ({execution.renders} commands), nothing ran:\n{shown}", True
    parts: list[str] = []
    for argv in execution.commands:
        parts.append(f"$ {shlex.join(argv)}")
        try:
            stdin = {"input": execution.stdin} if execution.stdin is not None else {"stdin": subprocess.DEVNULL}
            done = subprocess.run(argv, shell=False, capture_output=True, text=True, timeout=execution.timeout_s,
                                  check=False, **stdin)
        except FileNotFoundError:
            parts.append(f"{argv[0]}: not found on PATH")
            return "\n".join(parts), False
        except subprocess.TimeoutExpired:
            parts.append(f"timed out after {execution.timeout_s:g} s")
            return "\n".join(parts), False
        except OSError as exc:
            parts.append(f"{argv[0]}: {exc.strerror or exc}")
            return "\n".join(parts), False
        printed = (done.stdout + done.stderr)[-MAX_OUTPUT_CHARS:]
        parts += ([printed.rstrip("\n")] if printed.strip() else []) + [f"[exit {done.returncode}]"]
        if done.returncode != 0:
            return "\n".join(parts), False
    return "\n".join(parts) or "(nothing to run)", True


def _load_job(job_id: str, settings: Settings) -> Job | None:
    store = JobStore(settings.jobs_dir, settings.limits)
    try:
        path = store.path_of(job_id)
        if path.is_dir():
            return Job.load(path / "job.yaml")
        with store.get(job_id) as bundle:
            return bundle.job
    except (UnknownJob, BundleError, OSError):
        return None


def current_policy(entry: LedgerEntry, settings: Settings) -> PolicyResult | None:
    """The guardrails' verdict against the job's job.yaml as it is now; None when the jobs folder lacks the job."""
    job = _load_job(entry.job_id, settings)
    return check(entry.proposal, job) if job is not None else None


class PolicyUnchecked(Exception):
    """The guardrails could not be checked (the job is not found and was not given at submission); nothing ran."""


def lease_seconds(execution: ExecutionPlan, settings: Settings) -> float:
    """How long an execution may hold its lease: every command's timeout, and the configured grace."""
    return execution.timeout_s * max(1, len(execution.commands)) + settings.lease_grace_s


def approve_and_execute(ledger: Ledger, entry_id: int, by: str | Actor, settings: Settings,
                        reason: str = "") -> LedgerEntry:
    """Check the guardrails, approve (only a configured approver; one winner), render, run, and record the outcome.

    The guardrails run again against the job's current job.yaml when the jobs folder has it; a violation rejects
    the entry, so the approval is refused. Raises NotAuthorized / NotPending from the ledger (both audited) or
    PolicyUnchecked; a command that cannot be rendered safely, or that fails, leaves the entry `failed`. The
    lease is committed before anything runs: if this process dies mid-run the entry becomes `unknown`, never
    approved again.
    """
    actor = Actor.of(by)
    entry = ledger.get(entry_id)
    verdict = current_policy(entry, settings) if entry.state == "pending" else None
    if verdict is not None:
        ledger.record_policy(entry_id, verdict, note=f"checked again as {actor} asked to approve")
    elif entry.state == "pending" and not entry.policy_checked:
        ledger.record_policy(entry_id, None, note=f"{actor} asked to approve; job {entry.job_id} is not under "
                                                  f"{settings.jobs_dir}")
        raise PolicyUnchecked(f"the guardrails cannot be checked: job {entry.job_id} is not under "
                              f"{settings.jobs_dir}, and the proposal was submitted without its job")
    entry = ledger.approve(entry_id, actor, reason)
    try:
        execution = plan(entry, settings)
    except (TemplateError, ValueError, OSError) as exc:  # ValueError, OSError: a bad or missing tools/actions.yaml
        return ledger.refuse_execution(entry_id, f"refused to run: {exc}", executor=settings.executor)
    lease = ledger.start_execution(entry_id, execution.commands, executor=settings.executor,
                                   lease_s=lease_seconds(execution, settings))
    try:
        output, ok = run_plan(execution)
    except BaseException as exc:  # interrupted mid-run: what ran is not known, so the entry says so
        with contextlib.suppress(Exception):
            ledger.abandon(entry_id, lease, f"the executor stopped with {type(exc).__name__}: {exc}")
        raise
    return ledger.record_execution(entry_id, lease, output, ok)


__all__ = ["ExecutionPlan", "PolicyUnchecked", "approve_and_execute", "current_policy", "lease_seconds", "load_templates",
           "plan", "run_plan"]
