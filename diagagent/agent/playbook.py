"""The offline agent: drives the same tools in a fixed order and answers follow-up questions from the findings.

No model: each question is routed by what it asks (why, which nodes, timeline, what to do, why not node-012, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from diagagent.agent import tools
from diagagent.agent.context import ToolContext
from diagagent.diagnosis import Diagnosis, Evidence

if TYPE_CHECKING:
    from diagagent.actions import LedgerEntry

ToolCall = Callable[..., dict[str, Any]]
HOST_WORD = re.compile(r"[A-Za-z][\w.-]*\d[\w.-]*")

# What a question can ask, each answered in the order the question asks it (at most MAX_PARTS of them)
INTENTS: list[tuple[str, str]] = [
    ("node", r"why not|what about|is .* (ok|fine|healthy)|check|\bnode\b|\bhost\b"),
    ("why", r"\bwhy\b|root cause|what happened|what went wrong|\bcaused?\b"),
    ("actions", r"what (should|do|can) we do|next step|action|fix|evict|restart|roll ?back|approve"),
    ("nodes", r"which (node|host|machine)|where|\bnodes\b|\bhosts\b|machines"),
    ("timeline", r"timeline|iteration|when|slow|straggl|throughput|step time"),
    ("stacks", r"stack|hang|hung|stuck|py-?spy"),
    ("health", r"health|probe|gpu|xid|ecc|nvlink|infiniband|\bib\b|dmesg"),
    ("evidence", r"evidence|line|log|show|proof|cite"),
    ("schemata", r"schema|seen (this|it) before|known|similar|past"),
]
MAX_PARTS = 3

# (name, tool, args): the order the playbook investigates in; each call is shown to the user as it runs
INVESTIGATION: list[tuple[str, dict[str, Any]]] = [
    ("overview", {}), ("log_events", {"top": 10}), ("node_health", {"verdict": "faulty"}),
    ("stack_clusters", {}), ("flow_stragglers", {}), ("flow_silence", {}), ("draft_diagnosis", {}),
]


MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]<>#|~&])")
BACKTICKS = re.compile(r"`+")


def plain(text: object) -> str:
    """Untrusted text (telemetry, and what quotes it) for running Markdown: shown as written, so a template's
    `<*>` stays `<*>` (its asterisks make no emphasis, its brackets no link or tag)."""
    return MARKDOWN_ACTIVE.sub(r"\\\1", str(text)).replace("\n", " ")


def code(text: object) -> str:
    """Untrusted text as a Markdown code span, literal whatever backticks it holds (CommonMark's longer fence)."""
    text = str(text).replace("\n", " ")
    fence = "`" * (max((len(m) for m in BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _where(e: Evidence) -> str:
    return code(f"{e.file}:{e.lines}") if e.file and e.line else (code(e.file) if e.file else plain(e.host or ""))


def _evidence_lines(d: Diagnosis, n: int = 5, role: str | None = "cause") -> list[str]:
    out = []
    for e in [e for e in d.evidence if role is None or e.role == role][:n]:
        out.append(f"- **{e.id}** {_where(e)}: {code(e.text[:200])}" + (f" ({plain(e.why)})" if e.why else ""))
    return out


def _at(e: Evidence) -> str:
    host = f" on {plain(e.host)}" + (f" (rank {e.rank})" if e.rank is not None else "") if e.host else ""
    when = f" at {datetime.fromtimestamp(e.ts, tz=UTC):%H:%M:%S} UTC" if e.ts is not None else ""
    return host + when


def _secs(value: float | None) -> str:
    return f"{value:.2f} s" if isinstance(value, (int, float)) else "?"


def summary(d: Diagnosis, entries: Sequence[LedgerEntry | None] | None = None) -> str:
    """The diagnosis in Markdown; `entries`: each proposal's ledger entry now (None: not looked up)."""
    lines = [f"**{plain(d.root_cause)}**", ""]
    lines.append(f"Category **{d.category or 'unknown'}**, fault {code(d.fault or 'unknown')}, confidence "
                 f"{d.confidence:.0%}; stage {d.stage or '?'}, iteration {d.iteration if d.iteration is not None else '?'}.")
    if d.faulty_nodes:
        lines.append("Faulty: " + ", ".join(f"**{plain(n.host)}** ({n.score:.2f})" for n in d.faulty_nodes) + ".")
    ev = _evidence_lines(d)
    if ev:
        lines += ["", "Evidence:", *ev]
    if d.proposals:
        lines += ["", proposals_head(entries), *_proposal_lines(d, entries)]
    if d.notes:
        lines += ["", "Not checked / to check:", *[f"- {n}" for n in d.notes[:4]]]
    return "\n".join(lines)


def proposals_head(entries: Sequence[LedgerEntry | None] | None) -> str:
    """The line above the proposals: what the ledger says of them, or that it was not looked up / has none."""
    if entries is None:
        return "Proposed actions (their ledger state not looked up: `diagagent actions list`):"
    if not any(e is not None for e in entries):
        return ("Proposed actions, not recorded in the ledger, so nothing has run (`diagagent diagnose` records "
                "them as pending, for an authorized operator to approve):")
    return "Proposed actions, as the ledger has them now:"


def ledger_state(entry: LedgerEntry | None) -> str:
    """One proposal's ledger state in Markdown: pending (and how to approve it), or decided, by whom and why."""
    if entry is None:
        return "not recorded"
    state = f"**#{entry.id} {entry.state}**"
    if entry.state == "pending":
        return f"{state}, awaiting an authorized operator (`diagagent actions approve {entry.id}`)"
    if entry.decided_by:
        why = f": {plain(entry.decision_reason)}" if entry.decision_reason else ""
        return f"{state} by {plain(entry.decided_by)}{why}"
    return state


def _proposal_lines(d: Diagnosis, entries: Sequence[LedgerEntry | None] | None = None) -> list[str]:
    out = []
    for i, p in enumerate(d.proposals):
        target = {"evict": ", ".join(p.nodes), "restart": f"from step {p.from_step}",
                  "rollback": f"to commit {p.to_commit}"}.get(p.kind, "")
        warn = f" ({plain('; '.join(p.warnings))})" if p.warnings else ""
        state = f" [{ledger_state(entries[i] if i < len(entries) else None)}]" if entries is not None else ""
        out.append(f"- `{p.kind}` {plain(target)}: {plain(p.reason)}{warn}{state}")
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
        """Answer each thing the question asks, in the order it asks them; the summary when it asks none."""
        q = question.lower()
        d = self.ctx.draft()
        hosts = set(self.ctx.bundle.job.hosts)
        named = [w for w in HOST_WORD.findall(question) if w in hosts]
        asked: list[tuple[int, str]] = []
        for intent, pattern in INTENTS:
            if intent == "node" and not named:
                continue
            found = re.search(pattern, q)
            if found and intent not in {i for _, i in asked}:
                asked.append((found.start(), intent))
        if any(i == "node" for _, i in asked):  # "why not node-012", "what about node-012": not the general why
            asked = [(at, i) for at, i in asked if i not in ("why", "nodes")]
        if not asked:
            return summary(d)
        parts = [self._answer(intent, d, named) for _, intent in sorted(asked)[:MAX_PARTS]]
        return "\n\n".join(parts)

    def _answer(self, intent: str, d: Diagnosis, named: list[str]) -> str:
        match intent:
            case "node":
                return self._about_node(named[0], d)
            case "why":
                return self._why(d)
            case "actions":
                return self._actions(d)
            case "nodes":
                return self._nodes(d)
            case "timeline":
                return self._timeline(d)
            case "stacks":
                return self._stacks()
            case "health":
                return self._health()
            case "evidence":
                return "\n".join(["Evidence, strongest first:", *_evidence_lines(d, 10, None)])
            case _:
                return self._schemata(d)

    def _why(self, d: Diagnosis) -> str:
        """Why it failed, as the chain the evidence shows: what broke first, where it surfaced, what followed, why
        this node and this fault, and how sure (the summary has the rest)."""
        causes = [e for e in d.evidence if e.role == "cause"]
        if not causes:
            return f"**{plain(d.root_cause)}** No line in the telemetry points at a cause." + (
                f" To tell: {plain(d.check)}" if d.check else "")
        lines = [f"**{plain(d.root_cause)}** How the evidence shows it:"]
        timed = sorted((e for e in causes if e.ts is not None), key=lambda e: e.ts or 0.0)
        first = timed[0] if timed else causes[0]
        lines.append(f"- **First sign**{_at(first)}: {code(first.text[:200])} in {_where(first)}.")
        top = causes[0]
        if top is not first:
            lines.append(f"- **Then** it surfaced{_at(top)}: {code(top.text[:200])} in {_where(top)}"
                         + (f" ({plain(top.why)})." if top.why else "."))
        symptoms = [e for e in d.evidence if e.role == "symptom"]
        if symptoms:
            s = symptoms[0]
            lines.append(f"- **What followed** is the cascade, not the cause: {code(s.text[:160])} "
                         f"({plain(s.why)}).")
        if d.faulty_nodes:
            n = d.faulty_nodes[0]
            lines.append(f"- **Why {plain(n.host)}**: {plain(n.reason)}.")
        if d.schemata:
            m = d.schemata[0]
            lines.append(f"- **Why this fault**: it matches the known failure {code(m.schema_id)} "
                         f"({plain(m.title)}, score {m.score:.2f}).")
        runner_up = next((c for c in d.candidates if c.fault != d.fault), None)
        if runner_up is not None:
            lines.append(f"- **Also considered**: {code(runner_up.fault)} (score {runner_up.score:.2f}: "
                         f"{plain(runner_up.why)}).")
        lines.append(f"- **How sure**: {d.confidence:.0%}" + (f"; to settle it: {plain(d.check)}" if d.check else "")
                     + ".")
        return "\n".join(lines)

    def _about_node(self, host: str, d: Diagnosis) -> str:
        if host in d.faulty_hosts:
            n = next(n for n in d.faulty_nodes if n.host == host)
            return f"**{plain(host)} is named faulty** (score {n.score:.2f}): {plain(n.reason)}."
        health = self.call("node_health", {"node": host})
        logs = self.call("log_nodes", {"top": 50})
        rank = next((i for i, n in enumerate(logs.get("nodes", [])) if n["host"] == host), None)
        lines = [f"**{plain(host)} is not named faulty.**"]
        verdicts = health.get("nodes", [])
        if verdicts:
            v = verdicts[0]
            lines.append(f"- probes: **{v['verdict']}** ({plain(v['reason'])})")
        elif "note" not in health:
            lines.append("- probes: no probe output for it")
        if rank is not None:
            n = logs["nodes"][rank]
            lines.append(f"- logs: ranked #{rank + 1} of {logs['total']} by abnormality (score {n['score']:.2f}): "
                         + plain("; ".join(n["reasons"][:2])))
        else:
            lines.append("- logs: nothing in its logs stands out from its peers")
        if d.faulty_nodes:
            top = d.faulty_nodes[0]
            lines.append(f"- the fault points at **{plain(top.host)}** instead: {plain(top.reason)}")
        return "\n".join(lines)

    def _actions(self, d: Diagnosis) -> str:
        if not d.proposals:
            return "No action is proposed: " + (plain(d.notes[0]) if d.notes else "the evidence does not support one.")
        entries, note = self.ctx.ledger_entries(d.proposals)
        lines = [proposals_head(entries), *_proposal_lines(d, entries)]
        if note:
            lines.append(f"({plain(note)})")
        return "\n".join(lines)

    def _nodes(self, d: Diagnosis) -> str:
        if not d.faulty_nodes:
            return ("No node is named faulty: " + (f"{plain(d.root_cause)} " if d.root_cause else "")
                    + "This looks like a failure every rank hits, not a machine's.")
        lines = ["Faulty nodes, most suspect first:"]
        for n in d.faulty_nodes:
            lines.append(f"- **{plain(n.host)}** ({n.score:.2f}): {plain(n.reason)}"
                         + (f" [evidence {', '.join(n.evidence[:4])}]" if n.evidence else ""))
        return "\n".join(lines)

    def _timeline(self, d: Diagnosis) -> str:
        flows = self.call("flow_timeline", {})
        lines = [f"Stage **{d.stage or '?'}**, first abnormal iteration **{d.iteration if d.iteration is not None else '?'}**."]
        timed = sorted((e for e in d.evidence if e.role == "cause" and e.ts is not None), key=lambda e: e.ts or 0.0)
        if timed:
            lines.append(f"First sign{_at(timed[0])}: {code(timed[0].text[:160])} in {_where(timed[0])}.")
        if "note" in flows and not flows.get("count"):
            lines.append(f"Flows: {plain(flows['note'])}")
        else:
            lines.append(f"Flows: {flows.get('count', 0)} iterations, median {_secs(flows.get('p50_s'))}, "
                         f"p95 {_secs(flows.get('p95_s'))}.")
            slow = self.call("flow_stragglers", {})
            for s in (slow.get("stragglers") or [])[:3]:
                if s.get("flagged"):
                    lines.append(f"- straggler **{plain(s['host'])}**: {plain(s.get('evidence', ''))}")
        return "\n".join(lines)

    def _stacks(self) -> str:
        s = self.call("stack_clusters", {})
        if "note" in s:
            return plain(s["note"])
        lines = [f"{s['ranks']} ranks in {s['total_clusters']} stack clusters."]
        for c in s["clusters"]:
            lines.append(f"- {c['role']}: ranks {plain(c['ranks'])} on {plain(', '.join(c['hosts'][:4]))} in "
                         f"{code(c['top_frame'])}" + (f" ({plain(c['collective'])})" if c["collective"] else ""))
        if s.get("flight_recorder"):
            lines.append(f"\nFlight Recorder view: {plain(s['flight_recorder'])}")
        if s.get("eviction"):
            e = s["eviction"]
            lines.append(f"\nEviction set ({plain(e['group'])}, {e['machines']} machines): {plain(', '.join(e['hosts']))}. "
                         f"{plain(e['reasoning'])}")
        return "\n".join(lines)

    def _health(self) -> str:
        h = self.call("node_health", {})
        if "note" in h:
            return plain(h["note"])
        lines = [f"Probe verdicts: {plain(h['counts'])}."]
        for n in [n for n in h["nodes"] if n["verdict"] != "healthy"][:6]:
            lines.append(f"- **{plain(n['host'])}** {n['verdict']}: {plain(n['reason'])}")
            for s in n["signals"][:2]:
                lines.append(f"  - {s['evidence']} {code(s['where'])}: {code(s['text'][:160])}")
        return "\n".join(lines)

    def _schemata(self, d: Diagnosis) -> str:
        if not d.schemata:
            return "No known failure schema matches this evidence."
        return "\n".join(["Closest known failures:", *[f"- {code(s.schema_id)} {plain(s.title)} (score {s.score:.2f})"
                                                       for s in d.schemata]])


__all__ = ["INVESTIGATION", "Playbook", "ledger_state", "proposals_head", "summary", "tools"]
