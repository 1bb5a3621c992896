"""The chat pane: questions, answers in Markdown, and each answer's tool calls as collapsibles.

Answers can quote telemetry: Markdown shows it literally, links are not opened, and tool output is plain Text.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.suggester import SuggestFromList
from textual.widgets import Collapsible, Input, LoadingIndicator, Markdown, Static

from diagagent.agent.session import ToolCallRecord
from diagagent.apps.tui.commands import SLASH_COMMANDS

MAX_RESULT_CHARS = 4000  # of one tool result shown under an answer
WELCOME = ("Ask about this incident: *why did it fail?*, *which nodes?*, *what should we do?* "
           "Type `/help` for commands.")


def pretty_result(result: str) -> str:
    """A tool's compact JSON, indented for reading (left as is when it is not JSON), cut to a screenful or two."""
    try:
        shown = json.dumps(json.loads(result), indent=1, ensure_ascii=False)
    except ValueError:
        shown = result
    return shown if len(shown) <= MAX_RESULT_CHARS else shown[:MAX_RESULT_CHARS] + "\n… (cut)"


def call_title(call: ToolCallRecord) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.args.items())
    return escape(f"tool {call.tool}({args})")


class ToolCallView(Collapsible):
    """One tool call: its name and arguments; expand it for the result."""

    def __init__(self, call: ToolCallRecord) -> None:
        super().__init__(Static(Text(pretty_result(call.result)), classes="tool-result"), title=call_title(call),
                         collapsed=True, classes="tool-call")
        self.call = call


class UserMessage(Static):
    def __init__(self, question: str) -> None:
        super().__init__(Text.assemble(("› ", "bold"), question), classes="user-message")
        self.question = question


class AnswerView(Vertical):
    """An answer: a spinner until it arrives, then its Markdown and its tool calls."""

    def __init__(self, label: str) -> None:
        super().__init__(classes="answer")
        self.label = label
        self.markdown = ""

    def compose(self) -> ComposeResult:
        yield Static(Text(self.label, style="bold"), classes="answer-label")
        yield LoadingIndicator()

    async def show(self, markdown: str, calls: list[ToolCallRecord]) -> None:
        self.markdown = markdown
        await self.query(LoadingIndicator).remove()
        await self.mount_all([Markdown(markdown, open_links=False), *(ToolCallView(c) for c in calls)])

    async def show_error(self, message: str) -> None:
        await self.query(LoadingIndicator).remove()
        await self.mount(Static(Text(message, style="bold red"), classes="answer-error"))


class ChatPane(Vertical):
    """The transcript and the prompt; the app answers what is submitted."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="transcript"):
            yield Markdown(WELCOME, open_links=False, classes="welcome")
        yield Input(placeholder="Ask about this incident, or /help", id="prompt", compact=True,
                    suggester=SuggestFromList([f"/{c.name}" for c in SLASH_COMMANDS], case_sensitive=False))

    async def add(self, *widgets: Static | Vertical | Markdown) -> None:
        transcript = self.query_one("#transcript", VerticalScroll)
        await transcript.mount_all(widgets)
        transcript.scroll_end(animate=False)

    def scroll_to_end(self) -> None:
        self.query_one("#transcript", VerticalScroll).scroll_end(animate=False)


__all__ = ["AnswerView", "ChatPane", "ToolCallView", "UserMessage", "pretty_result"]
