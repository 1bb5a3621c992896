"""The job a bundle describes (`job.yaml`): nodes, ranks, parallelism, code versions, checkpoints.

Also the rank geometry every analyzer needs: rank -> host, and each rank's TP/CP/DP/PP coordinates and groups.
"""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diagagent.telemetry.errors import BundleError

Framework = Literal["megatron", "deepspeed", "fsdp", "torchtitan", "nemo", "other"]
JobStatus = Literal["failed", "hung", "slow", "running", "succeeded"]
GroupKind = Literal["tp", "cp", "dp", "pp"]
DEFAULT_RANK_ORDER = "tp-cp-dp-pp"


class Parallelism(BaseModel):
    model_config = ConfigDict(extra="allow")
    tp: int = Field(1, ge=1)
    pp: int = Field(1, ge=1)
    dp: int = Field(1, ge=1)
    cp: int = Field(1, ge=1)
    ep: int = Field(1, ge=1)

    @property
    def world_size(self) -> int:
        return self.tp * self.pp * self.dp * self.cp


class NodeSpec(BaseModel):
    model_config = ConfigDict(extra="allow")
    host: str
    ip: str | None = None
    ranks: list[int] = Field(default_factory=list)


class CodeVersion(BaseModel):
    model_config = ConfigDict(extra="allow")
    commit: str
    at: datetime | None = None
    message: str = ""

    @field_validator("commit", mode="before")
    @classmethod
    def _commit_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v


class Checkpoint(BaseModel):
    model_config = ConfigDict(extra="allow")
    step: int
    at: datetime | None = None
    path: str | None = None
    valid: bool = True


class RankCoord(BaseModel):
    """A rank's place in the parallel layout."""

    rank: int
    host: str | None
    tp: int
    cp: int
    dp: int
    pp: int


class Job(BaseModel):
    """`job.yaml`. Unknown keys are kept and ignored."""

    model_config = ConfigDict(extra="allow")

    job_id: str
    name: str | None = None
    framework: Framework = "other"
    status: JobStatus = "failed"
    started_at: datetime | None = None
    ended_at: datetime | None = None
    exit_code: int | None = None
    gpus_per_node: int = Field(8, ge=1)
    parallelism: Parallelism | None = None
    nodes: list[NodeSpec] = Field(default_factory=list)
    code: list[CodeVersion] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    spares: int = Field(0, ge=0)
    history: list[str] = Field(default_factory=list)
    rank_order: str = DEFAULT_RANK_ORDER

    @field_validator("job_id", mode="before")
    @classmethod
    def _id_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("framework", mode="before")
    @classmethod
    def _known_framework(cls, v: Any) -> Any:
        known = {"megatron", "deepspeed", "fsdp", "torchtitan", "nemo", "other"}
        return v.lower() if isinstance(v, str) and v.lower() in known else ("other" if isinstance(v, str) else v)

    @field_validator("rank_order")
    @classmethod
    def _valid_order(cls, v: str) -> str:
        parts = v.lower().replace("_", "-").split("-")
        if sorted(p for p in parts if p != "ep") != ["cp", "dp", "pp", "tp"]:
            raise ValueError(f"rank_order must name tp, cp, dp and pp once each, fastest first; got {v!r}")
        return "-".join(p for p in parts if p != "ep")

    # --- loading -------------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: Path, display_name: str = "job.yaml") -> Job:
        """Parse `job.yaml`; a bad value raises BundleError naming the key and its line."""
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            raise BundleError(display_name, f"cannot read: {exc.strerror or exc}") from exc
        return cls.from_yaml(text, display_name)

    @classmethod
    def from_yaml(cls, text: str, display_name: str = "job.yaml") -> Job:
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise BundleError(display_name, f"not valid YAML: {getattr(exc, 'problem', exc)}", line) from exc
        if not isinstance(data, dict):
            raise BundleError(display_name, "expected a mapping of job fields (job_id, nodes, ...)", 1)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = err["loc"]
            key = ".".join(str(p) for p in loc) or "(top level)"
            got = err.get("input")
            got_text = "" if isinstance(got, dict) else f", got {got!r}"
            raise BundleError(display_name, f"key '{key}': {err['msg']}{got_text}", _yaml_line(node, loc)) from exc

    # --- rank geometry -------------------------------------------------------------------------------

    @property
    def world_size(self) -> int:
        if self.parallelism is not None:
            return self.parallelism.world_size
        return len(self.rank_to_host) or len(self.nodes) * self.gpus_per_node

    @property
    def hosts(self) -> list[str]:
        return [n.host for n in self.nodes]

    @cached_property
    def rank_to_host(self) -> dict[int, str]:
        """Rank -> host from `nodes[].ranks`; where ranks are missing, in order, `gpus_per_node` per node."""
        mapping: dict[int, str] = {}
        if any(n.ranks for n in self.nodes):
            for n in self.nodes:
                for r in n.ranks:
                    mapping[r] = n.host
        else:
            for i, n in enumerate(self.nodes):
                for local in range(self.gpus_per_node):
                    mapping[i * self.gpus_per_node + local] = n.host
        return mapping

    @cached_property
    def host_to_ranks(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {n.host: [] for n in self.nodes}
        for rank, host in sorted(self.rank_to_host.items()):
            out.setdefault(host, []).append(rank)
        return out

    @cached_property
    def ip_to_host(self) -> dict[str, str]:
        return {n.ip: n.host for n in self.nodes if n.ip}

    def host_of(self, rank: int) -> str | None:
        return self.rank_to_host.get(rank)

    def local_rank_to_rank(self, host: str, local_rank: int) -> int | None:
        ranks = self.host_to_ranks.get(host, [])
        return ranks[local_rank] if 0 <= local_rank < len(ranks) else None

    def _sizes(self) -> dict[str, int]:
        p = self.parallelism or Parallelism(dp=max(self.world_size, 1))
        return {"tp": p.tp, "cp": p.cp, "dp": p.dp, "pp": p.pp}

    def coords(self, rank: int) -> RankCoord:
        """TP/CP/DP/PP coordinates of a rank under `rank_order` (Megatron's default: tp fastest, then cp, dp, pp)."""
        sizes = self._sizes()
        rest = rank
        place: dict[str, int] = {}
        for dim in self.rank_order.split("-"):
            place[dim] = rest % sizes[dim]
            rest //= sizes[dim]
        return RankCoord(rank=rank, host=self.host_of(rank), **place)

    def group_of(self, kind: GroupKind, rank: int) -> list[int]:
        """The ranks in the same `kind` group as `rank`: they differ from it only in the `kind` coordinate."""
        sizes = self._sizes()
        order = self.rank_order.split("-")
        stride = 1
        for dim in order:
            if dim == kind:
                break
            stride *= sizes[dim]
        mine = self.coords(rank).model_dump()[kind]
        base = rank - mine * stride
        return [base + i * stride for i in range(sizes[kind])]

    def group_id(self, kind: GroupKind, rank: int) -> int:
        """A stable id of the `kind` group a rank belongs to (its smallest rank)."""
        return min(self.group_of(kind, rank))

    def hosts_of(self, ranks: list[int]) -> list[str]:
        seen: dict[str, None] = {}
        for r in ranks:
            h = self.host_of(r)
            if h is not None:
                seen.setdefault(h, None)
        return list(seen)


def _yaml_line(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the value at `loc` in a composed YAML tree (the deepest part that exists)."""
    line = None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if k.value == str(part):
                    nxt, line = v, k.start_mark.line + 1
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
    if node is not None:
        line = node.start_mark.line + 1
    return line
