"""The job a bundle describes (`job.yaml`): nodes, ranks, parallelism, code versions, checkpoints.

Also the rank geometry every analyzer needs: rank -> host, and each rank's TP/CP/DP/PP coordinates and groups.
"""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from diagagent.telemetry.errors import BundleError
from diagagent.telemetry.limits import ReadLimits

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
    spares: int | None = Field(None, ge=0)  # None: job.yaml does not say
    history: list[str] = Field(default_factory=list)
    rank_order: str = DEFAULT_RANK_ORDER
    _notes: list[tuple[int | None, str]] = PrivateAttr(default_factory=list)

    @field_validator("job_id", mode="before")
    @classmethod
    def _id_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("nodes", "code", "checkpoints", "history", mode="before")
    @classmethod
    def _none_as_empty(cls, v: Any) -> Any:
        return [] if v is None else v  # a key left empty ("checkpoints:" and no items) is an empty list

    @field_validator("history", mode="before")
    @classmethod
    def _ids_as_text(cls, v: Any) -> Any:
        return [str(x) if isinstance(x, int) else x for x in v] if isinstance(v, list) else v  # Slurm's job ids

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

    @property
    def load_notes(self) -> list[tuple[int | None, str]]:
        """(line, text) of what job.yaml says that does not add up and how it was read (sizes that disagree)."""
        return self._notes

    @classmethod
    def load(cls, path: Path, display_name: str = "job.yaml", limits: ReadLimits | None = None) -> Job:
        """Parse `job.yaml`; a bad value raises BundleError naming the key and its line."""
        limits = limits or ReadLimits()
        try:
            with path.open("rb") as f:
                data = f.read(limits.job_yaml_bytes + 1)
        except OSError as exc:
            raise BundleError(display_name, f"cannot read: {exc.strerror or exc}") from exc
        return cls.from_yaml(data.decode("utf-8", errors="replace"), display_name, limits)

    @classmethod
    def from_yaml(cls, text: str, display_name: str = "job.yaml", limits: ReadLimits | None = None) -> Job:
        limits = limits or ReadLimits()
        if len(text.encode("utf-8", errors="replace")) > limits.job_yaml_bytes:
            raise BundleError(display_name, f"larger than limits.job_yaml_bytes ({limits.job_yaml_bytes:,} bytes); "
                                            "a job.yaml is a few kilobytes")
        node, data = safe_yaml(text, display_name, limits)
        if not isinstance(data, dict):
            raise BundleError(display_name, "expected a mapping of job fields (job_id, nodes, ...)", 1)
        # a node with no host (a pod the scheduler never placed: 'host: null, state: Pending') holds no telemetry:
        # left out and noted, not a reason to refuse the job
        nodes = data.get("nodes")
        unplaced = [i for i, n in enumerate(nodes) if isinstance(n, dict) and n.get("host") in (None, "")] \
            if isinstance(nodes, list) else []
        if unplaced:
            data = {**data, "nodes": [n for i, n in enumerate(nodes) if i not in unplaced]}
        try:
            job = cls.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
            err = errors[0]
            loc = err["loc"]
            key = ".".join(str(p) for p in loc) or "(top level)"
            got = err.get("input")
            got_text = "" if isinstance(got, dict | list) else f", got {_short(got)}"
            more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
            raise BundleError(display_name, f"key '{key}': {err['msg']}{got_text}{more}",
                              _yaml_line(node, loc)) from exc
        unplaced_note = "names no host (a node never placed, as a pending pod): left out of the job's nodes"
        job._notes = [(_yaml_line(node, ("nodes", i)), f"nodes[{i}] {unplaced_note}") for i in unplaced]
        job._notes += _check_sizes(job, limits, display_name, node)
        return job

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


# --- safe YAML ---------------------------------------------------------------------------------------------


class _BadValue(yaml.constructor.ConstructorError):
    """A scalar YAML reads but Python cannot hold (a date like 2026-13-45, a 5,000-digit number)."""

    def __init__(self, node: yaml.Node, reason: str) -> None:
        kind = str(node.tag).rsplit(":", 1)[-1]
        kind = {"timestamp": "date-time", "int": "whole number", "float": "number"}.get(kind, kind)
        super().__init__(None, None, f"cannot read {_short(node.value)} as a {kind} ({reason})", node.start_mark)
        self.node = node


class _JobLoader(yaml.SafeLoader):
    """SafeLoader whose value errors are YAML errors that keep the node (its key and line go in the message)."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as exc:
            raise _BadValue(node, str(exc)) from exc


def safe_yaml(text: str, display: str, limits: ReadLimits) -> tuple[yaml.Node | None, Any]:
    """The composed tree and the value of a YAML document from untrusted hands. One pass over the parser's events
    first (no recursion, nothing built) refuses deep nesting and many aliases; then the tree's size with its aliases
    expanded is counted without expanding them (an alias bomb is refused before it is built)."""
    loader: _JobLoader | None = None
    try:
        loader = _JobLoader(text)
        depth, aliases = 0, 0
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limits.yaml_depth:
                    raise BundleError(display, f"nested deeper than limits.yaml_depth ({limits.yaml_depth})",
                                      event.start_mark.line + 1)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > limits.yaml_aliases:
                    raise BundleError(display, f"more than limits.yaml_aliases ({limits.yaml_aliases}) aliases "
                                               "(*name)", event.start_mark.line + 1)
        loader.dispose()
        loader = _JobLoader(text)
        node = loader.get_single_node()
        if node is None:
            return None, None
        _expanded_size(node, display, limits.yaml_values)
        return node, loader.construct_document(node)
    except _BadValue as exc:
        key = ".".join(str(p) for p in _loc_of(node, exc.node)) or "(top level)"
        raise BundleError(display, f"key '{key}': {exc.problem}", exc.node.start_mark.line + 1) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise BundleError(display, f"not valid YAML: {getattr(exc, 'problem', None) or exc}", line) from exc
    finally:
        if loader is not None:
            loader.dispose()


def _expanded_size(root: yaml.Node, display: str, cap: int) -> int:
    """How many values the tree holds once its aliases are expanded, each shared node counted once per use and
    computed once; BundleError past `cap` or on a node that contains itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in on_path:
            raise BundleError(display, "an alias that contains itself (a recursive anchor)", node.start_mark.line + 1)
        on_path.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        if total > cap:
            raise BundleError(display, f"its aliases expand to more than limits.yaml_values ({cap:,}) values "
                                       "(an alias bomb?)", node.start_mark.line + 1)
        on_path.discard(key)
        sizes[key] = total
        return total

    return size(root)


def _loc_of(root: yaml.Node, target: yaml.Node) -> tuple[int | str, ...]:
    """The keys and indexes that lead from `root` to `target` (depth-first; the tree is known to be small)."""
    todo: list[tuple[yaml.Node, tuple[int | str, ...]]] = [(root, ())]
    seen: set[int] = set()
    while todo:
        node, loc = todo.pop()
        if node is target:
            return loc
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo.extend((child, (*loc, i)) for i, child in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            todo.extend((v, (*loc, str(k.value))) for k, v in node.value)
    return ()


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width] + "..."


def _check_sizes(job: Job, limits: ReadLimits, display: str, node: yaml.Node | None) -> list[tuple[int | None, str]]:
    """Sizes within limits (BundleError naming the key and line if not); `nodes[].ranks` and `gpus_per_node`
    checked against each other: where they disagree the ranks are what ran, and a note says so."""

    def fail(loc: tuple[int | str, ...], message: str) -> BundleError:
        return BundleError(display, f"key '{'.'.join(str(p) for p in loc)}': {message}", _yaml_line(node, loc))

    if job.gpus_per_node > limits.max_gpus_per_node:
        raise fail(("gpus_per_node",), f"{job.gpus_per_node:,} is more than limits.max_gpus_per_node "
                                       f"({limits.max_gpus_per_node:,})")
    if len(job.nodes) > limits.max_nodes:
        raise fail(("nodes",), f"{len(job.nodes):,} nodes is more than limits.max_nodes ({limits.max_nodes:,})")
    if job.parallelism is not None:
        p = job.parallelism
        for dim in ("tp", "pp", "dp", "cp", "ep"):
            if getattr(p, dim) > limits.max_ranks:
                raise fail(("parallelism", dim), f"{getattr(p, dim):,} is more than limits.max_ranks "
                                                 f"({limits.max_ranks:,})")
        if p.world_size > limits.max_ranks:
            raise fail(("parallelism",), f"tp*pp*dp*cp = {p.world_size:,} is more than limits.max_ranks "
                                         f"({limits.max_ranks:,})")
    counts = [len(n.ranks) for n in job.nodes if n.ranks]
    if sum(counts) > limits.max_ranks:
        raise fail(("nodes",), f"{sum(counts):,} ranks in nodes[].ranks is more than limits.max_ranks "
                               f"({limits.max_ranks:,})")
    for i, n in enumerate(job.nodes):
        bad = next((r for r in n.ranks if not 0 <= r < limits.max_ranks), None)
        if bad is not None:
            raise fail(("nodes", i, "ranks"), f"rank {bad:,} is not in 0..{limits.max_ranks - 1:,} (limits.max_ranks)")
    if not counts and len(job.nodes) * job.gpus_per_node > limits.max_ranks:
        raise fail(("gpus_per_node",), f"{len(job.nodes):,} nodes x {job.gpus_per_node} GPUs is more than "
                                       f"limits.max_ranks ({limits.max_ranks:,})")
    notes: list[tuple[int | None, str]] = []
    if counts and (max(counts) != job.gpus_per_node or min(counts) != max(counts)):
        if "gpus_per_node" in job.model_fields_set or min(counts) != max(counts):
            per_node = f"{max(counts)}" if min(counts) == max(counts) else f"{min(counts)} to {max(counts)}"
            line = _yaml_line(node, ("gpus_per_node",)) if "gpus_per_node" in job.model_fields_set else None
            text = (f"gpus_per_node {job.gpus_per_node} disagrees with nodes[].ranks ({per_node} ranks per node); "
                    f"the ranks are what ran: read as {max(counts)} GPUs per node")
            notes.append((line, text))
        job.gpus_per_node = max(counts)  # (unset, it defaults to 8: the ranks say how many ran)
    return notes
