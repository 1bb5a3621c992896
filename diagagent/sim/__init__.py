"""The incident simulator: writes realistic bundles (BUNDLE.md) with a truth.json, deterministic per seed.

Used by the eval suites, the benches and the tests: `simulate(out, fault, nodes, seed)`, `FAULTS`, `SIM_VERSION`.
"""

from diagagent.sim.faults import FAULTS, FaultSpec
from diagagent.sim.writer import simulate

SIM_VERSION = "8"

__all__ = ["FAULTS", "SIM_VERSION", "FaultSpec", "simulate"]
