"""The LLM agent: any OpenAI-compatible endpoint through langchain-openai, driving the manifest tools.

The model reads tool results as data (redacted when a Redactor is given, its arguments restored before a tool runs)
and ends with a `DiagnosisSubmission` citing the evidence ids the tools issued; `resolve_submission` drops the rest.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from diagagent.agent.budget import compact_json
from diagagent.agent.manifest import ToolSpec
from diagagent.config import Settings
from diagagent.diagnosis import Diagnosis, NodeScore
from diagagent.diagnosis.analyses import ProgressSink
from diagagent.telemetry.truth import Category, Stage

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

    from diagagent.agent.context import ToolContext
    from diagagent.telemetry.redact import Redactor



class NodeClaim(BaseModel):
    host: str
    score: float = Field(ge=0, le=1)
    reason: str = ""
    evidence: list[str] = Field(default_factory=list, description="evidence ids from tool results")


class DiagnosisSubmission(BaseModel):
    """Submit the final diagnosis. Cite only evidence ids (e1, e2, ...) that tool results showed you."""

    category: Category | None = Field(description="hardware|network|infrastructure|framework|user_code|data")
    fault: str | None = Field(None, description="fault id, e.g. gpu_ecc_uncorrectable (from a matched schema)")
    root_cause: str = Field(description="one sentence: what broke, where")
    confidence: float = Field(ge=0, le=1)
    faulty_nodes: list[NodeClaim] = Field(default_factory=list, description="most suspect first")
    stage: Stage | None = None
    iteration: int | None = None
    evidence: list[str] = Field(default_factory=list, description="evidence ids, strongest first")
    notes: list[str] = Field(default_factory=list, description="what could not be checked, and how to check it")


def chat_model(settings: Settings) -> BaseChatModel:
    """The configured OpenAI-compatible chat model (no network until it is called)."""
    from langchain_openai import ChatOpenAI

    cap = settings.llm_max_output_tokens  # sent as max_tokens: llama.cpp's server reads no max_completion_tokens
    cls = ChatOpenAI if settings.llm_server == "openai" else _llama_cpp_python(ChatOpenAI)
    return cls(model=settings.llm_model, base_url=settings.llm_base_url, api_key=settings.api_key() or "not-needed",
               timeout=settings.llm_timeout_s, max_retries=1, temperature=0,
               extra_body={"max_tokens": cap} if cap else None)


def _llama_cpp_python(base: type) -> type:
    """`base` speaking llama-cpp-python's dialect: tool_choice=auto where the agent would force a tool call (the
    structured submission makes langchain send `required`, which it answers with a 500), and "" rather than null as
    the content of a message that only calls tools (which its request schema rejects)."""
    class LlamaCppPython(base):  # type: ignore[misc, valid-type]
        def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
            if tool_choice in ("any", "required", True):
                tool_choice = "auto"
            return super().bind_tools(tools, tool_choice=tool_choice, **kwargs)

        def _get_request_payload(self, *args: Any, **kwargs: Any) -> dict:
            payload = super()._get_request_payload(*args, **kwargs)
            for message in payload.get("messages", []):
                if message.get("content") is None:
                    message["content"] = ""
            return payload

    return LlamaCppPython


def bind_tools(specs: list[ToolSpec], ctx: ToolContext, sink: ProgressSink | None = None,
               redactor: Redactor | None = None) -> list[BaseTool]:
    """langchain tools over the manifest specs, each returning compact JSON and reporting its call to `sink`.

    With a `redactor`, the model's arguments are restored to real values before the tool runs and the result the
    model reads is redacted; `sink` (what the operator sees) gets the real arguments and result."""
    from langchain_core.tools import StructuredTool

    def make(spec: ToolSpec) -> BaseTool:
        func = spec.resolve()

        def run(**kwargs: Any) -> str:
            args = {k: v for k, v in kwargs.items() if v is not None}
            if redactor is not None:
                args = redactor.restore_value(args)
            if sink:
                sink({"type": "tool_start", "tool": spec.name, "args": args})
            try:
                result = func(ctx, **args)
            except Exception as exc:  # a tool failing is reported to the model, not fatal  # noqa: BLE001
                result = {"error": f"{type(exc).__name__}: {exc}"}
            text = compact_json(result)
            if sink:
                sink({"type": "tool_end", "tool": spec.name, "args": args, "result": text})
            return redactor.redact(text) if redactor is not None else text

        return StructuredTool.from_function(func=run, name=spec.name, description=spec.description,
                                            args_schema=spec.args_model())

    return [make(s) for s in specs]


def _repeat_guard() -> Any:
    """Middleware: a tool called again with the same arguments gets a nudge instead of a re-run (loop guard)."""
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage

    seen: Counter[str] = Counter()

    @wrap_tool_call
    def repeat_guard(request: Any, handler: Any) -> Any:
        call = request.tool_call
        key = call["name"] + json.dumps(call.get("args", {}), sort_keys=True, default=str)
        seen[key] += 1
        if seen[key] > 1:
            return ToolMessage(content=f"You already called {call['name']} with these arguments; the result is "
                                       "above. Use it, change the arguments, or submit the diagnosis.",
                               tool_call_id=call["id"], name=call["name"])
        return handler(request)

    return repeat_guard


def _malformed_guard() -> Any:
    """Middleware: a tool call whose arguments are not valid JSON gets an error the model can act on, instead of
    silently ending the run (langchain files such calls under `invalid_tool_calls`, which no tool answers)."""
    from langchain.agents.middleware import after_model
    from langchain_core.messages import AIMessage, ToolMessage

    @after_model(can_jump_to=["model"])
    def malformed_guard(state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1] if state["messages"] else None
        if not isinstance(last, AIMessage) or not last.invalid_tool_calls:
            return None
        replies = [ToolMessage(content=f"Your call to {c.get('name') or 'a tool'} could not be read: its arguments are "
                                       f"not valid JSON ({c.get('error') or 'parse error'}). Call it again with valid "
                                       "JSON arguments, or submit the diagnosis.",
                               tool_call_id=c.get("id") or "", name=c.get("name") or "unknown", status="error")
                   for c in last.invalid_tool_calls]
        return {"messages": replies, **({} if last.tool_calls else {"jump_to": "model"})}

    return malformed_guard


class TokenBudget:
    """Stops a run before the model call that would start past `limit` tokens (in + out) for the incident.

    `spent_before` is what earlier runs of the same incident used; messages they counted carry `counted` in their
    response metadata, so only this run's model turns are added. `hit` says whether it stopped the run."""

    NOTICE = "Stopped: the token budget for this incident is used up."

    def __init__(self, limit: int | None, spent_before: int = 0) -> None:
        self.limit = limit
        self.spent_before = spent_before
        self.spent = spent_before
        self.hit = False

    def middleware(self) -> Any:
        from langchain.agents.middleware import before_model
        from langchain_core.messages import AIMessage

        @before_model(can_jump_to=["end"])
        def token_budget(state: Any, runtime: Any) -> dict[str, Any] | None:
            fresh = [m for m in state["messages"]
                     if isinstance(m, AIMessage) and not m.response_metadata.get("counted")]
            self.spent = self.spent_before + sum(int((m.usage_metadata or {}).get("total_tokens", 0))
                                                 for m in fresh)
            if self.limit is not None and self.spent >= self.limit:
                self.hit = True
                return {"jump_to": "end", "messages": [AIMessage(content=self.NOTICE)]}
            return None

        return token_budget


def build_agent(model: BaseChatModel, tools: list[BaseTool], system_prompt: str, max_steps: int,
                structured: bool, budget: TokenBudget | None = None) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelCallLimitMiddleware
    from langchain.agents.structured_output import ToolStrategy

    middleware = [ModelCallLimitMiddleware(run_limit=max_steps, exit_behavior="end"), _repeat_guard(),
                  _malformed_guard()]
    if budget is not None:
        middleware.insert(0, budget.middleware())
    return create_agent(model, tools, system_prompt=system_prompt, middleware=middleware,
                        response_format=ToolStrategy(DiagnosisSubmission) if structured else None)


def submission_problems(sub: DiagnosisSubmission, ctx: ToolContext, draft: Diagnosis) -> list[str]:
    """Why the model's submission cannot stand in for the playbook's answer: it cites no evidence id a tool showed,
    names hosts outside this job, or contradicts decisive evidence (a line that proves the draft's fault, or the
    node it is on). Empty when it may stand."""
    problems = []
    cited = sub.evidence + [e for claim in sub.faulty_nodes for e in claim.evidence]
    if not any(e in ctx.analyses.evidence for e in cited):
        problems.append("it cites no evidence id that a tool showed" +
                        (f" ({', '.join(map(repr, cited[:5]))})" if cited else " (it cites none)"))
    hosts = set(ctx.bundle.job.hosts)
    outside = list(dict.fromkeys(c.host for c in sub.faulty_nodes if c.host not in hosts))
    if outside:
        problems.append(f"it names {', '.join(map(repr, outside[:5]))}, not a host of this job")
    why = draft.confidence_why
    if draft.fault and why is not None and why.tier == "decisive":
        proof = next((e for e in draft.evidence if e.role == "cause"), None)
        where = f" ({proof.id}, {proof.file}:{proof.line})" if proof and proof.file else ""
        if sub.fault != draft.fault or (sub.category and sub.category != draft.category):
            problems.append(f"it says {sub.fault or 'no fault'} ({sub.category or 'no category'}), but a line{where} "
                            f"proves {draft.fault} ({draft.category})")
        named = [c.host for c in sub.faulty_nodes if c.host in hosts]
        if named and draft.faulty_hosts and draft.faulty_hosts[0] not in named:
            problems.append(f"it blames {', '.join(named[:5])}, but the decisive line{where} is on "
                            f"{draft.faulty_hosts[0]}")
    return problems


def resolve_submission(sub: DiagnosisSubmission, ctx: ToolContext, draft: Diagnosis) -> Diagnosis:
    """The model's submission as a Diagnosis: only evidence ids the tools issued and hosts of this job survive."""
    notes = list(sub.notes)
    evidence = []
    for eid in sub.evidence:
        ev = ctx.analyses.evidence.get(eid)
        if ev is None:
            notes.append(f"the model cited evidence id {eid!r}, which no tool showed; dropped")
        elif ev not in evidence:
            evidence.append(ev)
    hosts = set(ctx.bundle.job.hosts)
    nodes = []
    for claim in sub.faulty_nodes:
        if claim.host not in hosts:
            notes.append(f"the model named host {claim.host!r}, which is not in this job; dropped")
            continue
        nodes.append(NodeScore(host=claim.host, score=claim.score, reason=claim.reason,
                               evidence=[e for e in claim.evidence if e in ctx.analyses.evidence]))
    if not evidence:  # a diagnosis always shows its evidence: fall back to the draft's
        evidence = draft.evidence
        notes.append("the model cited no valid evidence; the playbook's evidence is shown")
    diagnosis = draft.model_copy(update={
        "category": sub.category, "fault": sub.fault, "root_cause": sub.root_cause,
        "confidence": sub.confidence, "faulty_nodes": nodes or draft.faulty_nodes, "stage": sub.stage,
        "iteration": sub.iteration, "evidence": evidence, "notes": notes + draft.notes, "proposals": []})
    diagnosis.proposals = ctx.analyses.proposals(diagnosis, ctx.analyses.fault_schemata.get(sub.fault or ""))
    return diagnosis
