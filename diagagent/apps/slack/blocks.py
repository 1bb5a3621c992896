"""Block Kit for the Slack bot: the diagnosis, a proposal with Approve / Reject buttons, answers and short replies.

Telemetry is untrusted: every piece of it goes out escaped (&, <, >) so a log line cannot ping @channel or make a link,
log lines and commands inside code so their * and _ stay literal; buttons carry only ledger ids.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Any

from diagagent.actions import ExecutionPlan, LedgerEntry
from diagagent.agent.session import Answer
from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence
from diagagent.telemetry.store import JobRef

Block = dict[str, Any]
APPROVE_ACTION = "approve"
REJECT_ACTION = "reject"
SECTION_LIMIT = 3000  # Block Kit: a section's text
HEADER_LIMIT = 150
TOP_NODES = 5
TOP_EVIDENCE = 5
TOP_SCHEMATA = 3
LOOKALIKE_ASTERISK = "\u2217"
SLACK_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
STATE_MARK = {"pending": ":hourglass:", "approved": ":white_check_mark:", "executed": ":white_check_mark:",
              "rejected": ":no_entry_sign:", "failed": ":x:"}


# --- text ----------------------------------------------------------------------------------------------------

def escape(text: str) -> str:
    """Untrusted text for mrkdwn: Slack's three control characters as entities (no mention, link or command)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def prose(text: str) -> str:
    """Untrusted text for running mrkdwn: escaped, and its asterisks cannot make bold (`<*>`, `*APPROVE*`)."""
    return escape(text).replace("*", LOOKALIKE_ASTERISK)


def code(text: str) -> str:
    """Untrusted text for inside `code` or ```code```: escaped, and a backtick cannot close the code."""
    return escape(text).replace("`", "\u02cb")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def who(user: str) -> str:
    """A decider for mrkdwn: a Slack user id as a mention, anything else (an OS user, `policy`) as text."""
    return f"<@{user}>" if SLACK_USER_ID.match(user) else escape(user)


def mrkdwn_from_markdown(markdown: str) -> str:
    """An answer's Markdown as Slack mrkdwn (escaped first: answers quote telemetry)."""
    markdown = markdown.replace("\\*", LOOKALIKE_ASTERISK)  # Markdown's escapes: the data's own characters
    markdown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
    text = re.sub(r"^(\s*)[-*] ", r"\1• ", escape(markdown), flags=re.MULTILINE)
    text = re.sub(r"(?<!\*)\*(?!\*)", LOOKALIKE_ASTERISK, text)  # a lone * is the answer's data, not emphasis
    text = re.sub(r"\*\*(.+?)\*\*", r"*\1*", text)
    return re.sub(r"^#{1,6}\s*(.+)$", r"*\1*", text, flags=re.MULTILINE)


# --- blocks --------------------------------------------------------------------------------------------------

def section(text: str, fields: Sequence[str] = ()) -> Block:
    block: Block = {"type": "section", "text": {"type": "mrkdwn", "text": clip(text or " ", SECTION_LIMIT)}}
    if fields:
        block["fields"] = [{"type": "mrkdwn", "text": clip(f, 2000)} for f in fields[:10]]
    return block


def context(texts: Sequence[str]) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(t, SECTION_LIMIT)} for t in texts[:10]]}


def header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, HEADER_LIMIT), "emoji": False}}


def job_label(ref: JobRef) -> str:
    """`job 42 (llama3-70b-pretrain)`, escaped for mrkdwn."""
    return prose(f"job {ref.job_id}" + (f" ({ref.name})" if ref.name else ""))


def _where(e: Evidence) -> str:
    place = f"{e.file}:{e.lines}" if e.file and e.line else (e.file or "")
    return " ".join(p for p in (place, f"({e.host})" if e.host else "") if p) or e.kind


def evidence_block(e: Evidence) -> Block:
    return section(f"`{code(e.id)}` _{e.role}_ · `{code(_where(e))}`\n```{code(clip(e.text, 600)) or ' '}```")


def diagnosis_blocks(d: Diagnosis, ref: JobRef, seconds: float | None = None) -> list[Block]:
    """Summary, faulty nodes, top evidence lines, matched schemata and notes (proposals follow as their own posts)."""
    blocks = [header(f"Job {d.job_id}" + (f" · {ref.name}" if ref.name else "") + f" · {d.status or ref.status}")]
    fields = [f"*Category*\n{escape(d.category or '?')}", f"*Fault*\n{escape(d.fault or '?')}",
              f"*Confidence*\n{d.confidence:.0%}", f"*Stage*\n{escape(d.stage or '?')}",
              f"*Iteration*\n{d.iteration if d.iteration is not None else '?'}"]
    blocks.append(section(f"*Root cause:* {prose(d.root_cause or 'not determined')}", fields))
    why = confidence_why(d)
    if why:
        blocks.append(section(why))
    if d.faulty_nodes:
        rows = [f"• `{code(n.host)}` {n.score:.2f}: {prose(clip(n.reason, 300))}" for n in d.faulty_nodes[:TOP_NODES]]
        blocks.append(section("*Faulty nodes*\n" + "\n".join(rows)))
    if d.evidence:
        blocks.append(section(f"*Top evidence* ({min(len(d.evidence), TOP_EVIDENCE)} of {len(d.evidence)})"))
        blocks += [evidence_block(e) for e in d.evidence[:TOP_EVIDENCE]]
    if d.schemata:
        best, *others = d.schemata[:TOP_SCHEMATA]
        text = f"*Matched schema:* `{code(best.schema_id)}` {prose(best.title)} (score {best.score:.2f})"
        if others:
            text += "\nalso: " + "; ".join(f"`{code(s.schema_id)}` ({s.score:.2f})" for s in others)
        blocks.append(section(text))
    if d.notes:
        blocks.append(context([f"_not checked:_ {prose(clip(n, 400))}" for n in d.notes[:3]]))
    took = f"diagnosed in {seconds:.1f} s · " if seconds is not None else ""
    footer = f"{took}{len(d.proposals)} proposed action(s) below, each in its ledger state · ask follow-ups in this thread"
    blocks.append(context([footer]))
    return blocks


def confidence_why(d: Diagnosis) -> str:
    """Why that confidence, in mrkdwn: its basis, what raised it, what held it down, the check that settles it."""
    w = d.confidence_why
    if w is None:
        return ""
    lines = [f"*Why {d.confidence:.0%}:* {prose(clip(w.basis, 400))}" if w.basis else f"*Why {d.confidence:.0%}:*"]
    lines += [f"• raised by: {prose(clip(r, 300))}" for r in w.raised[:4]]
    lines += [f"• held down by: {prose(clip(h, 300))}" for h in w.held_down[:4]]
    if w.check:
        lines.append(f"*To settle it:* {prose(clip(w.check, 400))}")
    return "\n".join(lines)


def diagnosis_text(d: Diagnosis) -> str:
    """The notification / fallback text of the diagnosis message."""
    nodes = ", ".join(d.faulty_hosts[:3])
    return prose(clip(f"Job {d.job_id}: {d.root_cause or 'root cause not determined'}"
                       + (f" (nodes: {nodes})" if nodes else ""), 300))


def target(p: ActionProposal) -> str:
    """What an action acts on, in a few words (raw: escape before mrkdwn)."""
    if p.kind == "evict":
        return ", ".join(p.nodes[:6]) + (f" (+{len(p.nodes) - 6} more)" if len(p.nodes) > 6 else "")
    if p.kind == "restart":
        return f"from step {p.from_step}" + (f" ({p.checkpoint_path})" if p.checkpoint_path else "")
    return f"to commit {p.to_commit}" if p.kind == "rollback" else ""


def _plan_text(execution: ExecutionPlan | None, problem: str | None) -> str:
    if execution is None:
        return f"*Cannot be run safely:* {prose(problem or 'no command renders for it')}"
    how = (f"runs with the {escape(execution.executor)} executor" if execution.runs
           else f"dry run: records these {escape(execution.renders)} commands, runs nothing")
    commands = "\n".join(shlex.join(argv) for argv in execution.commands) or "(nothing to run)"
    return f"*On approval* ({how}):\n```{code(clip(commands, 2500))}```"


def _buttons(entry: LedgerEntry, commands: str) -> Block:
    confirm = {"title": {"type": "plain_text", "text": clip(f"Approve action #{entry.id}?", 100)},
               "text": {"type": "plain_text", "text": clip(f"This runs: {commands}", 300)},
               "confirm": {"type": "plain_text", "text": "Approve"},
               "deny": {"type": "plain_text", "text": "Cancel"}}
    value = str(entry.id)
    return {"type": "actions", "block_id": f"proposal-{entry.id}", "elements": [
        {"type": "button", "action_id": APPROVE_ACTION, "value": value, "style": "primary",
         "text": {"type": "plain_text", "text": "Approve"}, "confirm": confirm},
        {"type": "button", "action_id": REJECT_ACTION, "value": value, "style": "danger",
         "text": {"type": "plain_text", "text": "Reject"}}]}


def decision_line(entry: LedgerEntry) -> str:
    mark = STATE_MARK.get(entry.state, "")
    line = f"{mark} *{entry.state}*"
    if entry.decided_by:
        line += f" · decided by {who(entry.decided_by)}"
    if entry.decision_reason:
        line += f": {prose(clip(entry.decision_reason, 300))}"
    return line


def proposal_blocks(entry: LedgerEntry, execution: ExecutionPlan | None, problem: str | None = None) -> list[Block]:
    """One proposed action: what, why and warnings; while pending, what approving runs and the buttons."""
    p = entry.proposal
    lines = [f"*Action #{entry.id}: {p.kind}* {prose(target(p))}", prose(clip(p.reason, 600))]
    lines += [f":warning: {prose(clip(w, 300))}" for w in dict.fromkeys(p.warnings + entry.policy_warnings)]
    lines += [f":no_entry: {prose(clip(v, 300))}" for v in entry.violations]
    if entry.state != "pending":
        return [section("\n".join(lines)), context([decision_line(entry)])]
    commands = "; ".join(shlex.join(argv) for argv in execution.commands) if execution else "nothing"
    return [section("\n".join(lines)), section(_plan_text(execution, problem)), _buttons(entry, commands)]


def proposal_text(entry: LedgerEntry) -> str:
    return prose(clip(f"Action #{entry.id} ({entry.state}): {entry.proposal.kind} {target(entry.proposal)}", 300))


def outcome_blocks(entry: LedgerEntry, user: str) -> list[Block]:
    """Posted in the thread after an approval: who, what, the outcome, and what ran (or would have)."""
    head = (f"{who(user)} approved action #{entry.id} ({entry.proposal.kind} {prose(target(entry.proposal))}): "
            f"{STATE_MARK.get(entry.state, '')} *{entry.state}*")
    blocks = [section(head)]
    if entry.output:
        blocks.append(section(f"```{code(clip(entry.output, 2800))}```"))
    return blocks


def answer_blocks(answer: Answer) -> list[Block]:
    """A follow-up answer in sections of at most 3000 characters, then how it was answered."""
    text = mrkdwn_from_markdown(answer.markdown) or "(no answer)"
    chunks = [text[i:i + SECTION_LIMIT - 100] for i in range(0, len(text), SECTION_LIMIT - 100)][:40]
    tools = ", ".join(dict.fromkeys(c.tool for c in answer.tool_calls))
    note = f"answered by the {answer.mode}" + (f" · tools: {escape(tools)}" if tools else "")
    return [section(c) for c in chunks] + [context([note])]


def known_jobs_text(refs: Sequence[JobRef], limit: int = 10) -> str:
    if not refs:
        return "The jobs folder holds no job bundles yet."
    shown = ", ".join(f"`{code(r.job_id)}`" + (f" ({prose(r.name)}, {escape(r.status)})" if r.name else
                                                 f" ({escape(r.status)})") for r in refs[:limit])
    more = f" and {len(refs) - limit} more" if len(refs) > limit else ""
    return f"Known jobs: {shown}{more}."


def unknown_job_text(asked: str, refs: Sequence[JobRef]) -> str:
    return f"I can't find job `{code(clip(asked, 80))}` in the jobs folder. {known_jobs_text(refs)}"


def which_job_text(refs: Sequence[JobRef]) -> str:
    return ("Which job? Name it by id or name, e.g. _why did job 42 die?_ or "
            f"_what happened to llama3-70b-pretrain?_ {known_jobs_text(refs)}")


__all__ = ["APPROVE_ACTION", "REJECT_ACTION", "Block", "answer_blocks", "clip", "code", "decision_line",
           "diagnosis_blocks", "diagnosis_text", "escape", "job_label", "known_jobs_text", "mrkdwn_from_markdown",
           "outcome_blocks", "proposal_blocks", "proposal_text", "prose", "section", "target", "unknown_job_text",
           "which_job_text"]
