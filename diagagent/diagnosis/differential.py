"""The fault as a differential diagnosis: signatures (knowledge/signatures.yaml) matched on the bundle's lines, each
weighed by how strongly it proves its fault, with the schema match as one input more; "not sure" when none wins.

A decision names one fault only when its evidence outweighs the runner-up's; else it names the two best candidates
and the check that tells them apart. Its confidence is the accuracy its tier had on the dev split.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from diagagent.analysis.logparse import split_header
from diagagent.contract import Candidate, Category, Stage
from diagagent.telemetry.job import JobStatus

Strength = Literal["decisive", "strong", "weak"]
Tier = Literal["decisive", "strong", "weak", "schema", "unsure", "none"]
ROLE_FACTOR = {"cause": 1.0, "context": 0.8, "symptom": 0.6}  # a cascade line proves its fault less
DEVICE_STATE_FACTOR = 1.5  # a probe's or the kernel's word on the device outweighs an application's (capped at 1)
# a Python exception line ("RuntimeError: ..."), narrower than logparse's exception lines: not libstdc++'s "what():"
_PYTHON_EXCEPTION = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): ")
SCHEMA_WEIGHT = 0.7  # the best schema adds this much, times its score squared, to its fault: a close match of the
# exact text (0.9 and more) weighs about as much as a strong signature, a loose one (0.5) little
MAX_CANDIDATES = 3
UNSUPPORTED = 0.5  # ... halved when no line signature supports its fault and another fault has a strong one
CATEGORY_SHARE = 0.6  # an undecided fault's category is named when this share of the evidence points to it


class Signature(BaseModel):
    """A line pattern that proves (decisive), points to (strong) or hints at (weak) a fault."""

    model_config = ConfigDict(extra="forbid")
    id: str
    fault: str
    strength: Strength
    match: str  # a regular expression, searched in the line (case-sensitive unless it says (?i))
    where: Literal["logs", "probes", "findings", "any"] = "any"
    seen_in: list[str]  # the real text it was written for: "dev:<case id>" or "doc: <the software's output>"
    in_stage: dict[Stage, str] = Field(default_factory=dict)  # another fault when it happens in that stage
    in_status: list[JobStatus] = Field(default_factory=list)  # the job statuses it is a sign in (none: any)
    last_resort: bool = False  # a sign only where no other signature has one and the analyzers took its line for a cause
    device: bool = False  # the line is the device's own state (an nvidia-smi field) wherever it was pasted
    note: str = ""

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.match)


class SignatureBook(BaseModel):
    """knowledge/signatures.yaml: the signatures, the weight of each strength, and each tier's confidence."""

    model_config = ConfigDict(extra="forbid")
    version: int = 1
    weights: dict[Strength, float]
    confidence: dict[Tier, float]
    decide_at: float  # a fault is named when its score reaches this ...
    margin: float  # ... and leads the runner-up's by this much
    schema_alone_at: float  # with no signature hit at all, the best schema names its fault at this score or more
    schema_at_least: float = 0.0  # a schema matched below this score is no evidence of its fault (nor its category)
    # a fault that stands only while nothing explains it -> the faults that do (a kill of unknown cause, once the host's
    # OOM killer or a disk eviction is in the evidence, is theirs)
    explained_by: dict[str, list[str]] = Field(default_factory=dict)
    no_category: list[str] = Field(default_factory=list)  # faults named without their schema's category: what
    # happened (a collective timed out) says nothing of whose fault it was
    framework_packages: list[str] = Field(default_factory=list)  # folders that hold a framework's own code
    signatures: list[Signature]

    @classmethod
    def load(cls, path: Path) -> SignatureBook:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            return cls.model_validate(data)
        except (OSError, yaml.YAMLError, ValueError) as exc:
            raise ValueError(f"{path}: not a valid signature book (weights, confidence, signatures): {exc}") from exc

    def framework_of(self, frame: str) -> str | None:
        """The framework whose own code a traceback frame is in (a folder of `framework_packages` on its path)."""
        m = re.search(r"[/\\\"](" + "|".join(map(re.escape, self.framework_packages)) + r")[/\\]", frame) \
            if self.framework_packages else None
        return m.group(1) if m else None

    def matches(self, text: str, where: str) -> list[Signature]:
        return [s for s in self.signatures if s.where in (where, "any") and s.pattern.search(text)]


class Line(BaseModel):
    """A line the differential weighs: where it is, what it says, and the role the analyzers gave it."""

    file: str | None
    line: int | None
    host: str | None
    rank: int | None = None
    text: str
    role: Literal["cause", "symptom", "context"]
    where: Literal["logs", "probes", "findings"]  # findings: what stacks and flows found, in words
    device_state: bool = False  # a probe's or the kernel's line about the device (dmesg, ibstat, nvidia-smi)
    own_setup: bool = False  # a line its node alone prints so (the others alike): how that node is set up


class Hit(BaseModel):
    signature: Signature
    fault: str  # the signature's, or the one it names for the stage the failure happened in
    line: Line
    weight: float


class Decision(BaseModel):
    fault: str | None
    category: Category | None
    confidence: float
    tier: Tier
    candidates: list[Candidate] = Field(default_factory=list)
    hits: list[Hit] = Field(default_factory=list)  # the signature hits behind the decision, strongest first
    check: str | None = None  # what tells the two best candidates apart, when undecided


def match_lines(book: SignatureBook, lines: list[Line], stage: Stage | None = None,
                status: JobStatus | None = None) -> list[Hit]:
    """Every signature hit, strongest first (then in the order the lines came); a signature that names the job
    statuses it counts in counts only in those (where the status is known)."""
    def weight(s: Signature, ln: Line) -> float:
        w = book.weights[s.strength] * ROLE_FACTOR[ln.role]
        return min(w * DEVICE_STATE_FACTOR, book.weights["decisive"]) if ln.device_state or s.device else w

    hits = [Hit(signature=s, fault=s.in_stage.get(stage, s.fault) if stage else s.fault,
                line=ln.model_copy(update={"device_state": True}) if s.device else ln, weight=weight(s, ln))
            for ln in lines for s in book.matches(ln.text, ln.where)
            if status is None or not s.in_status or status in s.in_status]
    # a last resort is what is left to say when nothing else is known (a launcher killing the other ranks, a segfault)
    hits = [h for h in hits if not h.signature.last_resort] or [h for h in hits if h.line.role == "cause"]
    # equal weights keep the lines' order (the analyzers' ranking) but within one file go by line: where a repeated
    # sign began, before the same sign fused onto a later progress bar (dev:transformers-14531); a Python exception
    # first, the line its traceback ends with, before another line that says as much (NCCL's 'Cuda failure' WARN);
    # not libstdc++'s 'what():', which repeats the error line logged before it (dev:graphgpt-44); the statement that
    # raised it last, code quoted by an interleaved paste (dev:pytorch-116080)
    files = {f: i for i, f in reversed(list(enumerate(h.line.file for h in hits)))}

    def order(h: Hit) -> tuple:
        message = split_header(h.line.text).message
        return (-h.weight, files[h.line.file], message.startswith("raise "), not _PYTHON_EXCEPTION.match(message),
                h.line.line or 0)
    return sorted(hits, key=order)


def decide(book: SignatureBook, hits: list[Hit], categories: dict[str, Category],
           schema: tuple[str, float] | None, checks: dict[str, str]) -> Decision:
    """Weigh each fault's hits (its best hit, plus a little for each other signature of it; a fault another one in the
    evidence explains is dropped, `explained_by`) and the best schema's (fault, score). Name the one fault with proof,
    else the leader when it clears `decide_at` by `margin`; else stay unsure, with the candidates and the check that
    tells them apart."""
    if schema is not None and schema[1] < book.schema_at_least:
        schema = None
    category_of: dict[str, Category | None] = {f: None if f in book.no_category else c for f, c in categories.items()}
    # (a hint explains nothing away: a peer's 'Connection reset by peer' is no bootstrap failure that NCCL's internal
    # error stood for, blind incident raytrain-workerfiles-nccl-internal-2node)
    present = {h.fault for h in hits if h.signature.strength != "weak"}
    hits = [h for h in hits if not present & set(book.explained_by.get(h.fault, []))]
    if schema is not None and present & set(book.explained_by.get(schema[0], [])):
        schema = None  # nor does its schema count for it (NCCL's internal error, its last WARN a bootstrap failure)
    scores: dict[str, float] = {}
    why: dict[str, list[str]] = {}
    for fault in dict.fromkeys(h.fault for h in hits):
        mine = [h for h in hits if h.fault == fault]
        kinds = list(dict.fromkeys(h.signature.id for h in mine))
        scores[fault] = mine[0].weight + 0.1 * min(len(kinds) - 1, 3)
        why[fault] = [f"{h.signature.id} ({h.signature.strength})" for h in mine[:3]]
    if schema is not None and schema[0] in categories:
        fault, score = schema
        # a schema that matched the text weighs less against a line signature of another fault when no line of its
        # own fault has one (a FileNotFoundError in a save matches the checkpoint-load schema word for word,
        # dev:axolotl-948)
        alone = fault not in scores and any(h.weight >= book.weights["strong"] * ROLE_FACTOR["context"] for h in hits)
        scores[fault] = scores.get(fault, 0.0) + SCHEMA_WEIGHT * min(score, 1.0) ** 2 * (UNSUPPORTED if alone else 1.0)
        why.setdefault(fault, []).append(f"best schema match ({score:.2f})")
    if not hits and schema is not None and schema[0] in categories and schema[1] >= book.schema_alone_at:
        fault = schema[0]  # nothing in the lines; structural findings (stacks, flows, probes) matched a schema
        return Decision(fault=fault, category=category_of[fault], confidence=book.confidence["schema"], tier="schema",
                        candidates=[Candidate(fault=fault, category=category_of[fault], score=round(schema[1], 3),
                                              why=f"best schema match ({schema[1]:.2f}); no line signature")])
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    candidates = [Candidate(fault=f, category=category_of.get(f), score=round(s, 3), why="; ".join(why[f]))
                  for f, s in ranked[:MAX_CANDIDATES]]
    if not ranked:
        return Decision(fault=None, category=None, confidence=book.confidence["none"], tier="none")
    proof = book.weights["decisive"] * ROLE_FACTOR["context"]  # a decisive line, as a cause or context

    def top(fault: str, device: bool = False) -> float:
        return max((h.weight for h in hits if h.fault == fault and (h.line.device_state or not device)), default=0.0)

    # Proof decides before scores: the one fault with a decisive line (an IB retry error over the CUDA failure NCCL
    # prints after it, as in nccl-tests' own output), else the one whose proof is the device's own state (a kernel
    # panic, an Xid, the OOM killer) over an application's error; else the leader by score, by a margin.
    proven = [f for f, _ in ranked if top(f) >= proof]
    on_device = [f for f in proven if top(f, device=True) >= proof]
    winner = proven[0] if len(proven) == 1 else on_device[0] if len(on_device) == 1 else None
    (best, s1), s2 = ranked[0], (ranked[1][1] if len(ranked) > 1 else 0.0)
    if winner is None and s1 >= book.decide_at and s1 - s2 >= book.margin:
        winner = best
    if winner is not None:
        used = [h for h in hits if h.fault == winner]
        tier: Tier = ("decisive" if top(winner) >= proof else "strong" if any(h.signature.strength != "weak" for h in used)
                      else "weak" if used else "schema")  # a hint the schema agrees with is still a hint
        return Decision(fault=winner, category=category_of.get(winner), confidence=book.confidence[tier], tier=tier,
                        candidates=candidates, hits=used)
    used = [h for h in hits if h.fault == best]
    if len(ranked) == 1 and used:
        # one fault, and only hints of it (a watchdog timeout, no root error): named, with a low confidence
        return Decision(fault=best, category=category_of.get(best), confidence=book.confidence["weak"], tier="weak",
                        candidates=candidates, hits=used, check=checks.get(best))
    # not sure of the fault: the category still, when most of the weight of the evidence that has one points to one,
    # and no less weight than a fault named with none (a watchdog timeout on the peers of a rank whose own exception,
    # in the job's code, ended it: blind incident hf-trainer-customloss-emptystack-3node)
    by_category: dict[Category | None, float] = {}
    for fault, score in ranked:
        by_category[category_of.get(fault)] = by_category.get(category_of.get(fault), 0.0) + score
    unnamed = by_category.pop(None, 0.0)
    category, weight = max(by_category.items(), key=lambda kv: kv[1]) if by_category else (None, 0.0)
    if weight < CATEGORY_SHARE * sum(by_category.values()) or weight < unnamed:
        category = None
    return Decision(fault=None, category=category, confidence=book.confidence["unsure"], tier="unsure",
                    candidates=candidates, hits=[h for h in hits if h.fault in {c.fault for c in candidates}],
                    check=checks.get(best))
