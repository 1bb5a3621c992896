"""Errors and read problems of the telemetry layer, each naming the file, the line and what was expected.

A `BundleError` stops reading (a job.yaml that cannot be used); a `FileError` stops one file (an analyzer skips it
and goes on); a `ReadIssue` is recorded and reading goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from pydantic import BaseModel

# data: a bad line skipped or mended, counted; truncated: a file ends or breaks early; budget: a read limit was
# reached; link: a symlink out of the bundle, not followed; job: job.yaml says something that does not add up;
# inferred: the bundle was built from raw logs, and this says what was inferred (hosts, ranks) and how
IssueKind = Literal["data", "truncated", "budget", "link", "job", "inferred"]


class BundleError(Exception):
    """Input that cannot be used at all, e.g. a missing or malformed `job.yaml`."""

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.message = message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")


class FileError(BundleError):
    """One telemetry file (a stack dump, a probe output, a flow file) that cannot be used: the analyzer skips it,
    names it in the diagnosis's notes, and goes on with the other files."""


@contextmanager
def file_errors(file: str, expected: str) -> Iterator[None]:
    """Whatever a parser raises on hostile text becomes a `FileError` naming `file` and what was `expected`.
    MemoryError (and KeyboardInterrupt, not an Exception) pass through: they are the process's, not the file's."""
    try:
        yield
    except (FileError, MemoryError):
        raise
    except BundleError as exc:  # e.g. a path that leaves the bundle
        raise FileError(file, exc.message, exc.line) from exc
    except RecursionError as exc:
        raise FileError(file, f"nested too deeply to read; expected {expected}") from exc
    except Exception as exc:  # hostile input may break a parser anywhere: the file is skipped, not the analyzer
        raise FileError(file, f"not readable as {expected} ({type(exc).__name__}: {str(exc)[:200]})") from exc


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
        if self.kind == "inferred":
            return self.problem
        where = f"{self.file}:{self.line}" if self.line else self.file
        times = f" ({self.count}x)" if self.count > 1 else ""
        return f"{where}: {self.problem}{times}"

    @classmethod
    def of(cls, exc: BundleError, skipped: str = "file skipped") -> ReadIssue:
        """The issue a skipped file leaves behind: its file, line and what went wrong."""
        return cls(file=exc.file, line=exc.line, problem=f"{exc.message}; {skipped}")
