"""What every CLI command shares: the console, the settings, and opening a PATH-or-JOB_ID with a clear error.

Kept tiny so that `diagagent --help` imports nothing heavy: pydantic, the settings and telemetry load when used.
"""

from __future__ import annotations

import json
import os
import pwd
import sys
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from pydantic import BaseModel

    from diagagent.actions import Actor
    from diagagent.config import Settings
    from diagagent.telemetry import Bundle


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


# set by the command line while it runs with `--json`: errors are then a JSON object on stdout
JSON_ERRORS: ContextVar[bool] = ContextVar("diagagent_json_errors", default=False)


def json_error(message: str, code: int) -> None:
    """An error as the JSON object a `--json` caller parses: `{"error": "...", "exit_code": 2}` on stdout."""
    sys.stdout.write(json.dumps({"error": message, "exit_code": code}, indent=2) + "\n")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print the message (plain text: it may quote telemetry; a JSON object under `--json`) and exit with `code`."""
    if JSON_ERRORS.get():
        json_error(message, code)
    else:
        console(stderr=True).print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(code)


def os_user() -> str:
    """The user this process runs as, from the password database: never LOGNAME or USER, which anyone can set."""
    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # a uid with no passwd entry (some containers)
        return f"uid:{uid}"


def operator(as_user: str | None) -> Actor:
    """Who is acting: the OS user, or with `--as USER` the OS user acting as USER (the Ledger lets only an operator
    in DIAGAGENT_ADMINS do that, and audits it as "X acting as USER")."""
    from diagagent.actions import Actor

    me = os_user()
    return Actor(as_user, via=me) if as_user and as_user.strip() else Actor(me)


def settings() -> Settings:
    from diagagent.config import Settings

    try:
        return Settings.load()
    except ValueError as exc:
        fail(f"bad configuration: {exc}")


TARGETS_HELP = ("A bundle (directory or .tar.gz) or a job id / name (the jobs dir, or the job source); or raw logs, no "
                "job.yaml needed: log files or a glob, a directory of logs, a .tar.gz / .zip of them, or - for standard "
                "input.")
SAVE_HELP = "Write the bundle built from raw logs (or a copy of the bundle) into this new folder, to re-run or share."


STATUS_HELP = "How the job ended, for raw logs (which do not say it): failed (the default), hung or slow."


def open_bundle(target: str | Sequence[str], cfg: Settings | None = None, save: Path | None = None,
                status: str | None = None) -> Bundle:
    """A bundle (dir or tarball), a JOB_ID/name from the job source (the jobs dir, or with
    DIAGAGENT_JOB_SOURCE=slurm|k8s collected on demand), or raw logs (files, a glob, a directory, an archive, `-`
    for stdin) built into one; exits with a clear message if none of these."""
    from diagagent.telemetry import BundleError, UnknownJob
    from diagagent.telemetry.collect import CollectError
    from diagagent.telemetry.rawlogs import open_inputs

    cfg = cfg or settings()
    targets = [target] if isinstance(target, str) else list(target)
    if status is not None and status not in ("failed", "hung", "slow"):
        fail(f"--status must be failed, hung or slow; got {status!r}")
    if "-" in targets and sys.stdin is not None and sys.stdin.isatty():
        fail("- reads logs from standard input, but nothing is piped in (e.g. `cat slurm-4242.out | diagagent "
             "diagnose -`, or `kubectl logs --prefix job/NAME | diagagent diagnose -`)")
    try:
        source = cfg.jobs() if cfg.job_source != "dir" else None
        return open_inputs(targets, cfg.jobs_dir, cfg.limits, save=save,
                           stdin=getattr(sys.stdin, "buffer", None), status=status, source=source)
    except (BundleError, UnknownJob, CollectError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{getattr(exc, 'filename', None) or ' '.join(targets)}: {exc.strerror or exc}")


def fitted(out: Console, build: Callable[[frozenset[str]], Table], optional: Sequence[str]) -> Table:
    """`build(dropped)`'s table with as many of the optional columns as fit `out`'s width, dropped in the order
    given, so that what remains wraps between words instead of being cut inside them."""
    dropped: set[str] = set()
    table = build(frozenset())
    for name in optional:
        if Measurement.get(out, out.options.update_width(100_000), table).maximum <= out.width:
            break
        dropped.add(name)
        table = build(frozenset(dropped))
    return table


def print_json(data: BaseModel | dict | list) -> None:
    from pydantic import BaseModel

    if isinstance(data, BaseModel):
        sys.stdout.write(data.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
