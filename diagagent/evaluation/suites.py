"""Eval suites (`evals/suites/<name>.yaml`): simulated cases generated once into a cache and reused.

The cache is `<state_dir>/suites/<name>/<fault>-n<nodes>-s<seed>-<SIM_VERSION>/`; missing bundles are generated in
parallel worker processes, each into a temporary folder that is renamed into place when complete.
"""

from __future__ import annotations

import multiprocessing
import shutil
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError

SUITES_FOLDER = Path("evals") / "suites"


class SuiteError(ValueError):
    """A suite that cannot be found, read, or generated."""


class SuiteCase(BaseModel):
    fault: str
    nodes: int = Field(ge=1)
    seed: int = 0

    def folder_name(self, sim_version: str) -> str:
        return f"{self.fault}-n{self.nodes}-s{self.seed}-{sim_version}"


class Suite(BaseModel):
    name: str
    description: str = ""
    cases: list[SuiteCase]


def suite_search_dirs() -> list[Path]:
    """Where `--suite NAME` looks: ./evals/suites, then the source checkout's evals/suites."""
    checkout = Path(__file__).resolve().parents[2] / SUITES_FOLDER
    return [Path.cwd() / SUITES_FOLDER, checkout]


def find_suite(name: str, search_dirs: list[Path] | None = None) -> Path:
    """A suite name (`standard`) or a path to a suite YAML file."""
    as_path = Path(name).expanduser()
    if as_path.suffix in (".yaml", ".yml") and as_path.is_file():
        return as_path
    dirs = search_dirs if search_dirs is not None else suite_search_dirs()
    for folder in dirs:
        for suffix in (".yaml", ".yml"):
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return candidate
    looked = ", ".join(str(d) for d in dirs)
    raise SuiteError(f"no suite {name!r}: expected {name}.yaml in {looked}, or a path to a suite YAML file")


def load_suite(path: Path) -> Suite:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Suite.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise SuiteError(f"{path}: not a valid suite file (name, cases: [{{fault, nodes, seed}}]): {exc}") from exc


def sim_version() -> str:
    try:
        from diagagent.sim import SIM_VERSION  # type: ignore[attr-defined]
    except ImportError as exc:
        raise SuiteError(f"suites need the simulator (diagagent.sim.simulate, SIM_VERSION), not in this build: {exc}") \
            from exc
    return str(SIM_VERSION)


def _generate(out: str, fault: str, nodes: int, seed: int) -> str:
    """Worker: simulate one case into a temporary sibling folder, then rename it into place."""
    from diagagent.sim import simulate  # type: ignore[attr-defined]

    final = Path(out)
    tmp = final.with_name(final.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    simulate(tmp, fault, nodes, seed)
    tmp.rename(final)
    return out


def ensure_suite(suite: Suite, state_dir: Path, workers: int = 2,
                 on_case_ready: Callable[[Path], None] | None = None) -> list[Path]:
    """Each case's bundle folder in suite order, generating the missing ones (in `workers` processes)."""
    version = sim_version()
    cache = Path(state_dir) / "suites" / suite.name
    folders = {cache / case.folder_name(version): case for case in suite.cases}
    missing = {folder: case for folder, case in folders.items() if not (folder / "job.yaml").is_file()}
    ready = on_case_ready or (lambda folder: None)
    for folder in folders:
        if folder not in missing:
            ready(folder)
    if len(missing) <= 1 or workers <= 1:
        for folder, case in missing.items():
            _generate_or_explain(folder, case)
            ready(folder)
        return list(folders)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(_generate, str(folder), case.fault, case.nodes, case.seed): (folder, case)
                   for folder, case in missing.items()}
        for future in as_completed(futures):
            folder, case = futures[future]
            try:
                future.result()
            except Exception as exc:
                raise _generation_error(case, exc) from exc
            ready(folder)
    return list(folders)


def _generation_error(case: SuiteCase, exc: Exception) -> SuiteError:
    return SuiteError(f"simulating {case.fault} on {case.nodes} nodes, seed {case.seed} failed: "
                      f"{type(exc).__name__}: {exc}")


def _generate_or_explain(folder: Path, case: SuiteCase) -> None:
    try:
        _generate(str(folder), case.fault, case.nodes, case.seed)
    except Exception as exc:
        raise _generation_error(case, exc) from exc
