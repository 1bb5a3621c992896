"""What an SRE gets with no tool: `grep` for error words, and L4's node baselines `error_time` and `error_count`.

Each is a predictor (Bundle -> Prediction) scored by the same code as diagagent; none claims a category or a fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pydantic import BaseModel

from diagagent.diagnosis import Diagnosis, Evidence, NodeScore
from diagagent.evaluation.predictors import Prediction
from diagagent.telemetry import Bundle, parse_timestamp

# The words an SRE greps for first (`grep -rniE`), in the phrasing PyTorch, NCCL, CUDA and the kernel use.
ERROR_WORDS = re.compile(
    r"\b(?:error|errors|exception|traceback|fatal|fail|failed|failure|killed|abort|aborted|panic|"
    r"segmentation fault|timed out|timeout|xid)\b", re.IGNORECASE)
GREP_HEAD = 5  # `| head -5`


class ErrorLine(BaseModel):
    file: str
    line: int
    host: str | None
    ts: float | None
    text: str


def error_lines(bundle: Bundle) -> Iterator[ErrorLine]:
    """Every log and probe line holding an error word, file by file in path order (as `grep -r` lists them)."""
    sources = [(f.file, f.host) for f in bundle.log_files] + [(f.file, f.host) for f in bundle.probe_files]
    for file, host in sorted(sources):
        for n, text in bundle.iter_raw_lines(file):
            if ERROR_WORDS.search(text):
                yield ErrorLine(file=file, line=n, host=host, ts=parse_timestamp(text, bundle.year), text=text[:500])


def _evidence(lines: list[ErrorLine], why: str) -> list[Evidence]:
    return [Evidence(id=f"e{i}", kind="probe" if e.file.startswith("probes/") else "log", role="cause",
                     file=e.file, line=e.line, host=e.host, text=e.text, ts=e.ts, why=why)
            for i, e in enumerate(lines, start=1)]


def _diagnosis(bundle: Bundle, nodes: list[NodeScore], evidence: list[Evidence], summary: str) -> Prediction:
    return Prediction(diagnosis=Diagnosis(job_id=bundle.job.job_id, status=bundle.job.status, root_cause=summary,
                                          faulty_nodes=nodes, evidence=evidence))


def grep_baseline(bundle: Bundle) -> Prediction:
    """`grep -rniE '<error words>' logs probes | head -5`; the faulty node is the host of the first match."""
    first: list[ErrorLine] = []
    for line in error_lines(bundle):
        first.append(line)
        if len(first) == GREP_HEAD:
            break
    nodes = [NodeScore(host=first[0].host, score=1.0, reason="host of the first error line")] \
        if first and first[0].host else []
    return _diagnosis(bundle, nodes, _evidence(first, "matches an error word"), "first lines matching error words")


def _first_error_per_host(bundle: Bundle) -> tuple[dict[str, ErrorLine], dict[str, int]]:
    """Each host's earliest error line (by timestamp, else the first seen) and its number of error lines."""
    first: dict[str, ErrorLine] = {}
    count: dict[str, int] = {}
    for line in error_lines(bundle):
        if line.host is None:
            continue
        count[line.host] = count.get(line.host, 0) + 1
        best = first.get(line.host)
        if best is None or (line.ts is not None and (best.ts is None or line.ts < best.ts)):
            first[line.host] = line
    return first, count


def error_time_baseline(bundle: Bundle) -> Prediction:
    """L4's Error_time: rank nodes by their first error line, earliest first (untimed lines after timed ones)."""
    first, _ = _first_error_per_host(bundle)
    order = sorted(first, key=lambda h: (first[h].ts is None, first[h].ts or 0.0))
    nodes = [NodeScore(host=h, score=1.0 / (i + 1), reason="first error line") for i, h in enumerate(order)]
    return _diagnosis(bundle, nodes, _evidence([first[h] for h in order], "the node's first error line"),
                      "nodes ranked by their first error line")


def error_count_baseline(bundle: Bundle) -> Prediction:
    """L4's Error_count: rank nodes by their number of error lines, most first."""
    first, count = _first_error_per_host(bundle)
    order = sorted(count, key=lambda h: (-count[h], h))
    nodes = [NodeScore(host=h, score=float(count[h]), reason=f"{count[h]} error lines") for h in order]
    return _diagnosis(bundle, nodes, _evidence([first[h] for h in order], "the node's first error line"),
                      "nodes ranked by their number of error lines")


BASELINES: dict[str, Callable[[Bundle], Prediction]] = {
    "grep": grep_baseline,
    "error_time": error_time_baseline,
    "error_count": error_count_baseline,
}
