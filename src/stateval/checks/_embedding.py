"""Embedding similarity: cosine of two texts' vectors from a pluggable `EmbeddingClient`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from stateval.checks._result import CheckResult, failed
from stateval.checks._similarity import DEFAULT_SIMILARITY_THRESHOLD
from stateval.checks._text import as_text
from stateval.errors import EvaluationError

__all__ = ["EmbeddingClient", "EmbeddingClientProtocol", "cosine_of", "embedding_similarity"]


@runtime_checkable
class EmbeddingClient(Protocol):
    """Anything that turns texts into vectors, one vector per text, in order.

    `stateval.checks.e5.E5EmbeddingClient` is an offline implementation (``stateval[embeddings]``).
    """

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One embedding vector per text, in the order given."""
        ...


EmbeddingClientProtocol = EmbeddingClient
"""Seed 004's name for `EmbeddingClient`."""


def cosine_of(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two equal-length vectors, in [-1, 1] (0.0 when either is all zeros)."""
    if len(a) != len(b):
        raise EvaluationError(f"embedding sizes differ: {len(a)} and {len(b)}")
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return max(-1.0, min(1.0, dot / norm)) if norm else 0.0


async def embedding_similarity(
    output: Any,
    reference: Any,
    client: EmbeddingClient,
    *,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> CheckResult:
    """Cosine similarity of the output's and the reference's embeddings, clamped to [0, 1].

    The raw cosine (in [-1, 1]) is in ``metrics["cosine"]``. An output or reference with an
    all-zero embedding scores 0.

    Raises:
        EvaluationError: The client returned the wrong number of vectors or vectors of different
            sizes (a broken client, not a bad output).
    """
    texts = [as_text(output), as_text(reference)]
    vectors = await client.embed(texts)
    if len(vectors) != 2:
        raise EvaluationError(f"embedding client returned {len(vectors)} vectors for 2 texts")
    raw = cosine_of(vectors[0], vectors[1])
    if not any(vectors[0]) or not any(vectors[1]):
        return failed("embedding_similarity", "zero_vector", "an embedding is all zeros", cosine=0)
    score = min(1.0, max(0.0, raw))
    passed = score >= threshold
    return CheckResult(
        "embedding_similarity",
        score,
        passed,
        "pass" if passed else "fail",
        f"embedding cosine similarity {raw:.3f}",
        {"cosine": raw},
    )
