"""What every CLI command shares: the console, the settings, and opening a PATH-or-JOB_ID with a clear error.

Kept tiny so that `diagagent --help` imports nothing heavy.
"""

from __future__ import annotations

import getpass
import json
import sys
from typing import NoReturn

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.text import Text

from diagagent.config import Settings
from diagagent.telemetry import Bundle, BundleError, UnknownJob, open_target


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print the message (plain text: it may quote telemetry) and exit with `code`."""
    console(stderr=True).print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(code)


def operator(as_user: str | None) -> str:
    """Who is acting: `--as USER`, else the OS user. Approvals are checked against the configured approvers."""
    if as_user:
        return as_user.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        fail("cannot tell who you are: pass --as USER")


def settings() -> Settings:
    try:
        return Settings.load()
    except ValueError as exc:
        fail(f"bad configuration: {exc}")


def open_bundle(target: str, cfg: Settings | None = None) -> Bundle:
    """PATH (a bundle dir or tarball) or a JOB_ID/name under the jobs dir; exits with a clear message if neither."""
    cfg = cfg or settings()
    try:
        return open_target(target, cfg.jobs_dir, cfg.limits)
    except (BundleError, UnknownJob) as exc:
        fail(str(exc))


def print_json(data: BaseModel | dict | list) -> None:
    if isinstance(data, BaseModel):
        sys.stdout.write(data.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
