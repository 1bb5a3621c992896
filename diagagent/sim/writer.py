"""`simulate()`: plan the job, play the fault's story and its cascade, write every part of the bundle and truth.json.

Deterministic: the same arguments give a byte-identical bundle (seeded streams, no clock, gzip without mtime).
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from diagagent.sim.cascade import spread
from diagagent.sim.clock import stream
from diagagent.sim.faults import fault_spec
from diagagent.sim.flows import flow_file
from diagagent.sim.incident import Incident, NodeHealth
from diagagent.sim.jobfile import checkpoints, code_history, job_yaml
from diagagent.sim.logs import TextFile, kernel_logs, launcher_logs, rank_logs
from diagagent.sim.plan import Plan, make_plan
from diagagent.sim.probes import node_probes
from diagagent.sim.stacks import stack_files
from diagagent.sim.stories import tell
from diagagent.telemetry.truth import LineRef, Truth, TruthAction

Progress = Callable[[str, int, int], None]  # (part, done, total)
_OWNED = ("logs", "flows", "stacks", "probes", "job.yaml", "truth.json")


def _written_by_simulate(out: Path) -> bool:
    """A truth.json that `simulate` wrote (it names the simulator's version): the bundle beside it is simulated."""
    try:
        data = json.loads((out / "truth.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("sim_version"))


def _prepare(out: Path, force: bool = False) -> None:
    """An empty or missing dir, or a bundle `simulate` wrote (its parts are replaced); anything else only with
    `force` (then the bundle's parts there are replaced; other files stay)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force and not _written_by_simulate(out):
            held = sorted(p.name for p in out.iterdir())
            shown = ", ".join(held[:6]) + (f" (+{len(held) - 6} more)" if len(held) > 6 else "")
            raise ValueError(
                f"{out} is not empty ({shown}) and was not written by simulate (no truth.json naming a sim_version); "
                "refusing to write into it: a real bundle there would be lost. Pick an empty folder, or --force "
                f"to replace its {', '.join(_OWNED)}"
            )
        for name in _OWNED:
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _write(
    out: Path,
    files: Iterable[TextFile],
    gz: bool,
    cites: list[LineRef],
    made_dirs: set[str],
    progress: Progress | None,
    part: str,
    total: int,
) -> int:
    count = 0
    for f in files:
        parent = f.path.rsplit("/", 1)[0]
        if parent not in made_dirs:
            (out / parent).mkdir(parents=True, exist_ok=True)
            made_dirs.add(parent)
        data = gzip.compress(f.data, compresslevel=5, mtime=0) if gz and f.path.endswith(".gz") else f.data
        (out / f.path).write_bytes(data)
        cites.extend(LineRef(file=f.path, line=n) for n in f.cited)
        count += 1
        if progress is not None and (count % 256 == 0 or count == total):
            progress(part, count, total)
    return count


def _herrings(plan: Plan, inc: Incident) -> dict[int, str]:
    """Healthy nodes that look a little scary: correctable ECC, a power-capped warm GPU, an old Xid, symbol errors,
    compute a few percent slower than its peers."""
    rng = stream(plan.seed, "herrings")
    healthy = [n for n in range(plan.layout.nodes) if n not in inc.faulty_nodes]
    kinds = ["ecc", "power", "xid", "symbol", "slow"]
    picks = rng.sample(healthy, min(len(healthy), len(kinds)))
    herrings = dict(zip(picks, kinds, strict=False))
    for node, kind in herrings.items():
        if kind == "slow":
            inc.mild_slow_nodes[node] = rng.uniform(1.008, 1.02)
    return herrings


def _actions(plan: Plan, inc: Incident, ckpts: list, code: list) -> list[TruthAction]:
    spec = plan.fault
    valid = [c.step for c in ckpts if c.valid and (inc.restart_before is None or c.step < inc.restart_before)]
    restart = TruthAction(kind="restart", from_step=max(valid)) if valid else None
    hosts = [plan.layout.hosts[n] for n in inc.faulty_nodes]
    if spec.category in ("hardware", "network"):
        return [TruthAction(kind="evict", nodes=hosts), *([restart] if restart else [])]
    oom_everywhere = spec.id == "cuda_oom" and len(plan.layout.stage_nodes(0)) == plan.layout.nodes
    if spec.id in ("user_shape_mismatch_at_init", "user_import_error") or (oom_everywhere and inc.code_regression):
        return [TruthAction(kind="rollback", to_commit=code[-2].commit)]  # the newest commit broke every rank
    if spec.id in ("cuda_oom", "dataloader_corrupt_sample"):
        return [TruthAction(kind="none")]
    return [restart] if restart else []


def _timeline(inc: Incident) -> list[dict]:
    s = inc.schedule
    return [
        {"iteration": s.iteration(k), "start": round(s.starts[k], 6), "end": round(s.ends[k], 6)}
        for k in range(s.done)
    ]


def simulate(
    out: Path,
    fault: str,
    nodes: int,
    seed: int,
    *,
    gpus_per_node: int = 8,
    minutes: float | None = None,
    job_id: str | None = None,
    compress: bool | None = None,
    progress: Progress | None = None,
    force: bool = False,
    every_rank_logs: bool = False,
) -> Truth:
    """Write a bundle for `fault` on `nodes` nodes into `out` and return its truth (also written as truth.json).

    `out` must be missing, empty or a bundle `simulate` wrote (it is replaced); anything else raises ValueError
    unless `force`, so a real bundle is never overwritten by accident.

    `every_rank_logs` (the verbosity knob): every rank prints the per-iteration lines, not only the logging rank;
    with `minutes` (the duration) it sizes the logs (an L4-size job: 79 nodes, 1,600 minutes, about 12 GB). Flow
    records then cover the last hour before the bundle ends (what a collector keeps)."""
    from diagagent.sim import SIM_VERSION

    spec = fault_spec(fault)
    if nodes < 1 or gpus_per_node < 1:
        raise ValueError("nodes and gpus_per_node must be at least 1")
    if minutes is not None and minutes <= 0:
        raise ValueError("minutes must be positive")
    out = Path(out)
    plan = make_plan(spec, nodes, seed, gpus_per_node, minutes, job_id, compress)
    inc = tell(plan)
    deaths = spread(plan, inc)
    t_end = (max(d.ts for d in deaths.values()) + 4.0) if deaths else (inc.t_capture or inc.t_fault)
    _prepare(out, force)
    ext = ".gz" if plan.compress else ""
    cites: list[LineRef] = []
    dirs: set[str] = set()
    _write(
        out,
        rank_logs(plan, inc, deaths, t_end, ext, every_rank_logs),
        plan.compress,
        cites,
        dirs,
        progress,
        "logs",
        plan.world,
    )
    _write(out, launcher_logs(plan, inc, ext), plan.compress, cites, dirs, None, "logs", 0)
    _write(out, kernel_logs(plan, inc, ext), plan.compress, cites, dirs, None, "logs", 0)
    herrings = _herrings(plan, inc)
    probe_ts = (inc.t_capture or t_end) + 120.0
    probe_files = (
        f
        for node in range(plan.layout.nodes)
        for f in node_probes(plan, node, inc.health.get(node, NodeHealth()), probe_ts, herrings.get(node))
    )
    _write(out, probe_files, False, cites, dirs, progress, "probes", 6 * plan.layout.nodes)
    if progress is not None:
        progress("flows", 0, 1)
    (out / "flows").mkdir(exist_ok=True)
    name, data = flow_file(plan, inc, t_end, since=t_end - 3600.0 if every_rank_logs else None)
    (out / "flows" / name).write_bytes(data)
    if progress is not None:
        progress("flows", 1, 1)
    if inc.outcome in ("hang", "slow") and (inc.hang_rank is not None or inc.slow_nodes):
        _write(out, stack_files(plan, inc), False, [], dirs, progress, "stacks", plan.world)
    code = code_history(plan, inc)
    ckpts = checkpoints(plan, inc)
    (out / "job.yaml").write_text(job_yaml(plan, inc, t_end, code, ckpts))
    truth = Truth(
        fault=spec.id,
        category=spec.category,
        root_cause=inc.root_cause,
        faulty_nodes=[plan.layout.hosts[n] for n in inc.faulty_nodes],
        stage=inc.stage,
        iteration=inc.iteration,
        indicating_lines=sorted(cites, key=lambda r: (r.file, r.line)),
        actions=_actions(plan, inc, ckpts, code),
        status={"crash": "failed", "hang": "hung", "slow": "slow"}[inc.outcome],
        framework=plan.env.framework,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        seed=seed,
        sim_version=SIM_VERSION,
        t_fault=round(inc.t_fault, 6),
        timeline=_timeline(inc),
    )
    (out / "truth.json").write_text(
        json.dumps(truth.model_dump(mode="json", exclude_none=True), indent=1) + "\n"
    )
    return truth
