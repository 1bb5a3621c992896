"""Budgets for untrusted input: how much of a bundle a reader may take (bytes, lines, decompression, tarballs, job.yaml).
Defaults are generous (a real 12 GB job is read whole); each budget hit is recorded as a `ReadIssue` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

GiB = 1 << 30
MiB = 1 << 20


class ReadLimits(BaseModel):
    """What one bundle may cost to read. `Settings.limits` holds these; set them with `DIAGAGENT_LIMITS` (JSON)."""

    model_config = ConfigDict(extra="forbid")

    file_bytes: int = Field(32 * GiB, ge=1, description="decompressed bytes read from one file")
    file_lines: int = Field(500_000_000, ge=1, description="lines read from one log file")
    bundle_bytes: int = Field(256 * GiB, ge=1, description="decompressed bytes in one pass over a bundle's logs")
    bundle_lines: int = Field(4_000_000_000, ge=1, description="lines in one pass over a bundle's logs")
    max_ratio: float = Field(1000.0, gt=1, description="decompressed / compressed bytes of one file, checked once "
                                                       "it has given `ratio_after_bytes`")
    ratio_after_bytes: int = Field(64 * MiB, ge=0)
    tar_bytes: int = Field(64 * GiB, ge=1, description="bytes extracted from a bundle tarball")
    tar_members: int = Field(1_000_000, ge=1, description="members read from a bundle tarball")
    job_yaml_bytes: int = Field(4 * MiB, ge=1)
    yaml_depth: int = Field(64, ge=2, description="nesting of job.yaml's collections")
    yaml_aliases: int = Field(256, ge=0, description="aliases (*name) in job.yaml")
    yaml_values: int = Field(1_000_000, ge=1, description="values in job.yaml once its aliases are expanded")
    max_gpus_per_node: int = Field(1024, ge=1)
    max_nodes: int = Field(131_072, ge=1)
    max_ranks: int = Field(1 << 21, ge=1, description="world size, and the largest rank number + 1")


@dataclass(slots=True)
class ReadBudget:
    """What is left of the per-bundle budgets in one pass over a bundle (a fresh one per pass)."""

    limits: ReadLimits = field(default_factory=ReadLimits)
    bytes_left: int = -1
    lines_left: int = -1

    def __post_init__(self) -> None:
        if self.bytes_left < 0:
            self.bytes_left = self.limits.bundle_bytes
        if self.lines_left < 0:
            self.lines_left = self.limits.bundle_lines

    def share(self, parts: int) -> list[ReadBudget]:
        """The budget left, split evenly among `parts` readers (worker processes)."""
        parts = max(1, parts)
        return [ReadBudget(self.limits, max(self.bytes_left // parts, 0), max(self.lines_left // parts, 0))
                for _ in range(parts)]
