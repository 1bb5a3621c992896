"""`diagagent eval [PATH ...] [--suite NAME] [--agent ...] [--baseline ...]`: score diagnoses against truth.json.

Runs diagagent and the no-tool baselines on the same cases, prints a table per metric, writes --json / --markdown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from diagagent.apps.common import console, fail, settings

if TYPE_CHECKING:
    from rich.progress import Progress

AGENT_CHOICES = ("playbook", "llm", "none")
AGENT_COLUMN = {"playbook": "diagagent", "llm": "diagagent-llm"}


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console(stderr=True), transient=True)


def _baseline_names(requested: list[str]) -> list[str]:
    from diagagent.evaluation.baselines import BASELINES

    names: list[str] = []
    for item in requested:
        for name in (n.strip() for n in item.split(",")):
            if name == "all":
                names.extend(BASELINES)
            elif name in BASELINES:
                names.append(name)
            elif name:
                fail(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}, all")
    return list(dict.fromkeys(names))


def _agent(choice: str | None, baselines: list[str]) -> tuple[str | None, object | None]:
    """(column name, predictor) for --agent. Without --agent: the playbook, or no agent (with a warning) when
    the playbook is not built yet and baselines were asked for."""
    from diagagent.evaluation.predictors import AgentUnavailable, agent_predictor

    if choice is not None and choice not in AGENT_CHOICES:
        fail(f"--agent must be one of {', '.join(AGENT_CHOICES)}; got {choice!r}")
    agent = choice or "playbook"
    try:
        predictor = agent_predictor(agent, settings())  # type: ignore[arg-type]
    except AgentUnavailable as exc:
        if choice is None and baselines:
            console(stderr=True).print(f"[yellow]warning:[/] {exc}; scoring the baselines only "
                                       "(--agent none says so and silences this)", soft_wrap=True)
            return None, None
        fail(f"{exc}; --agent none scores the baselines alone")
    return (AGENT_COLUMN[agent], predictor) if predictor is not None else (None, None)


def _suite_cases(names: list[str], workers: int) -> list:
    from diagagent.evaluation.runner import find_cases
    from diagagent.evaluation.suites import SuiteError, ensure_suite, find_suite, load_suite

    cases = []
    for name in names:
        try:
            suite = load_suite(find_suite(name))
            with _progress() as progress:
                task = progress.add_task(f"suite {suite.name}: bundles ready", total=len(suite.cases))
                folders = ensure_suite(suite, settings().state_dir, workers,
                                       on_case_ready=lambda _, task=task: progress.advance(task))
        except SuiteError as exc:
            fail(str(exc))
        for folder in folders:
            cases += find_cases(folder, set_name=suite.name)
    return cases


def _write_json(out: Path, data: dict) -> None:
    text = json.dumps(data, indent=2) + "\n"
    if str(out) == "-":
        sys.stdout.write(text)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        paths: list[Path] | None = typer.Argument(
            None, help="Eval cases: a bundle with truth.json, or a folder of them (e.g. evals/cases); a case may also be "
                       "a folder of raw logs with truth.json and no job.yaml."),
        suite: list[str] = typer.Option([], "--suite", help="A suite in evals/suites/NAME.yaml, simulated and "
                                                             "cached under the state dir. Repeatable."),
        agent: str | None = typer.Option(
            None, "--agent", help="playbook | llm | none. Default: playbook; when it is not built yet and "
                                  "baselines are given, the baselines alone (with a warning)."),
        baseline: list[str] = typer.Option([], "--baseline", help="grep | error_time | error_count | all. "
                                                                  "Repeatable or comma-separated."),
        json_out: Path | None = typer.Option(None, "--json", help="Write the scores as JSON ('-': stdout)."),
        markdown: list[Path] = typer.Option([], "--markdown", help="Write the tables as Markdown; in a file with "
                                            "diagagent-eval markers (a README) only the overall tables are "
                                            "replaced. Repeatable."),
        workers: int = typer.Option(2, "--workers", min=1, help="Processes that generate missing suite bundles."),
    ) -> None:
        """Score diagagent (and baselines) against truth.json on eval cases; a table per metric and category."""
        from diagagent.evaluation.baselines import BASELINES
        from diagagent.evaluation.report import eval_json, render_terminal, write_markdown
        from diagagent.evaluation.runner import find_cases, run_cases

        if not paths and not suite:
            fail("nothing to score: give a PATH (a bundle or a folder of bundles with truth.json) or --suite NAME")
        baselines = _baseline_names(baseline)
        agent_name, agent_predictor = _agent(agent, baselines)
        predictors = {agent_name: agent_predictor} if agent_name else {}
        predictors.update({name: BASELINES[name] for name in baselines})
        if not predictors:
            fail("nothing to run: --agent none needs at least one --baseline")
        cases = _suite_cases(suite, workers)
        for path in paths or []:
            found = find_cases(path)
            if not found:
                fail(f"{path}: no eval cases there (a bundle dir or tarball, or folders holding truth.json with "
                     "job.yaml or raw logs)")
            cases += found
        with _progress() as progress:
            task = progress.add_task(f"scoring {len(predictors)} predictor(s)", total=len(cases))
            run = run_cases(cases, predictors, on_case_done=lambda _: progress.advance(task))
        if json_out is not None:
            _write_json(json_out, eval_json(run, agent_name))
        for out in markdown:
            write_markdown(out, run)
        render_terminal(run, console(stderr=str(json_out) == "-"))


__all__ = ["register"]
