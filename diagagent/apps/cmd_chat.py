"""`diagagent chat PATH|JOB_ID [--as USER] [--llm]`: the TUI on one incident (diagnosis, chat, evidence, actions).

Who approves is the OS user (an admin may act as another with --as), never telemetry; the Ledger decides.
"""

from __future__ import annotations

from pathlib import Path

import typer

from diagagent.apps.common import (
    SAVE_HELP,
    STATUS_HELP,
    TARGETS_HELP,
    console,
    fail,
    open_bundle,
    operator,
    os_user,
    settings,
)


def register(app: typer.Typer) -> None:
    @app.command()
    def chat(
        targets: list[str] = typer.Argument(..., help=TARGETS_HELP, show_default=False),
        save: Path | None = typer.Option(None, "--save", help=SAVE_HELP),
        status: str | None = typer.Option(None, "--status", help=STATUS_HELP),
        as_user: str | None = typer.Option(None, "--as", help="Act as this user (only for DIAGAGENT_ADMINS; "
                                                             "default: the OS user)."),
        llm: bool = typer.Option(False, "--llm", help="Use the configured LLM (DIAGAGENT_LLM_BASE_URL)."),
    ) -> None:
        """Open the TUI on an incident: ask why it failed, read the evidence, approve or reject actions."""
        from diagagent.apps.tui import DiagApp

        cfg = settings()
        if "-" in targets:
            fail("chat needs the terminal for its keys, so it cannot read logs from standard input: give the log "
                 "file, or run `diagagent diagnose - --save DIR` and then `diagagent chat DIR`")
        if llm and not cfg.llm_base_url:
            console(stderr=True).print("[yellow]--llm: no DIAGAGENT_LLM_BASE_URL configured; the playbook answers[/]")
        from diagagent.actions.identity import name_key

        user = operator(as_user)
        if user.via and name_key(user.via) not in {name_key(a) for a in cfg.admins}:
            fail(f"--as {as_user}: {user.via} may not act as someone else; only an operator named in "
                 "DIAGAGENT_ADMINS may")
        with open_bundle(targets, cfg, save=save, status=status) as bundle:
            DiagApp(bundle, cfg, user=user, proposer=os_user(), use_llm=llm and bool(cfg.llm_base_url)).run()


__all__ = ["register"]
