"""Template overlap: how much of the evidence a schema's signature templates explain, with IDF weights.

A sparse template x token matrix scores every template against every evidence line at once; a regex confirms order.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from diagagent.schemata.model import WILDCARD, FailureSchema

_TOKEN = re.compile(r"[a-z]+|\d+")
# A full match of a template counts 1 - exp(-W / SPECIFICITY_SCALE), W = the IDF weight of its literal tokens:
# generic templates count less, and of two templates that both match a line the more specific one wins.
SPECIFICITY_SCALE = 8.0
# Partial matches: containment c of the template's weighted tokens scores c ** PARTIAL_POWER.
PARTIAL_POWER = 4.0
# A line counts towards the overlap only if some schema explains it at least this well.
INFORMATIVE_LINE = 0.3
UNORDERED_FULL = 0.8  # every token present but not in the template's order
MAX_LINES = 200
MAX_LINE_CHARS = 2000

_MASKS = [
    (re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?"
                r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2}\b"), WILDCARD),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), WILDCARD),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), WILDCARD),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), WILDCARD),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?:<\d+>)?(?::\d+)?"), WILDCARD),
    (re.compile(r"\b[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?\b"), WILDCARD),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), WILDCARD),
    (re.compile(r"\b[0-9a-fA-F]{8,}\b"), WILDCARD),
    (re.compile(r"\b\d+\.\d+(?:[eE][+-]?\d+)?\b"), WILDCARD),
    (re.compile(r"\b\d{4,}\b"), WILDCARD),
    (re.compile(r"(?<![\w<])[A-Za-z][\w.-]*?\d[\w.-]*"), WILDCARD),  # node-002, rank3, mlx5_0, GPU1
    (re.compile(r"(?i)\b(?!status|err|errno|error|code|xid|signal)(\w+)([=:] ?)\d{2,}\b"), r"\1\2" + WILDCARD),
    (re.compile(r"/[\w.-]+(?:/[\w.<>*-]+)+"), WILDCARD),  # paths
]
_RUNS = re.compile(r"<\*>(?:[\s:,=\[\]()'\"/.-]*<\*>)+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def literal_tokens(template: str) -> list[str]:
    return [t for part in template.split(WILDCARD) for t in tokens(part)]


def template_regex(template: str) -> re.Pattern[str]:
    """`<*>` matches anything (lazily), a space any whitespace or none; unanchored, case-insensitive."""
    parts = [re.sub(r"(?:\\ )+", r"\\s*", re.escape(part)) for part in template.strip().split(WILDCARD)]
    return re.compile(".*?".join(parts), re.IGNORECASE | re.DOTALL)


def mask_line(line: str) -> str:
    """A log line as a template: timestamps, addresses, ids, paths and long numbers become `<*>`.

    Small numbers (Xid codes, errno, status codes) stay: they name the failure.
    """
    text = line.strip()[:MAX_LINE_CHARS]
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    text = _RUNS.sub(WILDCARD, text)
    text = re.sub(r"^(?:\[?(?:<\*>|\d{1,3})\]?[\s:|,-]*)+", "", text).strip()
    return text if text.replace(WILDCARD, "").strip() else ""


@dataclass
class LineMatch:
    line: int  # index into the query lines
    template: str
    score: float


@dataclass
class Overlap:
    """Per-schema template overlap for one query, and which line matched which template."""

    per_schema: np.ndarray  # aligned with TemplateIndex.ids
    best: np.ndarray | None = None  # lines x schemata: the best template score
    best_template: np.ndarray | None = None  # lines x schemata: which template (index) gave it
    templates: list[str] = field(default_factory=list)
    root_explained: bool = False  # some line is explained better by a root schema than by any cascade schema

    def matches(self, schema_index: int) -> list[LineMatch]:
        """The evidence lines this schema explains, best first."""
        if self.best is None or self.best_template is None:
            return []
        column = self.best[:, schema_index]
        found = [LineMatch(int(li), self.templates[int(self.best_template[li, schema_index])], float(column[li]))
                 for li in np.flatnonzero(column > 0)]
        return sorted(found, key=lambda m: -m.score)


class TemplateIndex:
    """Every template of every schema as one IDF-weighted sparse matrix, for scoring all of them in one product."""

    def __init__(self, schemata: list[FailureSchema]):
        from scipy.sparse import csr_matrix

        self.ids = [s.id for s in schemata]
        self.cascade = np.asarray([s.cascade for s in schemata], dtype=bool)
        self.templates: list[str] = []
        owners: list[int] = []
        token_lists: list[list[str]] = []
        for si, schema in enumerate(schemata):
            for template in schema.all_templates():
                toks = sorted(set(literal_tokens(template)))
                if toks:
                    self.templates.append(template)
                    owners.append(si)
                    token_lists.append(toks)
        self.owner = np.asarray(owners, dtype=np.int64)
        vocab: dict[str, int] = {}
        df: dict[str, int] = {}
        for toks in token_lists:
            for t in toks:
                df[t] = df.get(t, 0) + 1
        n = max(len(token_lists), 1)
        rows, cols, vals = [], [], []
        for r, toks in enumerate(token_lists):
            for t in toks:
                c = vocab.setdefault(t, len(vocab))
                rows.append(r)
                cols.append(c)
                vals.append(math.log(1.0 + n / df[t]))
        self.vocab = vocab
        self.matrix = csr_matrix((np.asarray(vals, dtype=np.float32), (rows, cols)),
                                 shape=(len(token_lists), max(len(vocab), 1)))
        self.by_token = self.matrix.T.tocsr()  # tokens x templates: what a query line multiplies
        self.position = {sid: i for i, sid in enumerate(self.ids)}
        self.weight = np.asarray(self.matrix.sum(axis=1)).ravel()
        self.specificity = 1.0 - np.exp(-self.weight / SPECIFICITY_SCALE)
        self._regex: dict[int, re.Pattern[str]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _compiled(self, ti: int) -> re.Pattern[str]:
        pattern = self._regex.get(ti)
        if pattern is None:
            pattern = self._regex[ti] = template_regex(self.templates[ti])
        return pattern

    def overlap(self, lines: list[str]) -> Overlap:
        """Fraction of the informative evidence lines each schema explains (0..1), IDF-weighted."""
        from scipy.sparse import csr_matrix

        n_schemata = len(self.ids)
        lines = [ln[:MAX_LINE_CHARS] for ln in lines if ln.strip()][:MAX_LINES]
        if not lines or not self.templates:
            return Overlap(np.zeros(n_schemata, dtype=np.float32))
        rows, cols = [], []
        for r, line in enumerate(lines):
            for t in set(tokens(line)):
                c = self.vocab.get(t)
                if c is not None:
                    rows.append(r)
                    cols.append(c)
        query = csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                           shape=(len(lines), self.matrix.shape[1]))
        hits = (query @ self.by_token).tocoo()  # lines x templates, matched weight
        best = np.zeros((len(lines), n_schemata), dtype=np.float32)
        best_template = np.full((len(lines), n_schemata), -1, dtype=np.int64)
        if hits.nnz:
            containment = hits.data / self.weight[hits.col]
            score = np.power(containment, PARTIAL_POWER) * self.specificity[hits.col]
            keep = score >= 0.01  # a common word or two in common: not worth carrying
            hits.row, hits.col, containment, score = hits.row[keep], hits.col[keep], containment[keep], score[keep]
            full = containment >= 0.999
            for k in np.flatnonzero(full):
                ti = int(hits.col[k])
                if not self._compiled(ti).search(lines[int(hits.row[k])]):
                    score[k] = UNORDERED_FULL * self.specificity[ti]
            owner = self.owner[hits.col]
            order = np.argsort(score, kind="stable")  # ascending: the best (line, schema) pair is written last
            best[hits.row[order], owner[order]] = score[order]
            best_template[hits.row[order], owner[order]] = hits.col[order]
        informative = best.max(axis=1) >= INFORMATIVE_LINE
        if not informative.any():
            return Overlap(np.zeros(n_schemata, dtype=np.float32))
        per_schema = best[informative].sum(axis=0) / float(informative.sum())
        if self.cascade.any() and not self.cascade.all():
            # lines a cascade schema explains better than any root schema are symptoms: root schemata are judged
            # on the other lines (a watchdog storm does not drown the one Xid line)
            root_best = best[:, ~self.cascade].max(axis=1)
            causes = informative & (best[:, self.cascade].max(axis=1) <= root_best)
            if causes.any():
                per_schema[~self.cascade] = best[causes][:, ~self.cascade].sum(axis=0) / float(causes.sum())
                return Overlap(per_schema.astype(np.float32), best, best_template, self.templates, True)
        return Overlap(per_schema.astype(np.float32), best, best_template, self.templates)
