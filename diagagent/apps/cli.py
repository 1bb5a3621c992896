"""The `diagagent` command line (typer): one small module per command group, registered here explicitly.

Each imports only typer, rich and apps.common at the top, the rest inside its commands: `--help` stays fast.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from diagagent.apps.common import JSON_ERRORS, json_error

# Each module defines `register(app: typer.Typer) -> None`.
COMMAND_MODULES = [
    "diagagent.apps.cmd_show",
    "diagagent.apps.cmd_diagnose",
    "diagagent.apps.cmd_chat",
    "diagagent.apps.cmd_simulate",
    "diagagent.apps.cmd_actions",
    "diagagent.apps.cmd_eval",
    "diagagent.apps.cmd_stacks",
    "diagagent.apps.cmd_flows",
    "diagagent.apps.cmd_kb",
    "diagagent.apps.cmd_logs",
    "diagagent.apps.cmd_slack",
    "diagagent.apps.cmd_collect",
]


class JsonErrorsGroup(TyperGroup):
    """With `--json` on the command line, every error (usage, a command's own, an unexpected one) is printed as a
    JSON object on stdout with a non-zero exit; without it, errors are text as usual."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        token = JSON_ERRORS.set(True)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            json_error("aborted", 1)
            sys.exit(1)
        except Exception as exc:  # noqa: BLE001 - every error becomes the JSON object the caller parses
            usage = getattr(exc, "exit_code", None)
            if isinstance(usage, int) and hasattr(exc, "format_message"):  # click's (or typer's vendored click's)
                json_error(exc.format_message(), usage)
                sys.exit(usage)
            traceback.print_exc()  # a bug: its traceback on stderr
            json_error(f"internal error: {type(exc).__name__}: {exc}", 1)
            sys.exit(1)
        finally:
            JSON_ERRORS.reset(token)
        sys.exit(code if isinstance(code, int) else 0)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("diagagent")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from diagagent import __version__ as number
        typer.echo(f"diagagent {number}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="diagagent",
        cls=JsonErrorsGroup,
        help="Diagnose failed, hung and slow distributed training jobs from their telemetry.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # help in click's plain format: rendering it with rich imports rich and takes half of
        # `diagagent --help`'s time (benches/startup.py; the issue's target is 0.2 s)
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                     help="Print the version and exit."),
    ) -> None:
        """Diagnose failed, hung and slow distributed training jobs from their telemetry."""

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def main() -> None:
    build_app()()
