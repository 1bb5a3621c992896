"""The agent's tools as plain functions `(ctx, **params) -> dict`, bound by name in `tools/agent.yaml`.

Each returns compact, JSON-able data with evidence ids; the budget in `budget.py` keeps results small. None of them
runs a command or approves anything: `request_probe` returns a command for the operator, `propose_action` a
pending proposal.
"""

from __future__ import annotations

from typing import Any

from diagagent.agent.context import ToolContext
from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence

MISSING = "this bundle has no {part}/: {what}"
MAX_TIMELINE_ITERATIONS = 200  # iterations one flow_timeline call may ask for
MAX_TIMELINE_NODES = 64  # nodes one flow_timeline call may ask for


def _where(e: Evidence) -> str:
    if e.file:
        return f"{e.file}:{e.lines}" if e.line else e.file
    return e.host or ""


def evidence_brief(e: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {"id": e.id, "role": e.role, "kind": e.kind, "where": _where(e), "text": e.text}
    if e.host:
        out["host"] = e.host
    if e.rank is not None:
        out["rank"] = e.rank
    if e.why:
        out["why"] = e.why
    return out


def diagnosis_brief(d: Diagnosis, evidence: int = 8) -> dict[str, Any]:
    return {
        "category": d.category, "fault": d.fault, "root_cause": d.root_cause, "confidence": d.confidence,
        "faulty_nodes": [{"host": n.host, "score": n.score, "reason": n.reason} for n in d.faulty_nodes],
        "stage": d.stage, "iteration": d.iteration,
        "evidence": [evidence_brief(e) for e in d.evidence[:evidence]],
        "schemata": [{"id": s.schema_id, "title": s.title, "fault": s.fault, "score": s.score} for s in d.schemata[:3]],
        "proposals": [p.model_dump(exclude_defaults=True) for p in d.proposals],
        "notes": d.notes,
    }


def overview(ctx: ToolContext) -> dict[str, Any]:
    job, b = ctx.bundle.job, ctx.bundle
    valid = [c.step for c in job.checkpoints if c.valid]
    return {
        "job_id": job.job_id, "name": job.name, "framework": job.framework, "status": job.status,
        "started_at": job.started_at, "ended_at": job.ended_at, "exit_code": job.exit_code,
        "nodes": len(job.nodes), "world_size": job.world_size, "gpus_per_node": job.gpus_per_node,
        "parallelism": job.parallelism.model_dump(include={"tp", "pp", "dp", "cp", "ep"}) if job.parallelism else None,
        "spares": job.spares, "code": [c.model_dump(include={"commit", "at", "message"}) for c in job.code[-3:]],
        "newest_valid_checkpoint": max(valid) if valid else None,
        "invalid_checkpoints": [c.step for c in job.checkpoints if not c.valid],
        "parts": {"logs": len(b.log_files), "flows": len(b.flow_files), "stacks": len(b.stack_files),
                  "probes": len(b.probe_files)},
        "missing": b.missing, "read_problems": [str(i) for i in b.issues[:10]],
    }


def draft_diagnosis(ctx: ToolContext) -> dict[str, Any]:
    return diagnosis_brief(ctx.draft())


def log_events(ctx: ToolContext, top: int = 10, node: str | None = None, role: str = "any") -> dict[str, Any]:
    logs = ctx.analyses.logs
    if logs is None:
        return {"note": MISSING.format(part="logs", what="no log events to show")}
    events = [e for e in logs.events if (role in ("any", None) or e.role == role)
              and (node is None or node in e.hosts)]
    out = []
    for e in events[: max(1, top)]:
        loc = e.first
        ev = ctx.analyses.evidence.cite("log", role=e.role, file=loc.file, line=loc.line, end_line=loc.end_line,
                                        host=loc.host, rank=loc.rank, text=loc.text, why=e.why,
                                        ts=loc.ts if loc.ts_exact else None, score=e.score)
        out.append({"evidence": ev.id, "role": e.role, "level": e.level, "template": e.template, "count": e.count,
                    "host_count": e.host_count, "hosts": e.hosts[:5], "first": f"{loc.file}:{ev.lines}",
                    "text": loc.text, "why": e.why})
    return {"events": out, "total": len(events), "stage": logs.stage,
            "first_abnormal_iteration": logs.first_abnormal_iteration, "lines_read": logs.lines_read,
            "notes": logs.notes[:5]}


def log_nodes(ctx: ToolContext, top: int = 8) -> dict[str, Any]:
    logs = ctx.analyses.logs
    if logs is None:
        return {"note": MISSING.format(part="logs", what="no node ranking from logs")}
    return {"nodes": [{"host": n.host, "score": n.score, "reasons": n.reasons[:3]} for n in logs.nodes[: max(1, top)]],
            "total": len(logs.nodes)}


def show_lines(ctx: ToolContext, file: str, line: int, context: int = 5) -> dict[str, Any]:
    found = ctx.bundle.lines_around(file, line, min(max(context, 0), 40))
    if not found:
        return {"error": f"no line {line} of a file {file!r} in this bundle"}
    return {"file": file, "lines": [{"line": n, "text": text, **({"cited": True} if n == line else {})}
                                    for n, text in found]}


def node_health(ctx: ToolContext, node: str | None = None, verdict: str = "any") -> dict[str, Any]:
    health = ctx.analyses.health
    if health is None or not health.present:
        return {"note": MISSING.format(part="probes", what="run `diagagent probe HOST --save BUNDLE` to collect them")}
    nodes = [n for n in health.nodes if (node is None or n.host == node) and verdict in ("any", None, n.verdict)]
    out = []
    for n in nodes:
        signals = []
        for s in n.signals[:4]:
            ev = ctx.analyses.evidence.cite("probe", role="cause" if n.verdict == "faulty" else "context",
                                            file=s.file, line=s.line, host=n.host, text=s.text, why=s.meaning)
            signals.append({"evidence": ev.id, "kind": s.kind, "code": s.code, "severity": s.severity,
                            "where": f"{s.file}:{s.line}", "text": s.text, "meaning": s.meaning, "action": s.action})
        out.append({"host": n.host, "verdict": n.verdict, "reason": n.reason, "signals": signals})
    counts = {v: sum(1 for n in health.nodes if n.verdict == v) for v in ("faulty", "degraded", "healthy")}
    return {"nodes": out, "counts": counts, "unprobed": health.unprobed_hosts[:20]}


def stack_clusters(ctx: ToolContext, top: int = 5) -> dict[str, Any]:
    stacks = ctx.analyses.stacks
    if stacks is None or not stacks.present:
        return {"note": MISSING.format(part="stacks", what="take py-spy dumps of every rank while the job hangs")}
    clusters = [{"id": c.id, "role": c.role, "ranks": c.ranks_text, "hosts": c.hosts[:6], "top_frame": c.top,
                 "collective": c.collective, "state": c.fr_state, "file": c.files[0] if c.files else None}
                for c in stacks.clusters[: max(1, top)]]
    ev = stacks.eviction
    return {"clusters": clusters, "total_clusters": len(stacks.clusters), "ranks": stacks.ranks,
            "flight_recorder": stacks.fr_summary.text if stacks.fr_summary else None,
            "eviction": None if ev is None else {"group": f"{ev.kind} group {ev.group_id}", "hosts": ev.hosts,
                                                 "machines": ev.machine_count, "reasoning": ev.reasoning}}


def _flows_or_note(ctx: ToolContext) -> Any:
    flows = ctx.analyses.flows
    if flows is None or not flows.has_flows:
        return None
    return flows


def flow_stragglers(ctx: ToolContext) -> dict[str, Any]:
    from diagagent.analysis.flows import stragglers

    flows = _flows_or_note(ctx)
    if flows is None:
        return {"note": MISSING.format(part="flows", what="stragglers cannot be timed from the network")}
    return stragglers(flows).model_dump(exclude_defaults=True)


def flow_links(ctx: ToolContext) -> dict[str, Any]:
    from diagagent.analysis.flows import links

    flows = _flows_or_note(ctx)
    if flows is None:
        return {"note": MISSING.format(part="flows", what="link throughput cannot be compared")}
    return links(flows).model_dump(exclude_defaults=True)


def flow_silence(ctx: ToolContext) -> dict[str, Any]:
    from diagagent.analysis.flows import silence

    flows = _flows_or_note(ctx)
    if flows is None:
        return {"note": MISSING.format(part="flows", what="when the job stopped talking is unknown")}
    return silence(flows).model_dump(exclude_defaults=True)


def flow_timeline(ctx: ToolContext, nodes: list[str] | None = None, first: int | None = None,
                  last: int | None = None) -> dict[str, Any]:
    from diagagent.analysis.flows import timeline

    flows = _flows_or_note(ctx)
    if flows is None:
        return {"note": MISSING.format(part="flows", what="no iteration timeline from the network")}
    iterations = None
    if first is not None or last is not None:  # the model's numbers: the span is capped before anything is built
        lo = first if first is not None else max(0, (last or 0) - 19)
        hi = last if last is not None else lo + 19
        iterations = range(lo, min(hi, lo + MAX_TIMELINE_ITERATIONS - 1) + 1)
    return timeline(flows, nodes=(nodes or [])[:MAX_TIMELINE_NODES] or None,
                    iterations=iterations).model_dump(exclude_defaults=True)


def search_schemata(ctx: ToolContext, text: str, k: int = 5) -> dict[str, Any]:
    hits = ctx.analyses.search_schemata([line for line in text.splitlines() if line.strip()] or [text], k=min(k, 10))
    return {"schemata": [{"id": h.id, "title": h.failure_schema.title, "fault": h.fault,
                          "category": h.failure_schema.category, "score": h.score,
                          "root_cause": h.failure_schema.root_cause,
                          "discriminating_checks": h.failure_schema.discriminating_checks[:3],
                          "actions": [a.model_dump() for a in h.failure_schema.actions]} for h in hits]}


def request_probe(ctx: ToolContext, host: str, probe: str) -> dict[str, Any]:
    from diagagent.telemetry.live_probes import ProbeManifest

    if host not in ctx.bundle.job.hosts:
        return {"error": f"{host!r} is not a host of job {ctx.bundle.job.job_id}"}
    manifest = ProbeManifest.load(ctx.settings.content_dir("tools") / "probes.yaml")
    if probe not in manifest.probes:
        return {"error": f"unknown probe {probe!r}; known: {', '.join(manifest.probes)}"}
    return {"not_run": True, "ask_operator_to_run": f"diagagent probe {host} --probe {probe} --save {ctx.bundle.source}",
            "why": "probes run only when an operator runs them"}


def propose_action(ctx: ToolContext, kind: str, reason: str, nodes: list[str] | None = None,
                   from_step: int | None = None, to_commit: str | None = None,
                   evidence: list[str] | None = None) -> dict[str, Any]:
    from diagagent.actions import check

    proposal = ActionProposal(kind=kind, nodes=nodes or [], from_step=from_step, to_commit=to_commit, reason=reason,
                              evidence=[e for e in (evidence or []) if e in ctx.analyses.evidence])
    policy = check(proposal, ctx.bundle.job)
    proposal.warnings = policy.warnings + policy.violations
    if policy.ok:
        ctx.proposed.append(proposal)
    return {"status": "pending: an authorized operator must approve it" if policy.ok else "refused by policy",
            "violations": policy.violations, "warnings": policy.warnings}
