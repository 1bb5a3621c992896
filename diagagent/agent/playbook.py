"""The offline agent: drives the same tools in a fixed order and answers follow-up questions from the findings.

No model: each question is routed by what it asks (why, which nodes, timeline, what to do, why not node-012, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from diagagent.agent import tools
from diagagent.agent.context import ToolContext
from diagagent.diagnosis import Diagnosis

ToolCall = Callable[..., dict[str, Any]]
HOST_WORD = re.compile(r"[A-Za-z][\w.-]*\d[\w.-]*")

# (name, tool, args): the order the playbook investigates in; each call is shown to the user as it runs
INVESTIGATION: list[tuple[str, dict[str, Any]]] = [
    ("overview", {}), ("log_events", {"top": 10}), ("node_health", {"verdict": "faulty"}),
    ("stack_clusters", {}), ("flow_stragglers", {}), ("flow_silence", {}), ("draft_diagnosis", {}),
]


def _evidence_lines(d: Diagnosis, n: int = 5, role: str | None = "cause") -> list[str]:
    out = []
    for e in [e for e in d.evidence if role is None or e.role == role][:n]:
        where = f"`{e.file}:{e.lines}`" if e.file and e.line else (f"`{e.file}`" if e.file else e.host or "")
        out.append(f"- **{e.id}** {where}: `{e.text[:200]}`" + (f" ({e.why})" if e.why else ""))
    return out


def _secs(value: float | None) -> str:
    return f"{value:.2f} s" if isinstance(value, (int, float)) else "?"


def summary(d: Diagnosis) -> str:
    lines = [f"**{d.root_cause}**", ""]
    lines.append(f"Category **{d.category or 'unknown'}**, fault `{d.fault or 'unknown'}`, confidence "
                 f"{d.confidence:.0%}; stage {d.stage or '?'}, iteration {d.iteration if d.iteration is not None else '?'}.")
    if d.faulty_nodes:
        lines.append("Faulty: " + ", ".join(f"**{n.host}** ({n.score:.2f})" for n in d.faulty_nodes) + ".")
    ev = _evidence_lines(d)
    if ev:
        lines += ["", "Evidence:", *ev]
    if d.proposals:
        lines += ["", "Proposed (pending an operator's approval):", *_proposal_lines(d)]
    if d.notes:
        lines += ["", "Not checked / to check:", *[f"- {n}" for n in d.notes[:4]]]
    return "\n".join(lines)


def _proposal_lines(d: Diagnosis) -> list[str]:
    out = []
    for p in d.proposals:
        target = {"evict": ", ".join(p.nodes), "restart": f"from step {p.from_step}",
                  "rollback": f"to commit {p.to_commit}"}.get(p.kind, "")
        warn = f" [{'; '.join(p.warnings)}]" if p.warnings else ""
        out.append(f"- `{p.kind}` {target}: {p.reason}{warn}")
    return out


class Playbook:
    """Answers questions about one incident with the tools and the deterministic diagnosis."""

    def __init__(self, ctx: ToolContext, call: Callable[[str, dict[str, Any]], dict[str, Any]]) -> None:
        self.ctx = ctx
        self.call = call  # runs a tool by name and reports the call (so apps can show it)

    def investigate(self) -> Diagnosis:
        for name, args in INVESTIGATION:
            self.call(name, args)
        return self.ctx.draft()

    def answer(self, question: str) -> str:
        q = question.lower()
        d = self.ctx.draft()
        hosts = set(self.ctx.bundle.job.hosts)
        named = [w for w in HOST_WORD.findall(question) if w in hosts]
        if named and re.search(r"why not|what about|is .* (ok|fine|healthy)|check|\bnode\b|\bhost\b", q):
            return self._about_node(named[0], d)
        if re.search(r"what (should|do|can) we do|next step|action|fix|evict|restart|roll ?back|approve", q):
            return self._actions(d)
        if re.search(r"which (node|host|machine)|where|\bnodes\b|\bhosts\b|machines", q):
            return self._nodes(d)
        if re.search(r"timeline|iteration|when|slow|straggl|throughput|step time", q):
            return self._timeline(d)
        if re.search(r"stack|hang|hung|stuck|py-?spy", q):
            return self._stacks()
        if re.search(r"health|probe|gpu|xid|ecc|nvlink|infiniband|\bib\b|dmesg", q):
            return self._health()
        if re.search(r"evidence|line|log|show|proof|cite", q):
            return "\n".join(["Evidence, strongest first:", *_evidence_lines(d, 10, None)])
        if re.search(r"schema|seen (this|it) before|known|similar|past", q):
            return self._schemata(d)
        return summary(d)

    def _about_node(self, host: str, d: Diagnosis) -> str:
        if host in d.faulty_hosts:
            n = next(n for n in d.faulty_nodes if n.host == host)
            return f"**{host} is named faulty** (score {n.score:.2f}): {n.reason}."
        health = self.call("node_health", {"node": host})
        logs = self.call("log_nodes", {"top": 50})
        rank = next((i for i, n in enumerate(logs.get("nodes", [])) if n["host"] == host), None)
        lines = [f"**{host} is not named faulty.**"]
        verdicts = health.get("nodes", [])
        if verdicts:
            v = verdicts[0]
            lines.append(f"- probes: **{v['verdict']}** ({v['reason']})")
        elif "note" not in health:
            lines.append("- probes: no probe output for it")
        if rank is not None:
            n = logs["nodes"][rank]
            lines.append(f"- logs: ranked #{rank + 1} of {logs['total']} by abnormality (score {n['score']:.2f}): "
                         + "; ".join(n["reasons"][:2]))
        else:
            lines.append("- logs: nothing in its logs stands out from its peers")
        if d.faulty_nodes:
            top = d.faulty_nodes[0]
            lines.append(f"- the fault points at **{top.host}** instead: {top.reason}")
        return "\n".join(lines)

    def _actions(self, d: Diagnosis) -> str:
        if not d.proposals:
            return "No action is proposed: " + (d.notes[0] if d.notes else "the evidence does not support one.")
        head = ("Proposed actions, each pending an authorized operator's approval "
                "(`diagagent actions list`, then `approve ID`):")
        return "\n".join([head, *_proposal_lines(d)])

    def _nodes(self, d: Diagnosis) -> str:
        if not d.faulty_nodes:
            return ("No node is named faulty: " + (f"{d.root_cause} " if d.root_cause else "")
                    + "This looks like a failure every rank hits, not a machine's.")
        lines = ["Faulty nodes, most suspect first:"]
        for n in d.faulty_nodes:
            lines.append(f"- **{n.host}** ({n.score:.2f}): {n.reason}"
                         + (f" [evidence {', '.join(n.evidence[:4])}]" if n.evidence else ""))
        return "\n".join(lines)

    def _timeline(self, d: Diagnosis) -> str:
        flows = self.call("flow_timeline", {})
        lines = [f"Stage **{d.stage or '?'}**, first abnormal iteration **{d.iteration if d.iteration is not None else '?'}**."]
        if "note" in flows and not flows.get("count"):
            lines.append(f"Flows: {flows['note']}")
        else:
            lines.append(f"Flows: {flows.get('count', 0)} iterations, median {_secs(flows.get('p50_s'))}, "
                         f"p95 {_secs(flows.get('p95_s'))}.")
            slow = self.call("flow_stragglers", {})
            for s in (slow.get("stragglers") or [])[:3]:
                if s.get("flagged"):
                    lines.append(f"- straggler **{s['host']}**: {s.get('evidence', '')}")
        return "\n".join(lines)

    def _stacks(self) -> str:
        s = self.call("stack_clusters", {})
        if "note" in s:
            return s["note"]
        lines = [f"{s['ranks']} ranks in {s['total_clusters']} stack clusters."]
        for c in s["clusters"]:
            lines.append(f"- {c['role']}: ranks {c['ranks']} on {', '.join(c['hosts'][:4])} in `{c['top_frame']}`"
                         + (f" ({c['collective']})" if c["collective"] else ""))
        if s.get("flight_recorder"):
            lines.append(f"\nFlight Recorder view: {s['flight_recorder']}")
        if s.get("eviction"):
            e = s["eviction"]
            lines.append(f"\nEviction set ({e['group']}, {e['machines']} machines): {', '.join(e['hosts'])}. {e['reasoning']}")
        return "\n".join(lines)

    def _health(self) -> str:
        h = self.call("node_health", {})
        if "note" in h:
            return h["note"]
        lines = [f"Probe verdicts: {h['counts']}."]
        for n in [n for n in h["nodes"] if n["verdict"] != "healthy"][:6]:
            lines.append(f"- **{n['host']}** {n['verdict']}: {n['reason']}")
            for s in n["signals"][:2]:
                lines.append(f"  - {s['evidence']} `{s['where']}`: `{s['text'][:160]}`")
        return "\n".join(lines)

    def _schemata(self, d: Diagnosis) -> str:
        if not d.schemata:
            return "No known failure schema matches this evidence."
        return "\n".join(["Closest known failures:", *[f"- `{s.schema_id}` {s.title} (score {s.score:.2f})"
                                                       for s in d.schemata]])


__all__ = ["INVESTIGATION", "Playbook", "summary", "tools"]
