"""The one-line job header: which job, its status and size, how the agent answers, and who is at the keyboard.

Names come from job.yaml (untrusted), so the line is built as plain Text, never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from diagagent.telemetry.job import Job

STATUS_STYLE = {"failed": "bold red", "hung": "bold yellow", "slow": "bold yellow", "running": "bold green",
                "succeeded": "bold green"}


def header_text(job: Job, mode: str, user: str) -> Text:
    line = Text.assemble("job ", (job.job_id, "bold"))
    if job.name:
        line.append(f" {job.name}")
    line.append("  ")
    line.append(job.status.upper(), STATUS_STYLE.get(job.status, "bold"))
    line.append(f"  {len(job.nodes)} nodes  ")
    line.append("LLM agent" if mode == "llm" else "offline playbook", "italic")
    line.append(f"  you: {user}")
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


class JobHeader(Static):
    """The top line of the app."""

    def __init__(self, job: Job, mode: str, user: str) -> None:
        super().__init__(header_text(job, mode, user), id="job-header")
