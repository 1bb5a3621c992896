"""Keep every tool result compact: JSON under a size budget, long lists cut with a note on how to get more.

A cut never drops silently: the result says how many items there were and which parameter pages further.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_BUDGET = 6000  # characters of JSON per tool result (about 1.5k tokens)
MAX_TEXT = 400  # one telemetry string at most this long


def _shorten(value: Any, max_text: int) -> Any:
    if isinstance(value, str) and len(value) > max_text:
        return value[:max_text] + f"... [{len(value) - max_text} more chars]"
    if isinstance(value, dict):
        return {k: _shorten(v, max_text) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v, max_text) for v in value]
    return value


def _longest_list(value: Any, path: tuple = ()) -> tuple[tuple, int]:
    best: tuple[tuple, int] = ((), 0)
    if isinstance(value, list):
        best = (path, len(value))
        items = enumerate(value)
    elif isinstance(value, dict):
        items = value.items()
    else:
        return best
    for k, v in items:
        sub = _longest_list(v, path + (k,))
        if sub[1] > best[1]:
            best = sub
    return best


def compact_json(result: Any, budget: int = DEFAULT_BUDGET, more_hint: str = "ask with a narrower filter") -> str:
    """`result` as JSON of at most about `budget` characters: strings cut first, then the longest lists halved."""
    value = _shorten(result, MAX_TEXT)
    text = json.dumps(value, default=str, separators=(",", ":"))
    cuts: dict[str, int] = {}
    while len(text) > budget:
        path, n = _longest_list(value)
        if n <= 1:
            return text[:budget] + '..."}'
        parent: Any = value
        for k in path[:-1]:
            parent = parent[k]
        lst = parent[path[-1]] if path else value
        keep = max(1, n // 2)
        key = ".".join(map(str, path)) or "result"
        cuts.setdefault(key, n)
        del lst[keep:]
        if isinstance(value, dict):
            value["_truncated"] = {k: f"showing fewer of {total}; {more_hint}" for k, total in cuts.items()}
        text = json.dumps(value, default=str, separators=(",", ":"))
    return text
