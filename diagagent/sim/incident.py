"""What a fault did to one simulated job: timed log events, deaths, kernel lines and health-probe deviations.

A scenario fills an `Incident`; the writers turn it into files and `truth.json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from diagagent.sim.faults import Outcome
from diagagent.sim.plan import Schedule
from diagagent.telemetry.truth import Stage

DeathKind = Literal["error", "abort", "killed", "terminated", "vanished"]
EXIT_CODES: dict[str, int] = {"error": 1, "abort": -6, "killed": -9, "terminated": -15, "vanished": -9}


@dataclass(slots=True)
class Event:
    """Lines a process printed at `ts` (each line without its newline); `cite` marks lines truth points at."""

    ts: float
    lines: list[str]
    cite: tuple[int, ...] = ()
    order: int = 0  # ties at the same ts keep this order


@dataclass(slots=True)
class Death:
    ts: float
    kind: DeathKind
    message: str = ""  # the exception the agent's failure summary shows (error deaths)


@dataclass
class NodeHealth:
    """How one node's probes differ from a healthy node's."""

    ecc_uncorrectable: dict[int, int] = field(default_factory=dict)  # gpu -> DRAM uncorrectable count
    ecc_correctable: dict[int, int] = field(default_factory=dict)
    remap_pending: list[int] = field(default_factory=list)
    gpu_lost: list[int] = field(default_factory=list)
    throttle: dict[int, str] = field(default_factory=dict)  # gpu -> "thermal" | "power"
    temp: dict[int, int] = field(default_factory=dict)
    port_down: list[int] = field(default_factory=list)  # HCA index
    link_downed: dict[int, int] = field(default_factory=dict)
    symbol_errors: dict[int, int] = field(default_factory=dict)
    xmit_wait: dict[int, int] = field(default_factory=dict)
    busbw: float | None = None
    nccl_test_error: str | None = None
    dcgm: list[tuple[str, str, str]] = field(default_factory=list)  # (test, result, warning)
    dmesg: list[Event] = field(default_factory=list)
    panic: bool = False  # the node crashed; dmesg is what the log collector caught before it died
    cite: list[str] = field(
        default_factory=list
    )  # probe marks truth cites: "nvidia-smi:ecc:3", "ibstat:state:3"


@dataclass
class Incident:
    outcome: Outcome
    stage: Stage
    root_cause: str
    schedule: Schedule
    t_fault: float
    iteration: int | None
    faulty_nodes: list[int] = field(default_factory=list)
    events: dict[int, list[Event]] = field(default_factory=dict)  # rank -> extra events
    deaths: dict[int, Death] = field(default_factory=dict)  # root deaths; the cascade is added after
    health: dict[int, NodeHealth] = field(default_factory=dict)
    slow_nodes: dict[int, float] = field(default_factory=dict)  # node -> compute slowdown
    slow_link: dict[int, float] = field(default_factory=dict)  # node -> link slowdown
    slow_from: int | None = None  # iteration index where slowness starts
    mild_slow_nodes: dict[int, float] = field(default_factory=dict)  # red herring: a bit slow, not faulty
    hang_rank: int | None = None
    nan_from: int | None = None  # first NaN iteration
    spike_from: int | None = None
    invalid_checkpoint: int | None = None
    code_regression: str | None = None  # commit message of the bad newest commit
    network_peers_fail: bool = False  # ring neighbours of the dead see IB errors naming the faulty host
    t_capture: float | None = None  # hang / slow: when the bundle was taken
    launcher_events: dict[int, list[Event]] = field(default_factory=dict)  # node -> agent / slurm lines
    restart_before: int | None = None  # restart from the newest valid checkpoint before this step

    def node_health(self, node: int) -> NodeHealth:
        return self.health.setdefault(node, NodeHealth())

    def add(self, rank: int, event: Event) -> None:
        self.events.setdefault(rank, []).append(event)
