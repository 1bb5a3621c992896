"""FailureSchema: one distilled past failure (CORRECT-style), its outcomes, and its YAML form.

Pure pydantic and PyYAML: no chromadb, no analysis code, so anything may import it cheaply.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from diagagent.telemetry.truth import ActionKind, Category, Stage

Spatial = Literal["one_node", "one_group", "some_nodes", "all_nodes"]
Origin = Literal["seed", "learned", "imported"]
WILDCARD = "<*>"
SCHEMA_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{1,127}$")
MAX_LEARNED_TEMPLATES = 24
MAX_COUNTER_EXAMPLES = 20
MAX_RECENT_JOBS = 50


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class RecommendedAction(BaseModel):
    """What to do about it, in the Ledger's action kinds, with the reason an operator reads."""

    model_config = ConfigDict(extra="forbid")
    kind: ActionKind
    detail: str = ""
    # only where the diagnosis names the node(s) the failure is on: a node's own setup, not the job's (a config fault on
    # one node of four is drained, on every node it is the job's to fix)
    on_named_nodes: bool = False


class CounterExample(BaseModel):
    """Evidence an operator said this schema did NOT explain: retrieval scores such evidence lower."""

    model_config = ConfigDict(extra="forbid")
    job_id: str
    texts: list[str] = Field(default_factory=list)  # masked evidence lines
    rejected_by: str
    at: datetime


class Outcomes(BaseModel):
    """How the schema has fared with operators."""

    model_config = ConfigDict(extra="forbid")
    times_matched: int = 0
    times_confirmed: int = 0
    times_rejected: int = 0
    last_seen: datetime | None = None
    last_confirmed_by: str | None = None
    recent_jobs: list[str] = Field(default_factory=list)  # job ids already counted (learn is idempotent per job)


class FailureSchema(BaseModel):
    """A failure kind: how it shows in telemetry, what it is, how to tell it from look-alikes, what to do.

    `templates` are signature lines with `<*>` wildcards in the exact text the software prints; several
    phrasings per failure where versions differ. `learned_templates`, `outcomes` and `counter_examples`
    come from operators' confirmations and survive seed upgrades.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    version: int = Field(1, ge=1)
    origin: Origin = "seed"
    title: str
    category: Category
    fault: str
    root_cause: str
    templates: list[str] = Field(default_factory=list)
    symptoms: list[str] = Field(default_factory=list)
    # a cascade schema's lines usually follow another failure (watchdog timeouts, Xid 45/63, RDMA retries): it is
    # the answer only when no root schema explains the evidence
    cascade: bool = False
    spatial: Spatial = "one_node"
    # the fault lives in a node's own set-up (its driver, /dev/shm, resolver, mounts, limits), whatever its spatial:
    # where one node's logs alone show it, that node is named; where every node shows it, none is
    node_environment: bool = False
    temporal: list[Stage] = Field(default_factory=lambda: ["training"])
    discriminating_checks: list[str] = Field(default_factory=list)
    actions: list[RecommendedAction] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    learned_templates: list[str] = Field(default_factory=list)
    counter_examples: list[CounterExample] = Field(default_factory=list)
    outcomes: Outcomes = Field(default_factory=Outcomes)

    def actions_for(self, named_nodes: bool) -> list[RecommendedAction]:
        """Its actions for a diagnosis that names the nodes the failure is on (or not): `on_named_nodes` ones only then."""
        return [a for a in self.actions if named_nodes or not a.on_named_nodes]

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not SCHEMA_ID.match(value):
            raise ValueError(f"schema id {value!r}: use lowercase letters, digits, '.', '_' or '-' (2-128 chars)")
        return value

    @field_validator("templates", "learned_templates")
    @classmethod
    def _templates_have_text(cls, value: list[str]) -> list[str]:
        for template in value:
            if not template.replace(WILDCARD, "").strip():
                raise ValueError(f"template {template!r} has no literal text")
        return value

    def all_templates(self) -> list[str]:
        return self.templates + [t for t in self.learned_templates if t not in self.templates]

    def document(self) -> str:
        """The text embedded for similarity: what it is, how it shows, what it prints."""
        printed = [t.replace(WILDCARD, " ") for t in self.all_templates()]
        return "\n".join([self.title, self.root_cause, *self.symptoms, *printed])

    def authored(self) -> dict:
        """The fields an author (seed file, import) owns; the rest is operator history."""
        return self.model_dump(exclude={"learned_templates", "counter_examples", "outcomes", "origin"})


def upgraded(stored: FailureSchema, incoming: FailureSchema) -> FailureSchema:
    """`incoming`'s authored fields on top of `stored`'s history (outcomes, learned templates, counter-examples)."""
    learned = [t for t in stored.learned_templates if t not in incoming.templates]
    return incoming.model_copy(update={
        "origin": stored.origin if stored.origin != "learned" else incoming.origin,
        "learned_templates": learned,
        "counter_examples": stored.counter_examples,
        "outcomes": stored.outcomes,
    })


def read_schemata(path: Path) -> list[FailureSchema]:
    """Schemata from one YAML file: a single schema mapping, a list of them, or `{schemata: [...]}`."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if data is None:
        return []
    if isinstance(data, dict) and "schemata" in data:
        data = data["schemata"]
    items = data if isinstance(data, list) else [data]
    out = []
    for i, item in enumerate(items):
        try:
            out.append(FailureSchema.model_validate(item))
        except ValueError as exc:
            raise ValueError(f"{path}: schema #{i + 1}: {exc}") from exc
    return out


def read_schemata_dir(folder: Path) -> list[FailureSchema]:
    """Every schema in `*.yaml` / `*.yml` under `folder` (sorted, recursive); a duplicate id is an error."""
    seen: dict[str, Path] = {}
    out: list[FailureSchema] = []
    for path in sorted([*folder.rglob("*.yaml"), *folder.rglob("*.yml")]):
        for schema in read_schemata(path):
            if schema.id in seen:
                raise ValueError(f"schema id {schema.id!r} is in both {seen[schema.id]} and {path}")
            seen[schema.id] = path
            out.append(schema)
    return out


def schema_yaml(schema: FailureSchema) -> str:
    data = schema.model_dump(mode="json", exclude_defaults=False)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


def write_schemata_dir(schemata: list[FailureSchema], folder: Path) -> list[Path]:
    """One `<id>.yaml` per schema; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for schema in schemata:
        path = folder / f"{schema.id}.yaml"
        path.write_text(schema_yaml(schema), encoding="utf-8")
        paths.append(path)
    return paths
