"""Present an eval run: the stable JSON, rich tables for the terminal, and Markdown for evals/results and the README.

Each case set gets an overall table (metric x predictor) and, per metric, a table by the truth's category.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from diagagent.evaluation.metrics import CaseScore, Report, aggregate, report_json
from diagagent.evaluation.runner import EvalRun

MARK_BEGIN = "<!-- diagagent-eval:begin -->"
MARK_END = "<!-- diagagent-eval:end -->"


class Metric(NamedTuple):
    label: str
    report_path: tuple[str, ...]  # where the mean sits in a Report
    case_path: tuple[str, ...]  # where a case's value sits in a CaseScore


METRICS = [
    Metric("category_accuracy", ("category_accuracy",), ("category_accuracy",)),
    Metric("fault_accuracy", ("fault_accuracy",), ("fault_accuracy",)),
    *(Metric(f"nodes.{k}", ("nodes", k), ("nodes", k)) for k in ("top1", "top3", "top5", "f1")),
    *(Metric(f"events.{k}", ("events", k), ("events", k))
      for k in ("precision", "recall", "f1", "recall_at_1", "recall_at_5")),
    Metric("stage_accuracy", ("stage_accuracy",), ("stage_accuracy",)),
    Metric("iteration_accuracy", ("iteration_accuracy",), ("iteration_accuracy",)),
    Metric("iteration_within_1", ("iteration_within_1",), ("iteration_within_1",)),
    Metric("action_accuracy", ("action_accuracy",), ("action_accuracy",)),
    Metric("no_evidence", ("no_evidence",), ("no_evidence",)),
    Metric("calibration.ece", ("calibration", "ece"), ("correct",)),
    Metric("calibration.accuracy_at_0.8", ("calibration", "high_confidence_accuracy"), ("correct",)),
    Metric("seconds_per_case", ("seconds_per_case",), ("seconds",)),
]
LLM_METRICS = [Metric(f"llm.{k}", ("llm", k), (k,)) for k in ("llm_calls", "tokens_in", "tokens_out")] + [
    Metric("llm.tokens_in_total", ("llm", "tokens_in_total"), ("tokens_in",)),
    Metric("llm.tokens_out_total", ("llm", "tokens_out_total"), ("tokens_out",)),
    Metric("llm.cost_usd_total", ("llm", "cost_usd_total"), ("cost_usd",))]


def _get(model: BaseModel | None, path: tuple[str, ...]) -> float | None:
    for name in path:
        if model is None:
            return None
        model = getattr(model, name)
    return model  # type: ignore[return-value]


def scored_count(scores: list[CaseScore], metric: Metric) -> int:
    return sum(_get(s, metric.case_path) is not None for s in scores)


def eval_json(run: EvalRun, agent: str | None) -> dict:
    """The stable output: the agent's report (all null when no agent ran) with each baseline's report inside."""
    baselines = {name: report_json(aggregate(scores)) for name, scores in run.scores.items() if name != agent}
    if agent is not None:
        main = report_json(aggregate(run.scores[agent]))
    else:
        cases = len(next(iter(run.scores.values()), []))
        main = report_json(Report(cases=cases))
    return {**main, "baselines": baselines}


def _format(value: float | None, metric: Metric) -> str:
    if value is None:
        return "-"
    if metric.label == "seconds_per_case":
        return f"{value:.3f} s"
    if metric.label == "no_evidence":
        return f"{value:.0f}"
    if metric.label.startswith("llm.cost"):
        return f"${value:.4f}"
    if metric.label.startswith("llm."):
        return f"{value:.0f}"
    return f"{value:.2f}"


def _metrics_for(run: EvalRun) -> list[Metric]:
    uses_llm = any(s.llm_calls is not None for scores in run.scores.values() for s in scores)
    return METRICS + (LLM_METRICS if uses_llm else [])


def _in_set(scores: list[CaseScore], set_name: str) -> list[CaseScore]:
    return [s for s in scores if s.set == set_name]


def _categories(scores: list[CaseScore]) -> list[str]:
    return sorted({s.category or "unstated" for s in scores})


def overall_rows(run: EvalRun, set_name: str) -> list[list[str]]:
    """metric, n, then one cell per predictor."""
    reports = {name: aggregate(_in_set(scores, set_name)) for name, scores in run.scores.items()}
    first = _in_set(next(iter(run.scores.values())), set_name)
    return [[m.label, str(scored_count(first, m)), *(_format(_get(r, m.report_path), m) for r in reports.values())]
            for m in _metrics_for(run)]


def category_rows(run: EvalRun, set_name: str, metric: Metric) -> list[list[str]]:
    """category (n), then one cell per predictor: the metric over that category's cases."""
    first = _in_set(next(iter(run.scores.values())), set_name)
    rows = []
    for category in _categories(first):
        cells = []
        for scores in run.scores.values():
            subset = [s for s in _in_set(scores, set_name) if (s.category or "unstated") == category]
            cells.append(_format(_get(aggregate(subset), metric.report_path), metric))
        n = scored_count([s for s in first if (s.category or "unstated") == category], metric)
        rows.append([f"{category} ({n})", *cells])
    return rows


def reliability_rows(report: Report) -> list[list[str]]:
    """One row per confidence bin: its range, its cases, their mean stated confidence and their accuracy."""
    def cell(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    return [[f"{b.low:.1f}-{b.high:.1f}", str(b.cases), cell(b.confidence), cell(b.accuracy)]
            for b in report.calibration.bins]


def llm_case_rows(run: EvalRun) -> tuple[list[str], list[list[str]]]:
    """For each predictor that used an LLM: one row per case with its calls, tokens in and out, cost, whether the model
    submitted a diagnosis and whether the playbook's stood instead (fell back)."""
    header = ["predictor", "case", "llm calls", "tokens in", "tokens out", "cost", "submitted", "fell back"]
    rows = []
    for name, scores in run.scores.items():
        for s in scores:
            if s.llm_calls is None:
                continue
            cost = "-" if s.cost_usd is None else f"${s.cost_usd:.4f}"
            rows.append([name, s.case, str(s.llm_calls), str(s.tokens_in or 0), str(s.tokens_out or 0), cost,
                         "-" if s.llm_submitted is None else "yes" if s.llm_submitted else "no",
                         "yes" if s.llm_fallback else "no"])
    return header, rows


def render_terminal(run: EvalRun, console: Console) -> None:
    names = list(run.scores)
    for set_name in run.sets:
        cases = len(_in_set(run.scores[names[0]], set_name))
        table = Table(title=f"{set_name}: {cases} cases", title_justify="left")
        for col in ("metric", "n", *names):
            table.add_column(col, justify="left" if col == "metric" else "right")
        for row in overall_rows(run, set_name):
            table.add_row(*row)
        console.print(table)
        for metric in _metrics_for(run):
            by_cat = Table(title=f"{set_name}: {metric.label} by category", title_justify="left")
            for col in ("category (n)", *names):
                by_cat.add_column(col, justify="left" if col == "category (n)" else "right")
            for row in category_rows(run, set_name, metric):
                by_cat.add_row(*row)
            console.print(by_cat)
    header, rows = llm_case_rows(run)
    if rows:
        per_case = Table(title="LLM usage per case", title_justify="left")
        for col in header:
            per_case.add_column(col, justify="left" if col in ("predictor", "case") else "right")
        for row in rows:
            per_case.add_row(*row)
        console.print(per_case)
    for problem in run.skipped:
        console.print(f"[yellow]skipped[/] {problem}", soft_wrap=True)


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    align = ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(run: EvalRun) -> str:
    """Per case set: the overall table, then one by-category table per metric."""
    names = list(run.scores)
    parts = []
    for set_name in run.sets:
        cases = len(_in_set(run.scores[names[0]], set_name))
        parts.append(f"### {set_name} ({cases} cases)\n")
        parts.append(_md_table(["metric", "n", *names], overall_rows(run, set_name)) + "\n")
        parts.append(f"#### {set_name}: reliability of {names[0]}'s stated confidence\n")
        parts.append(_md_table(["confidence", "cases", "mean confidence", "accuracy"],
                               reliability_rows(aggregate(_in_set(run.scores[names[0]], set_name)))) + "\n")
        for metric in _metrics_for(run):
            parts.append(f"#### {set_name}: {metric.label} by category\n")
            parts.append(_md_table(["category (n)", *names], category_rows(run, set_name, metric)) + "\n")
    header, rows = llm_case_rows(run)
    if rows:
        parts.append("### LLM usage per case\n")
        parts.append(_md_table(header, rows) + "\n")
    if run.skipped:
        parts.append("Skipped: " + "; ".join(run.skipped) + "\n")
    return "\n".join(parts)


def render_summary(run: EvalRun) -> str:
    """One table for the README: a metric per row, a column per case set and predictor, all from the same run."""
    names = list(run.scores)
    sets = run.sets
    header, cells = ["metric"], []
    for set_name in sets:
        n = len(_in_set(run.scores[names[0]], set_name))
        header += [f"{set_name} ({n}): {name}" for name in names]
        cells.append([row[2:] for row in overall_rows(run, set_name)])
    rows = [[m.label, *(c for per_set in cells for c in per_set[i])] for i, m in enumerate(_metrics_for(run))]
    parts = [_md_table(header, rows) + "\n"]
    if run.skipped:
        parts.append("Skipped: " + "; ".join(run.skipped) + "\n")
    return "\n".join(parts)


def write_markdown(path: Path, run: EvalRun) -> None:
    """Write the report; into a file that holds the begin/end markers on lines of their own (a README), only the
    summary table (every set side by side) goes between them and the rest of the file stays as it is."""
    path = Path(path)
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    between = re.compile(f"^{re.escape(MARK_BEGIN)}$.*?^{re.escape(MARK_END)}$", re.DOTALL | re.MULTILINE)
    if between.search(existing):
        body = f"{MARK_BEGIN}\n{render_summary(run)}\n{MARK_END}"
        path.write_text(between.sub(lambda _: body, existing, count=1), encoding="utf-8")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# diagagent eval\n\n" + render_markdown(run), encoding="utf-8")
