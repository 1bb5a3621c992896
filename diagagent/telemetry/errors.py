"""Errors and read problems of the telemetry layer, each naming the file, the line and what was expected.

A `BundleError` stops reading (a job.yaml that cannot be used); a `ReadIssue` is recorded and reading goes on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

# data: a bad line skipped or mended, counted; truncated: a file ends or breaks early; budget: a read limit was
# reached; link: a symlink out of the bundle, not followed; job: job.yaml says something that does not add up
IssueKind = Literal["data", "truncated", "budget", "link", "job"]


class BundleError(Exception):
    """Input that cannot be used at all, e.g. a missing or malformed `job.yaml`."""

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.message = message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")


class ReadIssue(BaseModel):
    """A problem met while reading one file; the reader skipped past it and went on."""

    file: str
    line: int | None = None
    problem: str
    count: int = 1
    kind: IssueKind = "data"

    @property
    def lost(self) -> bool:
        """Whether data was left unread or a fact was doubted: worth a note in the diagnosis."""
        return self.kind != "data"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        times = f" ({self.count}x)" if self.count > 1 else ""
        return f"{where}: {self.problem}{times}"
