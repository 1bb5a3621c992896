"""One incident's analyzer results, each computed on first use and kept, and the evidence registry.

The playbook, the LLM's tools and `diagnose()` share one `Analyses`, so no analyzer runs twice and every cited
fact has the same id (e1, e2, ...) wherever it is shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from diagagent.analysis.guard import Budget
from diagagent.config import Settings
from diagagent.contract import ActionProposal, Diagnosis, Evidence, EvidenceKind, EvidenceRole
from diagagent.telemetry import Bundle, BundleError, ReadIssue

if TYPE_CHECKING:
    from diagagent.analysis.events import LogFindings
    from diagagent.analysis.flows import FlowFindings
    from diagagent.analysis.health import HealthFindings
    from diagagent.analysis.stacks import StackFindings
    from diagagent.analysis.workers import Workers
    from diagagent.diagnosis.differential import SignatureBook
    from diagagent.schemata import FailureSchema, SchemaCache, SchemaHit

ProgressSink = Callable[[dict[str, Any]], None]
T = TypeVar("T")
Analyzer = Callable[[Bundle, Budget, list[str]], T]  # (its view of the bundle, its time budget, notes it adds)
LOGS_BESIDE_BYTES = 32 << 20  # logs past this run whole in a worker process beside the other analyzers (a pool's
# start pays from about 35 MB of logs: benches/pool_threshold.py)
ANALYZERS: dict[str, Literal["logs", "probes", "stacks", "flows"]] = {
    "logs": "logs", "health": "probes", "stacks": "stacks", "flows": "flows"}  # the playbook's order; their part
NEW_CODE_WINDOW = timedelta(hours=24)  # a commit this close before the job started is "new code"
NAMED_ISSUES = 5  # read problems named one by one per analyzer in the notes; the rest are counted
INCOMPLETE_CONFIDENCE = 0.8  # the diagnosis's confidence is scaled by this per analyzer that failed or ran out


@dataclass(slots=True)
class _Outcome(Generic[T]):
    """What one analyzer run gave: its result (None when it failed), and what `_record` puts in the shared state."""

    result: T | None
    error: Failure | None
    issues: list[ReadIssue]
    notes: list[str]
    budget: Budget
    seconds: float


@dataclass(slots=True)
class Failure:
    """An analyzer's exception, as words (it may have been raised in another process)."""

    kind: str  # the exception's class name
    text: str
    file: str | None  # the file it names (a BundleError)


def compute(bundle: Bundle, settings: Settings, fn: Analyzer[T]) -> _Outcome[T]:
    """Run one analyzer on `bundle` (a view: its read problems are kept apart, for `Analyses._record`)."""
    budget = Budget(settings.analyzer_budget_s)
    notes: list[str] = []
    t0 = time.perf_counter()
    try:
        return _Outcome(fn(bundle, budget, notes), None, bundle.issues, notes, budget, time.perf_counter() - t0)
    except MemoryError:
        raise
    except Exception as exc:  # one analyzer failing must not stop the diagnosis  # noqa: BLE001
        failure = Failure(type(exc).__name__, str(exc), exc.file if isinstance(exc, BundleError) else None)
        return _Outcome(None, failure, bundle.issues, notes, budget, time.perf_counter() - t0)


def logs_analyzer(settings: Settings, runner: Workers | None) -> Analyzer[LogFindings]:
    """The logs analyzer: the normal-event pool of past jobs (notes on what it lacks), then L4."""
    def run(bundle: Bundle, budget: Budget, out: list[str]) -> LogFindings:
        from diagagent.analysis.events import analyze_logs, normal_pool_for

        pool, notes = normal_pool_for(bundle, settings.state_dir, settings.jobs_dir)
        missing = [n.split(":")[0].removeprefix("history job ") for n in notes if n.startswith("history job ")]
        if missing:
            out.append(f"history job(s) {', '.join(missing)} not found under {settings.jobs_dir}: "
                       "cross-job filtering used only the normal-event pool already learned"
                       if pool is not None else f"history job(s) {', '.join(missing)} not found under "
                       f"{settings.jobs_dir}: no cross-job filtering (`diagagent learn-normal PATH` "
                       "adds successful jobs)")
        out.extend(n for n in notes if not n.startswith("history job "))
        return analyze_logs(bundle, pool, budget=budget, runner=runner, fast=settings.fast_scan,
                            compiled=settings.compiled_scan)

    return run


def logs_in_this_process(bundle: Bundle, settings: Settings) -> _Outcome[LogFindings]:
    """The whole logs analyzer in a worker process (beside the others without sharing their interpreter lock)."""
    from diagagent.analysis.workers import Workers

    return compute(bundle, settings, logs_analyzer(settings, Workers(1)))


class EvidenceRegistry:
    """Gives each cited fact one stable id; the same line cited twice keeps its first id."""

    def __init__(self) -> None:
        self._by_id: dict[str, Evidence] = {}
        self._by_key: dict[tuple, str] = {}

    def cite(self, kind: EvidenceKind, *, role: EvidenceRole = "cause", file: str | None = None,
             line: int | None = None, host: str | None = None, rank: int | None = None, text: str = "",
             why: str = "", ts: float | None = None, score: float = 0.0, end_line: int | None = None) -> Evidence:
        key = (kind, file, line, host, rank) if file else (kind, host, rank, text[:160])
        if key in self._by_key:
            known = self._by_id[self._by_key[key]]
            if role == "cause" and known.role != "cause":  # shown first as context, then found to be the cause
                known.role, known.why = "cause", why or known.why
            return known
        ev = Evidence(id=f"e{len(self._by_id) + 1}", kind=kind, role=role, file=file, line=line, end_line=end_line,
                      host=host, rank=rank, text=text, why=why, ts=ts, score=round(score, 4))
        self._by_id[ev.id] = ev
        self._by_key[key] = ev.id
        return ev

    def get(self, evidence_id: str) -> Evidence | None:
        return self._by_id.get(evidence_id)

    def __contains__(self, evidence_id: object) -> bool:
        return evidence_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)


class Analyses:
    """Lazily run analyzers over one bundle; each reports its start and end to `on_progress`. A file an analyzer
    cannot use is skipped and named in `notes`; an analyzer that fails or runs out of its time budget is named in
    `notes` and in `incomplete` (which lowers the diagnosis's confidence)."""

    def __init__(self, bundle: Bundle, settings: Settings | None = None,
                 on_progress: ProgressSink | None = None) -> None:
        self.bundle = bundle
        self.settings = settings or Settings.load()
        self.on_progress = on_progress
        self.evidence = EvidenceRegistry()
        self.notes: list[str] = []
        self.timings: dict[str, float] = {}
        self.incomplete: list[str] = []  # analyzers that failed, or stopped at their time budget
        self._noted: set[str] = set()  # read problems already named (two analyzers may meet the same one)
        self._started: dict[str, Any] = {}  # analyzer -> the Future of its outcome, while run_all runs them

    def _emit(self, event: dict[str, Any]) -> None:
        if self.on_progress is not None:
            self.on_progress(event)

    @cached_property
    def workers(self) -> Workers:
        """Where the analyzers' file work runs (a process pool or Ray; started only when a bundle is big enough)."""
        from diagagent.analysis.workers import workers_for

        return workers_for(self.settings.workers, self.settings.ray_address)

    def _compute(self, fn: Analyzer[T]) -> _Outcome[T]:
        return compute(self.bundle.view(), self.settings, fn)

    def _run(self, name: str, fn: Analyzer[T]) -> T | None:
        started = self._started.pop(name, None)
        if started is None:
            self._emit({"type": "analyzer_start", "name": name})
            return self._record(name, self._compute(fn))
        return self._record(name, started.result())

    def _record(self, name: str, outcome: _Outcome[T]) -> T | None:
        """An analyzer's outcome into the shared state, in the order the analyzers are asked for: its notes, its read
        problems (into the bundle's, and named in the notes), its failure or spent budget."""
        self.notes.extend(outcome.notes)
        exc = outcome.error
        if exc is not None:
            where = f" on {exc.file}" if exc.file is not None else ""
            self.incomplete.append(name)
            self.notes.append(f"the {name} analyzer failed{where} ({exc.kind}: {exc.text[:300]}); "
                              "diagnosed without it, so with lower confidence")
        self.bundle.issues.extend(outcome.issues)
        self._note_issues(name, outcome.issues)
        budget = outcome.budget
        if budget.hit:
            self.incomplete.append(name)
            self.notes.append(f"the {name} analyzer ran out of its {budget.seconds:g} s budget (analyzer_budget_s) "
                              f"at {budget.stopped_at}: {budget.unread} {budget.unit} left unread; diagnosed with "
                              "what was read, so with lower confidence")
        self.timings[name] = outcome.seconds
        self._emit({"type": "analyzer_end", "name": name, "seconds": round(outcome.seconds, 3),
                    "ok": outcome.result is not None})
        return outcome.result

    def _note_issues(self, name: str, issues: list[ReadIssue]) -> None:
        """The files an analyzer skipped or read only in part, named (file, line, what was expected) in the notes."""
        issues = [i for i in issues if str(i) not in self._noted]
        self._noted.update(str(i) for i in issues)
        for issue in issues[:NAMED_ISSUES]:
            self.notes.append(f"{name}: {issue}")
        if len(issues) > NAMED_ISSUES:
            rest = issues[NAMED_ISSUES:]
            files = sorted({i.file for i in rest})
            self.notes.append(f"{name}: {len(rest)} more read problem(s) in {len(files)} file(s) "
                              f"({', '.join(files[:3])}{', ...' if len(files) > 3 else ''}), each skipped and counted")

    @cached_property
    def logs(self) -> LogFindings | None:
        return self._run("logs", self._logs_fn()) if self.bundle.has("logs") else None

    @cached_property
    def flows(self) -> FlowFindings | None:
        return self._run("flows", self._flows_fn()) if self.bundle.has("flows") else None

    @cached_property
    def stacks(self) -> StackFindings | None:
        return self._run("stacks", self._stacks_fn()) if self.bundle.has("stacks") else None

    @cached_property
    def health(self) -> HealthFindings | None:
        return self._run("health", self._health_fn()) if self.bundle.has("probes") else None

    def _logs_fn(self) -> Analyzer[LogFindings]:
        return logs_analyzer(self.settings, self.workers)

    def _flows_fn(self) -> Analyzer[FlowFindings]:
        from diagagent.analysis.flows import analyze_flows

        return lambda bundle, budget, _: analyze_flows(bundle, budget, self.workers)

    def _stacks_fn(self) -> Analyzer[StackFindings]:
        from diagagent.analysis.stacks import analyze_stacks

        return lambda bundle, budget, _: analyze_stacks(bundle, budget=budget, workers=self.workers)

    def _health_fn(self) -> Analyzer[HealthFindings]:
        from diagagent.analysis.health import analyze_health

        return lambda bundle, budget, _: analyze_health(bundle, budget=budget, workers=self.workers)

    @cached_property
    def schema_cache(self) -> SchemaCache | None:
        def run(bundle: Bundle, budget: Budget, notes: list[str]) -> SchemaCache:
            from diagagent.schemata import SchemaCache

            return SchemaCache.open(self.settings)

        return self._run("schemata", run)

    @cached_property
    def signatures(self) -> SignatureBook | None:
        """knowledge/signatures.yaml; None (and a note) when it cannot be read."""
        from diagagent.diagnosis.differential import SignatureBook

        path = self.settings.content_dir("knowledge") / "signatures.yaml"
        try:
            return SignatureBook.load(path)
        except ValueError as exc:
            self.notes.append(f"no fault signatures: {exc}")
            return None

    @cached_property
    def fault_schemata(self) -> dict[str, FailureSchema]:
        """Each fault's schema (the seed's where there is one): its category, title and discriminating checks."""
        cache = self.schema_cache
        out: dict[str, FailureSchema] = {}
        for schema in sorted(cache.list() if cache is not None else [], key=lambda s: s.origin != "seed"):
            out.setdefault(schema.fault, schema)
        return out

    def search_schemata(self, texts: list[str], k: int = 5) -> list[SchemaHit]:
        """The schemata nearest to what the evidence says; a counter at zero says nothing (a slow job's Megatron
        line "number of nan iterations:   0" found the NaN schema, a hand-made slow-link incident)."""
        from diagagent.analysis.logparse import without_zero_counts

        cache = self.schema_cache
        return cache.search([without_zero_counts(t) for t in texts], k) if cache is not None else []

    def run_all(self) -> None:
        """Run every analyzer that has data, side by side (the logs, the probes then the stacks, which share the
        bundle's read budget, and the flows, each in a thread, their file work in the shared workers), then take
        their outcomes in the order the playbook shows, so the notes and evidence are as one after another."""
        order = [name for name in ANALYZERS if self.bundle.has(ANALYZERS[name]) and name not in self.__dict__]
        if len(order) > 1:
            self._start(order)
        try:
            for name in ANALYZERS:
                getattr(self, name)
        finally:
            self._started.clear()
            self.workers.close()

    def _start(self, order: list[str]) -> None:
        """Start the analyzers in `order` in threads (probes before stacks, in one thread); `_run` takes their
        outcomes. The bundle's part listings are read first, so that no thread lists them."""
        from concurrent.futures import Future

        fns = {name: self._analyzer(name) for name in order}
        _ = self.workers  # made here, before the threads that use it
        lanes = [[n for n in order if n in lane] for lane in (("logs",), ("health", "stacks"), ("flows",))]
        for name in order:
            self._emit({"type": "analyzer_start", "name": name})
            self._started[name] = Future()

        if lanes[0] and self._logs_beside():  # the logs whole in a worker process, not in a thread of this one
            self._started["logs"] = self.workers.submit(logs_in_this_process, self.bundle.view(), self.settings)
            lanes[0] = []

        def lane_run(futures: list[tuple[str, Future]]) -> None:
            for name, future in futures:  # (taken here: `_run` pops them from `_started` as it records them)
                try:
                    future.set_result(self._compute(fns[name]))
                except BaseException as exc:  # noqa: BLE001 - a MemoryError: raised where the outcome is taken
                    future.set_exception(exc)

        for lane in lanes:
            if lane:
                futures = [(name, self._started[name]) for name in lane]
                threading.Thread(target=lane_run, args=(futures,), name=f"analyzer-{lane[0]}", daemon=True).start()

    def _logs_beside(self) -> bool:
        """Whether the logs are worth a worker process of their own: enough of them to pay for starting one, but too
        few to be cut into chunks (then the chunks go to the workers and the merge is all that runs here)."""
        from diagagent.analysis.logscan import PARALLEL_BYTES, log_bytes

        if not self.workers.local or self.workers.count <= 1:
            return False
        size = log_bytes(self.bundle)
        return LOGS_BESIDE_BYTES <= size < PARALLEL_BYTES

    def _analyzer(self, name: str) -> Analyzer[Any]:
        """The function the property `name` runs (for `_start`)."""
        return {"logs": self._logs_fn, "health": self._health_fn, "stacks": self._stacks_fn,
                "flows": self._flows_fn}[name]()

    def eviction_hosts(self) -> list[str] | None:
        """ByteRobust's over-eviction set from the stacks, where the stacks name one."""
        stacks = self.stacks
        if stacks is None or stacks.eviction is None:
            return None
        return list(stacks.eviction.hosts)

    def proposals(self, diagnosis: Diagnosis, schema: FailureSchema | None) -> list[ActionProposal]:
        """The actions for a diagnosis whose fault's schema is `schema`, from what the analyzers found: the stacks'
        over-eviction set, new code right before a user-code failure, the checkpoint the logs say was being loaded."""
        from diagagent.actions import propose

        return propose(diagnosis, self.bundle.job, eviction_hosts=self.eviction_hosts(),
                       new_code_suspected=self.new_code_suspected(diagnosis),
                       schema_actions=[(a.kind, a.detail) for a in schema.actions_for(bool(diagnosis.faulty_hosts))]
                       if schema is not None else [],
                       resumed_from=self.logs.resumed_from if self.logs is not None else None)

    def new_code_suspected(self, diagnosis: Diagnosis) -> bool:
        """A user-code failure right after new code landed: the newest commit is under a day older than the job. An
        out-of-memory counts when every node with logs hit it (the new code's batch or model, not one node's state)."""
        if diagnosis.category != "user_code":
            return False
        if diagnosis.fault == "cuda_oom":
            causes = self.logs.causes() if self.logs is not None else []
            if not causes or causes[0].host_count < self.logs.hosts_with_logs:  # type: ignore[union-attr]
                return False
        return self.new_code_landed()

    def new_code_landed(self) -> bool:
        """The newest of two or more commits landed under a day before the job started."""
        job = self.bundle.job
        if len(job.code) < 2:
            return False
        newest, started = job.code[-1].at, job.started_at
        return newest is not None and started is not None and started - newest <= NEW_CODE_WINDOW
