"""Slash commands typed in the chat (`/evidence`, `/nodes`, `/timeline`, `/actions`, `/help`) and the help text.

A command switches to its pane; anything else starting with "/" gets a short "unknown command" reply.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str
    pane: str | None  # the tab it opens; None: handled in the chat
    help: str


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("evidence", "evidence", "the cited evidence; select one to see the log lines around it"),
    SlashCommand("nodes", "nodes", "every node with its health verdict and the probe lines behind it"),
    SlashCommand("timeline", "timeline", "iteration times from the network flows, per node"),
    SlashCommand("actions", "actions", "proposed actions: approve or reject, after seeing what will run"),
    SlashCommand("help", None, "this help"),
)

# (key, what it does), as the footer shows them
KEYS: tuple[tuple[str, str], ...] = (
    ("F1", "help"), ("F2", "chat"), ("F3", "evidence"), ("F4", "nodes"), ("F5", "timeline"), ("F6", "actions"),
    ("a / r", "approve / reject the selected action (in Actions)"), ("Tab", "move between widgets"),
    ("Ctrl+Q", "quit"),
)


def parse_slash(text: str) -> tuple[SlashCommand | None, str] | None:
    """None for a question; else (the command, or None if unknown, and the word typed)."""
    text = text.strip()
    if not text.startswith("/"):
        return None
    word = text[1:].split(maxsplit=1)[0].lower() if len(text) > 1 else ""
    return next((c for c in SLASH_COMMANDS if c.name == word), None), word


def help_markdown() -> str:
    lines = [("**Ask anything about this incident**, for example *why did it fail?*, *which nodes?*, "
              "*what should we do?*, *why not node-012?*"), "", "Commands:", ""]
    lines += [f"- `/{c.name}`: {c.help}" for c in SLASH_COMMANDS]
    lines += ["", "Keys:", ""]
    lines += [f"- `{key}`: {what}" for key, what in KEYS]
    lines += ["", ("Actions run only after an authorized operator approves them; the confirmation shows "
                   "exactly what will run.")]
    return "\n".join(lines)


__all__ = ["KEYS", "SLASH_COMMANDS", "SlashCommand", "help_markdown", "parse_slash"]
