"""Errors and read problems of the telemetry layer, each naming the file, the line and what was expected.

A `BundleError` stops reading (a job.yaml that cannot be used); a `ReadIssue` is recorded and reading goes on.
"""

from __future__ import annotations

from pydantic import BaseModel


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

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        times = f" ({self.count}x)" if self.count > 1 else ""
        return f"{where}: {self.problem}{times}"
