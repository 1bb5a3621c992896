"""One incident's analyzer results, each computed on first use and kept, and the evidence registry.

The playbook, the LLM's tools and `diagnose()` share one `Analyses`, so no analyzer runs twice and every cited
fact has the same id (e1, e2, ...) wherever it is shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from diagagent.analysis.guard import Budget
from diagagent.config import Settings
from diagagent.contract import Diagnosis, Evidence, EvidenceKind, EvidenceRole
from diagagent.telemetry import Bundle, BundleError, ReadIssue

if TYPE_CHECKING:
    from diagagent.analysis.events import LogFindings
    from diagagent.analysis.flows import FlowFindings
    from diagagent.analysis.health import HealthFindings
    from diagagent.analysis.stacks import StackFindings
    from diagagent.diagnosis.differential import SignatureBook
    from diagagent.schemata import FailureSchema, SchemaCache, SchemaHit

ProgressSink = Callable[[dict[str, Any]], None]
T = TypeVar("T")
NEW_CODE_WINDOW = timedelta(hours=24)  # a commit this close before the job started is "new code"
NAMED_ISSUES = 5  # read problems named one by one per analyzer in the notes; the rest are counted
INCOMPLETE_CONFIDENCE = 0.8  # the diagnosis's confidence is scaled by this per analyzer that failed or ran out


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

    def _emit(self, event: dict[str, Any]) -> None:
        if self.on_progress is not None:
            self.on_progress(event)

    def _run(self, name: str, fn: Callable[[Budget], T]) -> T | None:
        self._emit({"type": "analyzer_start", "name": name})
        t0 = time.perf_counter()
        budget = Budget(self.settings.analyzer_budget_s)
        seen = len(self.bundle.issues)
        try:
            result = fn(budget)
        except MemoryError:
            raise
        except Exception as exc:  # one analyzer failing must not stop the diagnosis  # noqa: BLE001
            where = f" on {exc.file}" if isinstance(exc, BundleError) else ""
            self.incomplete.append(name)
            self.notes.append(f"the {name} analyzer failed{where} ({type(exc).__name__}: {str(exc)[:300]}); "
                              "diagnosed without it, so with lower confidence")
            result = None
        self._note_issues(name, self.bundle.issues[seen:])
        if budget.hit:
            self.incomplete.append(name)
            self.notes.append(f"the {name} analyzer ran out of its {budget.seconds:g} s budget (analyzer_budget_s) "
                              f"at {budget.stopped_at}: {budget.unread} {budget.unit} left unread; diagnosed with "
                              "what was read, so with lower confidence")
        self.timings[name] = time.perf_counter() - t0
        self._emit({"type": "analyzer_end", "name": name, "seconds": round(self.timings[name], 3),
                    "ok": result is not None})
        return result

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
        if not self.bundle.has("logs"):
            return None

        def run(budget: Budget) -> LogFindings:
            from diagagent.analysis.events import analyze_logs, normal_pool_for

            pool, notes = normal_pool_for(self.bundle, self.settings.state_dir, self.settings.jobs_dir)
            missing = [n.split(":")[0].removeprefix("history job ") for n in notes if n.startswith("history job ")]
            if missing:
                self.notes.append(f"history job(s) {', '.join(missing)} not found under {self.settings.jobs_dir}: "
                                  "cross-job filtering used only the normal-event pool already learned"
                                  if pool is not None else f"history job(s) {', '.join(missing)} not found under "
                                  f"{self.settings.jobs_dir}: no cross-job filtering (`diagagent learn-normal PATH` "
                                  "adds successful jobs)")
            self.notes.extend(n for n in notes if not n.startswith("history job "))
            return analyze_logs(self.bundle, pool, budget=budget)

        return self._run("logs", run)

    @cached_property
    def flows(self) -> FlowFindings | None:
        if not self.bundle.has("flows"):
            return None
        from diagagent.analysis.flows import analyze_flows

        return self._run("flows", lambda budget: analyze_flows(self.bundle, budget))

    @cached_property
    def stacks(self) -> StackFindings | None:
        if not self.bundle.has("stacks"):
            return None
        from diagagent.analysis.stacks import analyze_stacks

        return self._run("stacks", lambda budget: analyze_stacks(self.bundle, budget=budget))

    @cached_property
    def health(self) -> HealthFindings | None:
        if not self.bundle.has("probes"):
            return None
        from diagagent.analysis.health import analyze_health

        return self._run("health", lambda budget: analyze_health(self.bundle, budget=budget))

    @cached_property
    def schema_cache(self) -> SchemaCache | None:
        def run(budget: Budget) -> SchemaCache:
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
        cache = self.schema_cache
        return cache.search(texts, k) if cache is not None else []

    def run_all(self) -> None:
        """Run every analyzer that has data (the order the playbook shows)."""
        for part in ("logs", "health", "stacks", "flows"):
            getattr(self, part)

    def eviction_hosts(self) -> list[str] | None:
        """ByteRobust's over-eviction set from the stacks, where the stacks name one."""
        stacks = self.stacks
        if stacks is None or stacks.eviction is None:
            return None
        return list(stacks.eviction.hosts)

    def new_code_suspected(self, diagnosis: Diagnosis) -> bool:
        """A user-code failure right after new code landed: the newest commit is under a day older than the job. An
        out-of-memory counts when every node with logs hit it (the new code's batch or model, not one node's state)."""
        job = self.bundle.job
        if diagnosis.category != "user_code" or len(job.code) < 2:
            return False
        if diagnosis.fault == "cuda_oom":
            causes = self.logs.causes() if self.logs is not None else []
            if not causes or causes[0].host_count < self.logs.hosts_with_logs:  # type: ignore[union-attr]
                return False
        newest, started = job.code[-1].at, job.started_at
        return newest is not None and started is not None and started - newest <= NEW_CODE_WINDOW
