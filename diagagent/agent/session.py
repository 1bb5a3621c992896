"""A Session: one incident's conversation for the TUI and a Slack thread, with the LLM agent or the playbook.

It emits events (analyzer and tool calls, answers) so apps can show live progress, and falls back to the playbook
with a note when the model is unreachable, does not finish, spends its token budget or submits a diagnosis that
cites nothing valid, names hosts outside the job or contradicts decisive evidence. What goes to a non-loopback
model is redacted (placeholders mapped back for the operator and the tools). Proposals it makes are only pending.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from pydantic import BaseModel, Field

from diagagent.agent.budget import compact_json
from diagagent.agent.context import ToolContext
from diagagent.agent.manifest import ToolSpec, load_tool_specs
from diagagent.agent.playbook import Playbook, summary
from diagagent.agent.tools import diagnosis_brief
from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal, Diagnosis
from diagagent.diagnosis.analyses import ProgressSink
from diagagent.telemetry import Bundle
from diagagent.telemetry.redact import Redactor


class ToolCallRecord(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: str = ""  # compact JSON, as the model saw it


class Answer(BaseModel):
    question: str
    markdown: str
    mode: Literal["playbook", "llm"]
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)


class Usage(BaseModel):
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    budget_hit: bool = False  # a run stopped at DIAGAGENT_LLM_MAX_TOKENS
    submitted: bool = False  # the model submitted a diagnosis (valid or not)
    fallback: str | None = None  # why the playbook's diagnosis is shown instead of the model's

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


def _prompt(settings: Settings, name: str, **fields: Any) -> str:
    return (settings.content_dir("prompts") / f"{name}.md").read_text(encoding="utf-8").format(**fields)


class Session:
    def __init__(self, bundle: Bundle, settings: Settings | None = None, *, on_event: ProgressSink | None = None,
                 use_llm: bool | None = None) -> None:
        self.settings = settings or Settings.load()
        self.bundle = bundle
        self.on_event = on_event
        self.use_llm = bool(self.settings.llm_base_url) if use_llm is None else use_llm
        self.ctx = ToolContext(bundle, self.settings, on_progress=self._emit)
        self.specs: dict[str, ToolSpec] = {s.name: s for s in load_tool_specs(self.settings.content_dir("tools"))}
        self.diagnosis: Diagnosis | None = None
        self.answers: list[Answer] = []
        self.usage = Usage()
        # one mapping for the whole incident, so host-1 means the same node in every message
        self.redactor: Redactor | None = (Redactor.for_job(bundle.job) if self.use_llm and
                                          self.settings.redact_for(self.settings.llm_base_url) else None)
        self._calls: list[ToolCallRecord] = []
        self._messages: list[Any] = []  # the LLM conversation so far
        self._lock = threading.Lock()  # one question at a time (Slack threads may overlap)

    @property
    def mode(self) -> Literal["playbook", "llm"]:
        return "llm" if self.use_llm else "playbook"

    def _emit(self, event: dict[str, Any]) -> None:
        if event.get("type") == "tool_end":
            self._calls.append(ToolCallRecord(tool=event["tool"], args=event.get("args", {}),
                                              result=event.get("result", "")))
        if self.on_event is not None:
            self.on_event(event)

    def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one manifest tool for the playbook, reporting it like an LLM tool call."""
        spec = self.specs[name]
        self._emit({"type": "tool_start", "tool": name, "args": args})
        try:
            result = spec.resolve()(self.ctx, **args)
        except Exception as exc:  # noqa: BLE001 - a failing tool is reported, never fatal
            result = {"error": f"{type(exc).__name__}: {exc}"}
        self._emit({"type": "tool_end", "tool": name, "args": args, "result": compact_json(result)})
        return result

    # --- diagnosis ---------------------------------------------------------------------------------------

    def diagnose(self) -> Diagnosis:
        with self._lock:
            if self.diagnosis is None:
                self._calls = []
                self.diagnosis = self._diagnose_llm() if self.use_llm else Playbook(self.ctx, self.call_tool).investigate()
                self._emit({"type": "diagnosis", "diagnosis": self.diagnosis})
            return self.diagnosis

    def _diagnose_llm(self) -> Diagnosis:
        from langchain_core.messages import HumanMessage

        from diagagent.agent.llm import build_agent, chat_model, resolve_submission, submission_problems

        job = self.bundle.job
        prompt = _prompt(self.settings, "diagnose", job_id=job.job_id, job_name=job.name or "unnamed",
                         status=job.status, nodes=len(job.nodes), world_size=job.world_size,
                         present=", ".join(p for p in ("logs", "flows", "stacks", "probes") if self.bundle.has(p)) or "none",
                         missing=", ".join(self.bundle.missing) or "none")
        budget = self._budget()
        try:
            agent = build_agent(chat_model(self.settings), self._tools(), self._out(_prompt(self.settings, "system")),
                                self.settings.llm_max_steps, structured=True, budget=budget)
            result = agent.invoke({"messages": [HumanMessage(self._out(prompt))]},
                                  config={"recursion_limit": 8 * self.settings.llm_max_steps + 20})
        except Exception as exc:  # noqa: BLE001 - an unreachable or failing model must not stop the diagnosis
            return self._fallback(f"the LLM at {self.settings.llm_base_url} failed ({type(exc).__name__}: {exc})")
        calls = self._count(result["messages"])
        self._messages = list(result["messages"])
        submission = result.get("structured_response")
        if budget.hit:
            return self._fallback(self._budget_note(budget))
        if submission is None and calls >= self.settings.llm_max_steps:
            return self._fallback(f"the LLM did not submit a diagnosis within {self.settings.llm_max_steps} steps")
        if submission is None:
            return self._fallback(f"the LLM stopped after {calls} call(s) without submitting a diagnosis")
        self.usage.submitted = True
        try:
            if self.redactor is not None:  # the model wrote placeholders; the operator reads real names
                submission = type(submission).model_validate(self.redactor.restore_value(submission.model_dump()))
            problems = submission_problems(submission, self.ctx, self.ctx.draft())
            if problems:  # a weak model's answer never replaces a better-founded one
                return self._fallback("the LLM's submission was set aside: " + "; ".join(problems))
            diagnosis = resolve_submission(submission, self.ctx, self.ctx.draft())
        except Exception as exc:  # noqa: BLE001 - a submission we cannot use must not stop the diagnosis
            return self._fallback(f"the LLM's submission could not be used ({type(exc).__name__}: {exc})")
        return self._with_model_proposals(diagnosis)

    def _out(self, text: str) -> str:
        """Text on its way to the model: redacted when this session redacts."""
        return self.redactor.redact(text) if self.redactor is not None else text

    def _back(self, text: str) -> str:
        """Text from the model on its way to the operator: placeholders restored."""
        return self.redactor.restore(text) if self.redactor is not None else text

    def _tools(self) -> list[Any]:
        from diagagent.agent.llm import bind_tools

        return bind_tools(list(self.specs.values()), self.ctx, self._emit, self.redactor)

    def _budget(self) -> Any:
        from diagagent.agent.llm import TokenBudget

        return TokenBudget(self.settings.llm_max_tokens, self.usage.tokens)

    def _budget_note(self, budget: Any, before: str = "submitting a diagnosis") -> str:
        self.usage.budget_hit = True
        return (f"the LLM stopped at its token budget (DIAGAGENT_LLM_MAX_TOKENS={budget.limit}; "
                f"{self.usage.tokens} tokens used) before {before}")

    def _fallback(self, why: str) -> Diagnosis:
        self.usage.fallback = why
        draft = self.ctx.draft()
        return draft.model_copy(update={"notes": [f"{why}; the playbook's diagnosis is shown", *draft.notes],
                                        "llm_unavailable": why})

    def _with_model_proposals(self, diagnosis: Diagnosis) -> Diagnosis:
        """Add what the model proposed through the tool (already policy-checked) unless already proposed."""
        def key(p: ActionProposal) -> tuple:
            return p.kind, tuple(sorted(p.nodes)), p.from_step, p.to_commit

        have = {key(p) for p in diagnosis.proposals}
        extra = [p.model_copy(update={"reason": f"proposed by the model: {p.reason}"})
                 for p in self.ctx.proposed if key(p) not in have and p.kind != "none"]
        return diagnosis.model_copy(update={"proposals": diagnosis.proposals + extra})

    def _count(self, messages: list[Any]) -> int:
        """Add the model turns not counted yet to the usage; returns how many there were."""
        from langchain_core.messages import AIMessage

        calls = self.usage.llm_calls
        for m in messages:
            if isinstance(m, AIMessage) and m.response_metadata.get("counted") is None and m.response_metadata:
                m.response_metadata["counted"] = True
                meta = m.usage_metadata or {}
                self.usage.llm_calls += 1
                self.usage.tokens_in += int(meta.get("input_tokens", 0))
                self.usage.tokens_out += int(meta.get("output_tokens", 0))
        return self.usage.llm_calls - calls

    # --- conversation ------------------------------------------------------------------------------------

    def ask(self, question: str) -> Answer:
        """Answer a question about this incident (diagnosing first if needed)."""
        diagnosis = self.diagnose()
        with self._lock:
            self._calls = []
            if self.use_llm:
                text = self._ask_llm(question, diagnosis)
            else:
                text = Playbook(self.ctx, self.call_tool).answer(question)
            answer = Answer(question=question, markdown=text, mode=self.mode, tool_calls=list(self._calls))
            self.answers.append(answer)
            self._emit({"type": "answer", "answer": answer})
            return answer

    def _ask_llm(self, question: str, diagnosis: Diagnosis) -> str:
        from langchain_core.messages import AIMessage, HumanMessage

        from diagagent.agent.llm import build_agent, chat_model

        prompt = _prompt(self.settings, "followup", job_id=self.bundle.job.job_id,
                         diagnosis=compact_json(diagnosis_brief(diagnosis)), question=question)
        budget = self._budget()
        if budget.limit is not None and budget.spent >= budget.limit:  # spent on earlier turns: no call at all
            budget.hit = True
        else:
            try:
                agent = build_agent(chat_model(self.settings), self._tools(),
                                    self._out(_prompt(self.settings, "system")), self.settings.llm_max_steps,
                                    structured=False, budget=budget)
                result = agent.invoke({"messages": [*self._messages, HumanMessage(self._out(prompt))]},
                                      config={"recursion_limit": 8 * self.settings.llm_max_steps + 20})
            except Exception as exc:  # noqa: BLE001
                return (f"_The LLM failed ({type(exc).__name__}); answered by the playbook._\n\n"
                        + Playbook(self.ctx, self.call_tool).answer(question))
            self._count(result["messages"])
            self._messages = list(result["messages"])
        if budget.hit:
            note = self._budget_note(budget, "answering")
            return f"_{note[0].upper()}{note[1:]}; answered by the playbook._\n\n" + Playbook(
                self.ctx, self.call_tool).answer(question)
        last = next((m for m in reversed(result["messages"]) if isinstance(m, AIMessage) and m.content), None)
        if last is None:
            return ("_The LLM gave no answer within its step limit; answered by the playbook._\n\n"
                    + Playbook(self.ctx, self.call_tool).answer(question))
        return self._back(str(last.content))


def diagnose_with_llm(bundle: Bundle, settings: Settings) -> tuple[Diagnosis, dict[str, int]]:
    """The eval's LLM predictor: a diagnosis by the configured model, and what it cost."""
    session = Session(bundle, settings, use_llm=True)
    diagnosis = session.diagnose()
    return diagnosis, session.usage.model_dump()


__all__ = ["Answer", "Session", "ToolCallRecord", "Usage", "diagnose_with_llm", "summary"]
