"""SchemaCache: failure schemata in chromadb (embedded under the state dir, or a Chroma server), with retrieval.

Retrieval fuses embedding similarity (chroma's vector query) with template overlap against the evidence lines. What
goes to a shared (non-loopback) Chroma server is redacted first: site hosts, IPs, users, paths and secrets never land.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, Field

from diagagent.config import Settings
from diagagent.contract import SchemaMatch
from diagagent.schemata.matching import TemplateIndex, mask_line
from diagagent.schemata.model import FailureSchema, read_schemata_dir, upgraded, write_schemata_dir
from diagagent.telemetry.redact import Redactor

if TYPE_CHECKING:
    from diagagent.contract import Diagnosis

SEED_FINGERPRINT_KEY = "seed_fingerprint"
FORMAT_VERSION = 1
# score = overlap + SIMILARITY_WEIGHT * similarity * (1 - overlap) + outcome prior, less counter-examples: the
# templates explain what they can, the embedding speaks for the evidence they leave unexplained.
SIMILARITY_WEIGHT = 0.5
Fusion = Literal["both", "similarity", "templates"]
PRIOR_WEIGHT = 0.03
COUNTER_EXAMPLE_PENALTY = 0.5
CASCADE_DEMOTION = 0.5  # a cascade schema's score is scaled by this when a root schema explains the evidence well
ROOT_EXPLAINS = 0.5
CANDIDATES = 30  # per retrieval channel (vector top-n, overlap top-n)
RECHECK_S = 1.0  # how often search() asks the store whether another client changed it
MAX_QUERY_CHARS = 8000


class MatchedLine(BaseModel):
    text: str
    template: str
    score: float


class SchemaHit(BaseModel):
    """One retrieved schema with its scores; `to_match()` gives the Diagnosis's SchemaMatch."""

    failure_schema: FailureSchema
    score: float
    similarity: float
    template_overlap: float
    matched_lines: list[MatchedLine] = Field(default_factory=list)  # evidence lines its templates explain

    @property
    def id(self) -> str:
        return self.failure_schema.id

    @property
    def fault(self) -> str:
        return self.failure_schema.fault

    def to_match(self) -> SchemaMatch:
        s = self.failure_schema
        return SchemaMatch(schema_id=s.id, title=s.title, fault=s.fault, category=s.category, score=self.score,
                           similarity=self.similarity, template_overlap=self.template_overlap)


class ImportReport(BaseModel):
    added: list[str] = Field(default_factory=list)
    upgraded: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # same or older version already stored


def chroma_client(settings: Settings) -> Any:
    """`HttpClient` when `chroma_url` is set, else a `PersistentClient` under the state dir; telemetry off."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        url = urlsplit(settings.chroma_url)
        secure = url.scheme == "https"
        return chromadb.HttpClient(host=url.hostname or "localhost", port=url.port or (443 if secure else 8000),
                                   ssl=secure, settings=chroma_settings)
    path = settings.chroma_dir()
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


def seed_fingerprint(folder: Path) -> str:
    digest = hashlib.sha256(f"format {FORMAT_VERSION}\n".encode())
    if folder.is_dir():
        for path in sorted([*folder.rglob("*.yaml"), *folder.rglob("*.yml")]):
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _record(schema: FailureSchema) -> tuple[str, str, dict[str, Any]]:
    meta = {"category": schema.category, "fault": schema.fault, "origin": schema.origin, "version": schema.version,
            "schema": schema.model_dump_json()}
    return schema.id, schema.document(), meta


def redacted_schema(schema: FailureSchema, redactor: Redactor) -> FailureSchema:
    """The schema with its free text (title, root cause, templates, symptoms, checks, references, action details,
    counter-examples, who confirmed it) redacted; ids, fault, category and numbers stay."""
    r = redactor.redact
    outcomes = schema.outcomes.model_copy(update={
        "last_confirmed_by": r(schema.outcomes.last_confirmed_by) if schema.outcomes.last_confirmed_by else None})
    return schema.model_copy(update={
        "title": r(schema.title), "root_cause": r(schema.root_cause), "templates": [r(t) for t in schema.templates],
        "symptoms": [r(t) for t in schema.symptoms], "learned_templates": [r(t) for t in schema.learned_templates],
        "discriminating_checks": [r(t) for t in schema.discriminating_checks],
        "references": [r(t) for t in schema.references], "outcomes": outcomes,
        "actions": [a.model_copy(update={"detail": r(a.detail)}) for a in schema.actions],
        "counter_examples": [c.model_copy(update={"texts": [r(t) for t in c.texts], "rejected_by": r(c.rejected_by)})
                             for c in schema.counter_examples]})


def diagnosis_redactor(diagnosis: Diagnosis, *people: str) -> Redactor:
    """A Redactor that knows the hosts a diagnosis names and the people who judged it."""
    hosts = [n.host for n in diagnosis.faulty_nodes] + [e.host for e in diagnosis.evidence if e.host]
    hosts += [h for p in diagnosis.proposals for h in p.nodes]
    return Redactor(hosts=dict.fromkeys(hosts), users=[p for p in people if p])


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class SchemaCache:
    """The failure-schema cache. Open with `SchemaCache.open(settings)`; seeds load and upgrade on first use."""

    def __init__(self, client: Any, collection: Any, embedder: Any, settings: Settings):
        self.client = client
        self.collection = collection
        self.embedder = embedder
        self.settings = settings
        self.batch_size = int(client.get_max_batch_size())
        self._mirror: dict[str, FailureSchema] | None = None
        self._vectors: dict[str, np.ndarray] = {}
        self._index: TemplateIndex | None = None
        self._checked_at = 0.0
        self.fusion: Fusion = "both"  # "similarity" / "templates": one signal alone, for measuring each

    # ---- opening -------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, settings: Settings | None = None, *, load_seeds: bool = True) -> SchemaCache:
        from diagagent.schemata.embeddings import collection_name, embedding_function, register_all

        settings = settings or Settings.load()
        register_all()
        embedder = embedding_function(settings)
        client = chroma_client(settings)
        name = collection_name(embedder)
        existing = {c.name if hasattr(c, "name") else str(c) for c in client.list_collections()}
        collection = client.get_or_create_collection(name, embedding_function=embedder,
                                                     configuration={"hnsw": {"space": "cosine"}})
        cache = cls(client, collection, embedder, settings)
        if name not in existing:
            cache._migrate_from(sorted(n for n in existing if n.startswith("schemata_")))
        if load_seeds:
            cache.sync_seeds(settings.content_dir("knowledge") / "schemata")
        return cache

    def _migrate_from(self, names: list[str]) -> None:
        """A new embedding starts with the schemata (learned ones included) of the fullest other collection."""
        sources = [self.client.get_collection(n) for n in names]
        sources = [c for c in sources if c.count()]
        if not sources:
            return
        source = max(sources, key=lambda c: c.count())
        self._upsert(list(self._read_all(source)))

    def sync_seeds(self, folder: Path) -> list[str]:
        """Add new seed schemata and upgrade changed ones, keeping outcomes and learned parts; returns ids written.

        A stored schema is replaced only by a higher version, or by an edited seed of the same version when
        the stored one came from the seeds too: learned and imported schemata are never clobbered. A seed taken out
        of the folder is retired from the store, unless an operator confirmed it.
        """
        fingerprint = seed_fingerprint(folder)
        meta = dict(self.collection.metadata or {})
        if meta.get(SEED_FINGERPRINT_KEY) == fingerprint:
            return []
        seeds = read_schemata_dir(folder) if folder.is_dir() else []
        stored = self._get_many([s.id for s in seeds])
        writes: list[FailureSchema] = []
        for seed in seeds:
            old = stored.get(seed.id)
            if old is None:
                writes.append(seed)
            elif seed.version > old.version or (
                    seed.version == old.version and old.origin == "seed" and old.authored() != seed.authored()):
                writes.append(upgraded(old, seed))
        self._upsert(writes)
        ids = {s.id for s in seeds}
        retired = [s.id for s in self._read_all(self.collection) if s.origin == "seed" and s.id not in ids
                   and not s.outcomes.times_confirmed] if seeds else []
        if retired:
            self.collection.delete(ids=retired)
            self._mirror, self._index = None, None
        meta[SEED_FINGERPRINT_KEY] = fingerprint
        self.collection.modify(metadata=meta)
        return [s.id for s in writes]

    # ---- reading -------------------------------------------------------------------------------------------

    def _read_all(self, collection: Any, vectors: dict[str, np.ndarray] | None = None) -> Iterator[FailureSchema]:
        """Every schema in `collection`; with `vectors`, their stored embeddings are collected into it too."""
        total = collection.count()
        include = ["metadatas", "embeddings"] if vectors is not None else ["metadatas"]
        for offset in range(0, total, self.batch_size):
            got = collection.get(include=include, limit=self.batch_size, offset=offset)
            if vectors is not None:
                vectors.update(zip(got["ids"], np.asarray(got["embeddings"], dtype=np.float32)))
            for meta in got["metadatas"]:
                yield FailureSchema.model_validate_json(meta["schema"])

    def _get_many(self, ids: list[str]) -> dict[str, FailureSchema]:
        out: dict[str, FailureSchema] = {}
        for chunk in _chunks(ids, self.batch_size):
            got = self.collection.get(ids=chunk, include=["metadatas"])
            for sid, meta in zip(got["ids"], got["metadatas"]):
                out[sid] = FailureSchema.model_validate_json(meta["schema"])
        return out

    def _schemata(self) -> dict[str, FailureSchema]:
        """The in-process mirror of the collection, with its vectors; reloaded when another client changed its size
        (checked at most every RECHECK_S seconds). The store stays the truth: get() and learn() read it."""
        now = time.monotonic()
        if self._mirror is not None and now - self._checked_at < RECHECK_S:
            return self._mirror
        self._checked_at = now
        if self._mirror is None or len(self._mirror) != self.collection.count():
            self._vectors = {}
            self._mirror = {s.id: s for s in self._read_all(self.collection, self._vectors)}
            self._index = None
        return self._mirror

    def _template_index(self, schemata: dict[str, FailureSchema]) -> TemplateIndex:
        if self._index is None:
            self._index = TemplateIndex(list(schemata.values()))
        return self._index

    def get(self, schema_id: str) -> FailureSchema | None:
        return self._get_many([schema_id]).get(schema_id)

    def list(self, category: str | None = None) -> list[FailureSchema]:
        schemata = sorted(self._schemata().values(), key=lambda s: s.id)
        return [s for s in schemata if category is None or s.category == category]

    def count(self) -> int:
        return int(self.collection.count())

    # ---- writing -------------------------------------------------------------------------------------------

    @property
    def shared(self) -> bool:
        """True when the store is a Chroma server whose contents are redacted (DIAGAGENT_REDACT, auto: non-loopback)."""
        return bool(self.settings.chroma_url) and self.settings.redact_for(self.settings.chroma_url)

    def _upsert(self, schemata: list[FailureSchema], redactor: Redactor | None = None) -> list[FailureSchema]:
        """Write `schemata` (redacted first on a shared server); returns what was stored."""
        if self.shared:
            schemata = [redacted_schema(s, redactor or Redactor()) for s in schemata]
        for chunk in _chunks(schemata, self.batch_size):
            ids, docs, metas = zip(*(_record(s) for s in chunk))
            self.collection.upsert(ids=list(ids), documents=list(docs), metadatas=list(metas))
        if self._mirror is not None:
            self._mirror.update({s.id: s for s in schemata})
            for chunk in _chunks([s.id for s in schemata], self.batch_size):
                got = self.collection.get(ids=chunk, include=["embeddings"])
                self._vectors.update(zip(got["ids"], np.asarray(got["embeddings"], dtype=np.float32)))
        self._index = None
        return schemata

    def add(self, schema: FailureSchema, *, replace: bool = False) -> FailureSchema:
        """Store a new schema; an existing id is an error unless `replace` (which keeps its history)."""
        old = self.get(schema.id)
        if old is not None and not replace:
            raise ValueError(f"schema {schema.id!r} exists (version {old.version}); use replace to overwrite it")
        stored = upgraded(old, schema) if old is not None else schema
        return self._upsert([stored])[0]

    def add_many(self, schemata: Iterable[FailureSchema]) -> None:
        """Bulk upsert, batched to the client's limit (benches, imports of new ids)."""
        self._upsert(list(schemata))

    def import_dir(self, folder: Path) -> ImportReport:
        """Schemata from YAML files: new ids are added, higher versions upgrade (keeping history), others skip."""
        report = ImportReport()
        incoming = read_schemata_dir(folder)
        stored = self._get_many([s.id for s in incoming])
        writes = []
        for schema in incoming:
            old = stored.get(schema.id)
            if old is None:
                writes.append(schema.model_copy(update={"origin": "imported"} if schema.origin == "seed" else {}))
                report.added.append(schema.id)
            elif schema.version > old.version:
                writes.append(upgraded(old, schema))
                report.upgraded.append(schema.id)
            else:
                report.skipped.append(schema.id)
        self._upsert(writes)
        return report

    def export_dir(self, folder: Path) -> list[Path]:
        return write_schemata_dir(self.list(), folder)

    # ---- retrieval -----------------------------------------------------------------------------------------

    def search(self, texts: list[str], k: int = 5, *, category: str | None = None) -> list[SchemaHit]:
        """The k schemata that best explain the evidence (log lines, templates, probe lines, symptom phrases)."""
        lines = [t.strip() for t in texts if t and t.strip()]
        if not lines or k <= 0:
            return []
        schemata = self._schemata()
        if not schemata:
            return []
        index = self._template_index(schemata)
        overlap = index.overlap(lines)
        position = index.position
        query_vec = np.asarray(self.embedder(["\n".join(lines)[:MAX_QUERY_CHARS]])[0], dtype=np.float32)
        similarity = self._vector_candidates(query_vec, category, len(schemata))
        per_schema = overlap.per_schema
        top = np.argpartition(-per_schema, CANDIDATES)[:CANDIDATES] if len(per_schema) > CANDIDATES else \
            np.arange(len(per_schema))
        by_overlap = [index.ids[i] for i in top if per_schema[i] > 0]
        candidates = [sid for sid in dict.fromkeys([*similarity, *by_overlap])
                      if category is None or schemata[sid].category == category]
        similarity.update({sid: float(self._vectors[sid] @ query_vec) for sid in candidates
                           if sid not in similarity and sid in self._vectors})
        masked: set[str] | None = None
        root_overlap = max((float(per_schema[position[sid]]) for sid in candidates if not schemata[sid].cascade),
                           default=0.0) if self.fusion != "similarity" else 0.0
        scored = []
        for sid in candidates:
            schema = schemata[sid]
            ov = float(per_schema[position[sid]]) if self.fusion != "similarity" else 0.0
            sim = max(0.0, similarity.get(sid, 0.0)) if self.fusion != "templates" else 0.0
            score = ov + SIMILARITY_WEIGHT * sim * (1.0 - ov) + _prior(schema)
            if schema.cascade and overlap.root_explained and root_overlap >= ROOT_EXPLAINS:
                score *= CASCADE_DEMOTION
            if schema.counter_examples:
                masked = masked if masked is not None else {mask_line(ln) for ln in lines} - {""}
                score *= 1.0 - COUNTER_EXAMPLE_PENALTY * _counter_overlap(schema, masked)
            scored.append((score, sim, ov, sid))
        scored.sort(key=lambda x: (-x[0], x[3]))
        hits = []
        for score, sim, ov, sid in scored[:k]:
            matched = [MatchedLine(text=lines[m.line], template=m.template, score=round(m.score, 4))
                       for m in overlap.matches(position[sid])[:5]]
            hits.append(SchemaHit(failure_schema=schemata[sid], score=round(score, 4),
                                  similarity=round(sim, 4), template_overlap=round(ov, 4), matched_lines=matched))
        return hits

    def _vector_candidates(self, query_vec: np.ndarray, category: str | None, count: int) -> dict[str, float]:
        n = min(CANDIDATES, count)
        if n == 0:
            return {}
        res = self.collection.query(query_embeddings=[query_vec.tolist()], n_results=n,
                                    where={"category": category} if category else None, include=["distances"])
        return {sid: 1.0 - float(d) for sid, d in zip(res["ids"][0], res["distances"][0])}

    # ---- learning ------------------------------------------------------------------------------------------

    def learn(self, diagnosis: Diagnosis, confirmed_by: str,
              outcome: Literal["confirmed", "rejected"]) -> FailureSchema:
        """An operator's verdict on a diagnosis: confirmed -> a new schema or a stronger nearest one of the same
        fault (no duplicates); rejected -> a counter-example on the schema the diagnosis leaned on."""
        from diagagent.schemata.learn import confirm, reject

        if outcome == "confirmed":
            schema = confirm(self, diagnosis, confirmed_by)
        elif outcome == "rejected":
            schema = reject(self, diagnosis, confirmed_by)
        else:
            raise ValueError(f"outcome must be 'confirmed' or 'rejected', not {outcome!r}")
        return self._upsert([schema], diagnosis_redactor(diagnosis, confirmed_by))[0]

    def schemata_with_fault(self, fault: str) -> list[FailureSchema]:
        return [s for s in self._schemata().values() if s.fault == fault]


def _prior(schema: FailureSchema) -> float:
    o = schema.outcomes
    return PRIOR_WEIGHT * float(np.tanh(o.times_confirmed / 5.0) - np.tanh(o.times_rejected / 5.0))


def _counter_overlap(schema: FailureSchema, masked: set[str]) -> float:
    """How closely the evidence repeats evidence an operator rejected for this schema (Jaccard, 0..1)."""
    best = 0.0
    for example in schema.counter_examples:
        lines = set(example.texts)
        if lines and masked:
            best = max(best, len(lines & masked) / len(lines | masked))
    return best


def fingerprint_json(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]
