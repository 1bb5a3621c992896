"""Learning from operators: a confirmed diagnosis makes or strengthens a schema; a rejected one is a counter-example.

Pure functions over a SchemaCache's reads; the cache writes the result in one upsert (atomic under SIGKILL).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from diagagent.contract import Diagnosis
from diagagent.schemata.matching import mask_line, template_regex
from diagagent.schemata.model import (
    MAX_COUNTER_EXAMPLES,
    MAX_LEARNED_TEMPLATES,
    MAX_RECENT_JOBS,
    CounterExample,
    FailureSchema,
    Outcomes,
    RecommendedAction,
    Spatial,
    utc_now,
)

if TYPE_CHECKING:
    from diagagent.schemata.cache import SchemaCache

MAX_NEW_TEMPLATES = 12
MAX_SYMPTOMS = 8


def evidence_texts(diagnosis: Diagnosis) -> list[str]:
    """The cause evidence (else all evidence) as text, strongest first; schema references are not evidence."""
    usable = [e for e in diagnosis.evidence if e.kind != "schema" and e.text.strip()]
    cause = [e.text for e in usable if e.role == "cause"]
    return cause or [e.text for e in usable]


def templates_from(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(t for t in (mask_line(x) for x in texts) if t))[:MAX_NEW_TEMPLATES]


def _explained(template: str, known: list[str]) -> bool:
    """True when an existing template already matches this (masked) line."""
    probe = template.replace("<*>", "x")
    return any(template_regex(k).search(probe) or k == template for k in known)


def _nearest_same_fault(cache: SchemaCache, diagnosis: Diagnosis, texts: list[str]) -> FailureSchema | None:
    candidates = cache.schemata_with_fault(diagnosis.fault or "")
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    for hit in cache.search(texts, k=20, category=diagnosis.category):
        if hit.fault == diagnosis.fault:
            return hit.failure_schema
    return max(candidates, key=lambda s: (s.outcomes.times_confirmed, s.origin == "seed", s.id))


def _spatial(diagnosis: Diagnosis) -> Spatial:
    n = len(diagnosis.faulty_nodes)
    return "one_node" if n == 1 else "some_nodes" if n > 1 else "all_nodes"


def _new_schema(diagnosis: Diagnosis, confirmed_by: str, templates: list[str]) -> FailureSchema:
    fault = diagnosis.fault or "unknown"
    digest = hashlib.sha256(f"{fault}\0{diagnosis.job_id}".encode()).hexdigest()[:8]
    slug = re.sub(r"[^a-z0-9_-]+", "-", fault.lower()).strip("-")[:80] or "fault"
    now = utc_now()
    symptoms = [e.text for e in diagnosis.evidence if e.role == "symptom" and e.text.strip()]
    return FailureSchema(
        id=f"learned-{slug}-{digest}",
        origin="learned",
        title=(diagnosis.root_cause or fault).splitlines()[0][:120],
        category=diagnosis.category or "infrastructure",
        fault=fault,
        root_cause=diagnosis.root_cause or fault,
        templates=templates,
        symptoms=list(dict.fromkeys(mask_line(s) or s for s in symptoms))[:MAX_SYMPTOMS],
        spatial=_spatial(diagnosis),
        temporal=[diagnosis.stage] if diagnosis.stage else ["training"],
        actions=[RecommendedAction(kind=p.kind, detail=p.reason) for p in diagnosis.proposals],
        references=[f"job {diagnosis.job_id}, confirmed by {confirmed_by} on {now.date().isoformat()}"],
        outcomes=Outcomes(times_matched=1, times_confirmed=1, last_seen=now, last_confirmed_by=confirmed_by,
                          recent_jobs=[diagnosis.job_id]),
    )


def confirm(cache: SchemaCache, diagnosis: Diagnosis, confirmed_by: str) -> FailureSchema:
    """The strengthened nearest schema of the same fault, or a new learned schema when the fault is new."""
    if not diagnosis.fault or not diagnosis.category:
        raise ValueError("a confirmed diagnosis must name its fault and category")
    texts = evidence_texts(diagnosis)
    templates = templates_from(texts)
    nearest = _nearest_same_fault(cache, diagnosis, texts)
    if nearest is None:
        return _new_schema(diagnosis, confirmed_by, templates)
    outcomes = nearest.outcomes.model_copy(deep=True)
    if diagnosis.job_id not in outcomes.recent_jobs:
        outcomes.times_confirmed += 1
        outcomes.times_matched += 1
        outcomes.recent_jobs = [*outcomes.recent_jobs, diagnosis.job_id][-MAX_RECENT_JOBS:]
    outcomes.last_seen = utc_now()
    outcomes.last_confirmed_by = confirmed_by
    learned = list(nearest.learned_templates)
    for template in templates:
        if not _explained(template, nearest.all_templates()) and template not in learned:
            learned.append(template)
    return nearest.model_copy(update={"outcomes": outcomes, "learned_templates": learned[-MAX_LEARNED_TEMPLATES:]})


def reject(cache: SchemaCache, diagnosis: Diagnosis, rejected_by: str) -> FailureSchema:
    """The schema the diagnosis leaned on, with this evidence recorded as a counter-example."""
    texts = evidence_texts(diagnosis)
    target = next((s for s in (cache.get(m.schema_id) for m in diagnosis.schemata) if s is not None), None)
    if target is None:
        hits = cache.search(texts, k=10, category=diagnosis.category)
        target = next((h.failure_schema for h in hits if h.fault == diagnosis.fault), None)
        target = target or (hits[0].failure_schema if hits else None)
    if target is None:
        raise LookupError(f"job {diagnosis.job_id}: no schema to record the rejection against")
    now = utc_now()
    examples = [c for c in target.counter_examples if c.job_id != diagnosis.job_id]
    outcomes = target.outcomes.model_copy(deep=True)
    if len(examples) == len(target.counter_examples):
        outcomes.times_rejected += 1
        outcomes.times_matched += 1
    outcomes.last_seen = now
    example = CounterExample(job_id=diagnosis.job_id, texts=templates_from(texts), rejected_by=rejected_by, at=now)
    return target.model_copy(update={"counter_examples": [*examples, example][-MAX_COUNTER_EXAMPLES:],
                                     "outcomes": outcomes})
