"""Why a diagnosis's confidence is what it is: the tier its evidence reached, what raised and what held it down,
and the one check that would settle it. It explains the number; it never changes the fault, category or number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diagagent.contract import ConfidenceWhy, NodeScore
from diagagent.diagnosis.analyses import INCOMPLETE_CONFIDENCE

if TYPE_CHECKING:
    from diagagent.diagnosis.analyses import Analyses
    from diagagent.diagnosis.differential import Decision, Line
    from diagagent.schemata import FailureSchema

TIER_MEANS = {
    "decisive": "a line that proves the fault (decisive signature)",
    "strong": "lines that point to the fault (strong signatures), none that proves it",
    "weak": "only hints of the fault (weak signatures), such as timeouts",
    "schema": "a past failure's schema, with no line signature",
    "unsure": "evidence for more than one fault, none ahead",
    "none": "no failure evidence",
}
CLOSE_RUNNER_UP = 0.75  # a runner-up at this share of the leader's score or more holds the confidence down
CHECK_PROBES = {"hardware": "dcgm-diag", "network": "ibstat"}


def _where(hit_line: Line) -> str:
    where = f"{hit_line.file}:{hit_line.line}" if hit_line.file and hit_line.line else (hit_line.host or "")
    return f" ({where})" if where else ""


def explain(a: Analyses, decision: Decision, named: list[NodeScore], schema: FailureSchema | None,
            confidence: float) -> ConfidenceWhy:
    """The reasons behind `confidence`, read from the decision and what the analyzers could and could not see."""
    raised: list[str] = []
    held: list[str] = []
    tier = decision.tier
    means = TIER_MEANS.get(tier, tier)
    if tier == "none" and a.logs is not None and a.logs.causes():
        means = "error lines that no known signature or past failure matches"  # cited, but not recognized
    elif tier == "unsure" and not decision.hits:
        means = "no line matches a known signature; a past failure's schema matches too weakly to name its fault"
    basis = (f"{confidence:.0%}: {means}"
             + (f"; such evidence was right {decision.confidence:.0%} of the time on the dev cases"
                if tier not in ("none", "unsure") else ""))
    seen: set[str] = set()
    for h in decision.hits:
        if h.signature.id in seen or len(seen) >= 3:
            continue
        seen.add(h.signature.id)
        raised.append(f"{h.signature.strength} sign of {h.fault}: {h.signature.id}{_where(h.line)}")
    best = decision.candidates[0] if decision.candidates else None
    if best is not None and "schema" in best.why:
        raised.append(f"a past failure's schema agrees ({best.why.split('best schema match ')[-1].strip('()')})")
    health = a.health
    top = named[0].host if named else None
    if top and health is not None and health.present:
        node = health.node(top)
        if node is not None and node.verdict != "healthy":
            raised.append(f"the probes on {top} find it {node.verdict}: {node.reason}")
    if tier in ("strong", "weak", "schema") and decision.fault:
        held.append("no line proves it outright (no decisive signature)")
    if len(decision.candidates) > 1 and best is not None and best.score > 0:
        second = decision.candidates[1]
        if second.score >= CLOSE_RUNNER_UP * best.score:
            held.append(f"{second.fault} fits nearly as well ({second.score:.2f} against {best.score:.2f})")
    if not decision.hits and tier != "none":
        held.append("no line in the logs or probes matches a known signature")
    if tier != "decisive":  # what would have confirmed it was not there to read
        held += [f"no {part}/ in the bundle to confirm it" for part in a.bundle.missing]
    for name in dict.fromkeys(a.incomplete):
        held.append(f"the {name} analyzer did not finish (x{INCOMPLETE_CONFIDENCE:g} for each such)")
    if confidence < decision.confidence * INCOMPLETE_CONFIDENCE ** len(set(a.incomplete)) - 1e-9:
        held.append("no cause line was found, so it is capped low")
    return ConfidenceWhy(basis=basis, tier=tier, raised=raised, held_down=held, check=_check(a, decision, schema, top))


def _check(a: Analyses, decision: Decision, schema: FailureSchema | None, top: str | None) -> str | None:
    """The one check that would settle it: the differential's, else the schema's first, else a probe of the node."""
    if decision.check:
        return decision.check
    if schema is not None and schema.discriminating_checks:
        return schema.discriminating_checks[0]
    probe = CHECK_PROBES.get(decision.category or "")
    if top and probe:
        return f"`diagagent probe {top} --probe {probe}`"
    if decision.fault is None and "stacks" in a.bundle.missing:
        return "take py-spy dumps of every rank (`py-spy dump --pid PID`) and diagnose again"
    return None


__all__ = ["explain"]
