"""Find eval cases (bundles with a truth.json), run every predictor on each, and score the diagnoses.

Only the predictor call is timed; the lines scoring needs are read once per case for all predictors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from diagagent.diagnosis import Diagnosis
from diagagent.evaluation.metrics import CaseScore, LineIndex, evidence_lines, score_case
from diagagent.evaluation.predictors import Prediction, Predictor
from diagagent.telemetry import Bundle, BundleError

_TARBALLS = (".tar.gz", ".tgz")


class EvalCase(BaseModel):
    name: str
    set: str
    path: Path


class EvalRun(BaseModel):
    """Per predictor, its score on each case (in case order); and the cases that could not be read."""

    scores: dict[str, list[CaseScore]] = Field(default_factory=dict)
    skipped: list[str] = Field(default_factory=list)

    @property
    def sets(self) -> list[str]:
        first = next(iter(self.scores.values()), [])
        return list(dict.fromkeys(s.set for s in first))


def _is_bundle(path: Path) -> bool:
    return (path.is_dir() and (path / "job.yaml").is_file()) or (path.is_file() and path.name.endswith(_TARBALLS))


def _is_raw_case(path: Path) -> bool:
    """A folder of raw logs with a truth.json and no job.yaml: built into a bundle when it is scored."""
    return path.is_dir() and (path / "truth.json").is_file() and not (path / "job.yaml").is_file()


def open_case(path: Path) -> Bundle:
    """An eval case as a bundle: a bundle as it is, or a raw case built from its logs (its truth.json put in)."""
    if not _is_raw_case(path):
        return Bundle.open(path)
    import shutil

    from diagagent.telemetry.rawlogs import open_inputs

    bundle = open_inputs([str(path)], path)
    shutil.copyfile(path / "truth.json", bundle.root / "truth.json")
    return bundle


def find_cases(path: Path, set_name: str | None = None) -> list[EvalCase]:
    """A bundle (dir or tarball) is one case, in the set named after its folder; a folder gives every bundle below
    it holding a truth.json, in the set named after the folder."""
    path = Path(path).expanduser()
    if _is_bundle(path) or _is_raw_case(path):
        return [EvalCase(name=path.name, set=set_name or str(path.parent), path=path)]
    label = set_name or str(path)
    if not path.is_dir():
        return []
    found = [p.parent for p in path.rglob("truth.json")]  # bundles, and raw cases (no job.yaml)
    found += [p for p in path.rglob("*") if p.is_file() and p.name.endswith(_TARBALLS)]
    return [EvalCase(name=p.relative_to(path).as_posix(), set=label, path=p) for p in sorted(set(found))]


def timed_predict(predictor: Predictor, bundle: Bundle) -> tuple[Prediction, float, str | None]:
    """The prediction, its wall time, and the error if it raised (then an empty diagnosis stands in)."""
    start = time.perf_counter()
    try:
        prediction = predictor(bundle)
        error = None
    except Exception as exc:  # noqa: BLE001 (a crashing predictor scores as an empty diagnosis; the run goes on)
        prediction = Prediction(diagnosis=Diagnosis(job_id=bundle.job.job_id))
        error = f"{type(exc).__name__}: {exc}"
    return prediction, time.perf_counter() - start, error


def score_bundle(case: EvalCase, bundle: Bundle, predictors: dict[str, Predictor]) -> dict[str, CaseScore]:
    """Every predictor on one opened bundle, scored against its truth.json."""
    truth = bundle.truth
    if truth is None:
        raise BundleError(str(case.path), "no truth.json: not an eval case")
    runs = {name: timed_predict(predictor, bundle) for name, predictor in predictors.items()}
    refs = [(r.file, r.line) for r in truth.indicating_lines or []]
    for prediction, _, _ in runs.values():
        refs += evidence_lines(prediction.diagnosis)
    index = LineIndex.from_bundle(bundle, refs)
    out = {}
    for name, (prediction, seconds, error) in runs.items():
        score = score_case(prediction.diagnosis, truth, index, case=case.name)
        out[name] = score.model_copy(update={
            "set": case.set, "seconds": seconds, "error": error, "llm_calls": prediction.llm_calls,
            "tokens_in": prediction.tokens_in, "tokens_out": prediction.tokens_out,
            "cost_usd": prediction.cost_usd, "llm_submitted": prediction.llm_submitted,
            "llm_fallback": prediction.llm_fallback})
    return out


def run_cases(cases: list[EvalCase], predictors: dict[str, Predictor],
              on_case_done: Callable[[EvalCase], None] | None = None) -> EvalRun:
    run = EvalRun(scores={name: [] for name in predictors})
    for case in cases:
        try:
            with open_case(case.path) as bundle:
                scores = score_bundle(case, bundle, predictors)
        except BundleError as exc:
            run.skipped.append(f"{case.set}/{case.name}: {exc}")
            scores = {}
        for name, score in scores.items():
            run.scores[name].append(score)
        if on_case_done:
            on_case_done(case)
    return run
