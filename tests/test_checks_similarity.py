"""QA keyword overlap, string distances and embedding similarity."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from stateval.checks import (
    EmbeddingClient,
    cosine,
    cosine_of,
    embedding_similarity,
    jaccard,
    keyword_overlap,
    keywords,
    levenshtein,
)
from stateval.errors import EvaluationError


def test_keywords_drop_stopwords_and_fold_case() -> None:
    assert keywords("The Capital of FRANCE is Paris, the capital") == ["capital", "france", "paris"]


def test_keyword_overlap_is_recall_of_reference_keywords() -> None:
    result = keyword_overlap("Paris is lovely", "The capital of France is Paris")
    assert result.score == pytest.approx(1 / 3)
    assert "1 of 3 reference keywords found" in result.explanation
    assert "missing: ['capital', 'france']" in result.explanation
    assert result.metrics["precision"] == pytest.approx(1 / 2)
    assert not result.passed


def test_keyword_overlap_full_match_passes() -> None:
    result = keyword_overlap("paris — capital of france!", "The capital of France is Paris")
    assert (result.score, result.passed) == (1.0, True)


def test_keyword_overlap_with_empty_reference() -> None:
    assert keyword_overlap("", "").score == 1.0
    assert keyword_overlap("the of", "a an").score == 1.0  # stopwords only on both sides
    result = keyword_overlap("Paris", "")
    assert result.score == 0.0
    assert "reference has no keywords" in result.explanation


def test_keyword_overlap_on_unicode_and_empty_output() -> None:
    assert keyword_overlap("Zoë lives in Köln", "KÖLN, zoë").score == 1.0
    assert keyword_overlap("", "Paris").score == 0.0


def test_levenshtein_uses_normalized_similarity() -> None:
    result = levenshtein("kitten", "sitting")
    assert result.score == pytest.approx(1 - 3 / 7)
    assert result.metrics["distance"] == 3
    assert levenshtein("", "").score == 1.0
    assert levenshtein("abc", "").score == 0.0
    assert levenshtein("ABC", "abc", case_sensitive=False).score == 1.0


def test_jaccard_on_word_sets() -> None:
    assert jaccard("the red fox", "the brown fox").score == pytest.approx(2 / 4)
    assert jaccard("a a a b", "b a").score == 1.0
    assert jaccard("", "").score == 1.0
    assert jaccard("x", "").score == 0.0
    assert jaccard("Fox", "fox").score == 0.0
    assert jaccard("Fox", "fox", case_sensitive=False).score == 1.0


def test_cosine_on_word_counts() -> None:
    assert cosine("a a b", "a b b").score == pytest.approx(4 / 5)
    assert cosine("same words", "words same").score == pytest.approx(1.0)
    assert cosine("x", "y").score == 0.0
    assert cosine("", "").score == 1.0
    assert cosine("", "y").score == 0.0


def test_distance_checks_compare_json_values() -> None:
    assert levenshtein({"a": 1, "b": 2}, '{"a": 1, "b": 2}').score == 1.0


def test_similarity_threshold_decides_pass() -> None:
    assert levenshtein("kitten", "sitting", threshold=0.5).passed
    assert not levenshtein("kitten", "sitting").passed


class ScriptedEmbeddings:
    """Returns fixed vectors per text (a test fake, not a model)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.vectors[t] for t in texts]


async def test_embedding_similarity_is_cosine_clamped_to_unit_interval() -> None:
    client = ScriptedEmbeddings(
        {"cat": [1.0, 0.0], "kitten": [0.8, 0.6], "dog": [-1.0, 0.0], "zero": [0.0, 0.0]}
    )
    assert isinstance(client, EmbeddingClient)
    close = await embedding_similarity("cat", "kitten", client)
    assert close.score == pytest.approx(0.8)
    assert close.passed
    assert client.calls == [["cat", "kitten"]]
    opposite = await embedding_similarity("cat", "dog", client)
    assert opposite.score == 0.0
    assert opposite.metrics["cosine"] == pytest.approx(-1.0)
    zero = await embedding_similarity("zero", "cat", client)
    assert (zero.score, zero.label) == (0.0, "zero_vector")


async def test_embedding_similarity_rejects_a_broken_client() -> None:
    class Short:
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0]]

    with pytest.raises(EvaluationError, match="returned 1 vectors for 2 texts"):
        await embedding_similarity("a", "b", Short())


def test_cosine_of_rejects_mismatched_sizes() -> None:
    with pytest.raises(EvaluationError, match="sizes differ"):
        cosine_of([1.0], [1.0, 2.0])


async def test_e5_client_ranks_paraphrases_above_unrelated_text() -> None:
    from stateval.checks.e5 import E5EmbeddingClient

    client = E5EmbeddingClient()
    vectors = await client.embed(["The cat sat on the mat.", "Le chat est assis sur le tapis."])
    assert len(vectors) == 2
    assert len(vectors[0]) == 384
    para = await embedding_similarity(
        "The cat sat on the mat.", "A kitten is sitting on a rug.", client
    )
    unrelated = await embedding_similarity(
        "The cat sat on the mat.", "Quarterly revenue grew by eight percent.", client
    )
    assert para.score > unrelated.score
    assert await client.embed([]) == []


def test_e5_client_rejects_unknown_models() -> None:
    from stateval.checks.e5 import E5EmbeddingClient
    from stateval.errors import EvaluationConfigError

    with pytest.raises(EvaluationConfigError, match="unknown E5 embedding model 'gpt'"):
        E5EmbeddingClient("gpt")
