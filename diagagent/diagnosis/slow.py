"""A job marked slow is still running: it is never diagnosed as a hang unless stack dumps show ranks stuck.

Slowness and a hang share their symptoms in logs and flows (long iterations, waits in all-reduce); only stacks tell.
"""

from __future__ import annotations

from diagagent.diagnosis.differential import Decision

HANG_WORD = "hang"  # a fault whose id names a hang (gpu_hang): the job stopped making progress
SLOW_NOT_HANG_CHECK = ("take py-spy dumps of every rank while it runs (`py-spy dump --pid PID`): a hang shows ranks "
                       "stuck in one place across dumps, a slow job shows them moving")


def is_hang(fault: str | None) -> bool:
    return fault is not None and HANG_WORD in fault.split("_")


def slow_is_not_a_hang(decision: Decision, status: str | None, stack_evidence: bool,
                       unsure_confidence: float) -> Decision:
    """`decision` unless it names a hang for a job marked slow with no stack evidence; then the best candidate that is
    not a hang, or, with none, "not sure" with the check that would tell."""
    if status != "slow" or stack_evidence or not is_hang(decision.fault):
        return decision
    others = [c for c in decision.candidates if not is_hang(c.fault)]
    return Decision(fault=None, category=others[0].category if others else None,
                    confidence=min(decision.confidence, unsure_confidence), tier="unsure", candidates=others,
                    hits=[h for h in decision.hits if not is_hang(h.fault)], check=SLOW_NOT_HANG_CHECK)


__all__ = ["is_hang", "slow_is_not_a_hang"]
