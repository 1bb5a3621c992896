"""The `diagagent` command line (typer): one small module per command group, registered here explicitly.

Heavy imports (chromadb, langchain, textual) happen inside the commands, so `--help` stays fast.
"""

from __future__ import annotations

import importlib

import typer

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
]


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="diagagent",
        help="Diagnose failed, hung and slow distributed training jobs from their telemetry.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root() -> None:
        """Diagnose failed, hung and slow distributed training jobs from their telemetry."""

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def main() -> None:
    build_app()()
