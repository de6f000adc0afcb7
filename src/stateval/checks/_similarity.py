"""Text similarity checks: QA keyword overlap and string distances.

Scores are similarities in [0, 1] (1 = identical); a check passes when its score reaches
``threshold``. Two empty texts are identical (score 1).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from rapidfuzz.distance import Levenshtein

from stateval.checks._result import CheckResult
from stateval.checks._text import STOPWORDS, as_text, fold, tokenize

__all__ = [
    "DEFAULT_SIMILARITY_THRESHOLD",
    "cosine",
    "jaccard",
    "keyword_overlap",
    "keywords",
    "levenshtein",
]

#: Score a similarity check must reach to pass unless told otherwise.
DEFAULT_SIMILARITY_THRESHOLD = 0.8

_MAX_LISTED = 10


def _result(name: str, score: float, threshold: float, explanation: str, **m: float) -> CheckResult:
    passed = score >= threshold
    return CheckResult(name, score, passed, "pass" if passed else "fail", explanation, m)


def keywords(text: str) -> list[str]:
    """The distinct casefolded word tokens of ``text`` that are not stopwords, in order."""
    return list(dict.fromkeys(t for t in tokenize(text) if t not in STOPWORDS))


def keyword_overlap(
    output: Any, reference: Any, *, threshold: float = DEFAULT_SIMILARITY_THRESHOLD
) -> CheckResult:
    """Share of the reference's keywords that the output contains (recall).

    Both texts are tokenised, casefolded and stripped of English stopwords. The score is
    ``|reference ∩ output| / |reference|``; a reference with no keywords scores 1 when the output
    has none either and 0 otherwise. Metrics also give precision and F1.

    Example:
        >>> r = keyword_overlap("Paris is the capital", "The capital of France is Paris")
        >>> round(r.score, 2), r.explanation
        (0.67, "2 of 3 reference keywords found; missing: ['france']")
    """
    ref = keywords(as_text(reference))
    out = keywords(as_text(output))
    common = set(ref) & set(out)
    missing = [k for k in ref if k not in common]
    if not ref:
        score = 1.0 if not out else 0.0
        explanation = (
            "neither the reference nor the output has keywords"
            if not out
            else f"the reference has no keywords but the output has {len(out)}"
        )
    else:
        score = len(common) / len(ref)
        explanation = f"{len(common)} of {len(ref)} reference keywords found"
        if missing:
            shown = missing[:_MAX_LISTED] + (["..."] if len(missing) > _MAX_LISTED else [])
            explanation += f"; missing: {shown}"
    precision = len(common) / len(out) if out else float(not ref)
    f1 = 2 * precision * score / (precision + score) if precision + score else 0.0
    return _result(
        "keyword_overlap",
        score,
        threshold,
        explanation,
        recall=score,
        precision=precision,
        f1=f1,
        reference_keywords=len(ref),
        output_keywords=len(out),
        missing=len(missing),
    )


def levenshtein(
    output: Any,
    reference: Any,
    *,
    case_sensitive: bool = True,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> CheckResult:
    """Normalised Levenshtein similarity of the two texts (rapidfuzz): ``1 - distance / max_len``.

    Example:
        >>> levenshtein("kitten", "sitting").score
        0.5714285714285714
    """
    out, ref = as_text(output), as_text(reference)
    if not case_sensitive:
        out, ref = fold(out), fold(ref)
    score = Levenshtein.normalized_similarity(out, ref)
    distance = Levenshtein.distance(out, ref)
    return _result(
        "levenshtein",
        score,
        threshold,
        f"levenshtein similarity {score:.3f} ({distance} edits)",
        distance=distance,
    )


# rapidfuzz has no token-level Jaccard or cosine metric (its scorers work on characters or on
# sorted token strings), so these two are plain set / counter arithmetic over `tokenize`.


def jaccard(
    output: Any,
    reference: Any,
    *,
    case_sensitive: bool = True,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> CheckResult:
    """Jaccard similarity of the two texts' word sets: shared words over all distinct words.

    Example:
        >>> jaccard("the red fox", "the brown fox").score
        0.5
    """
    out = set(tokenize(as_text(output), casefold=not case_sensitive))
    ref = set(tokenize(as_text(reference), casefold=not case_sensitive))
    union = out | ref
    score = len(out & ref) / len(union) if union else 1.0
    return _result(
        "jaccard",
        score,
        threshold,
        f"jaccard similarity {score:.3f} ({len(out & ref)} of {len(union)} distinct words shared)",
        shared=len(out & ref),
        union=len(union),
    )


def cosine(
    output: Any,
    reference: Any,
    *,
    case_sensitive: bool = True,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> CheckResult:
    """Cosine similarity of the two texts' word-count vectors.

    Example:
        >>> round(cosine("a a b", "a b b").score, 3)
        0.8
    """
    out = Counter(tokenize(as_text(output), casefold=not case_sensitive))
    ref = Counter(tokenize(as_text(reference), casefold=not case_sensitive))
    if not out and not ref:
        score = 1.0
    elif not out or not ref:
        score = 0.0
    else:
        dot = sum(count * ref[token] for token, count in out.items())
        norm = math.sqrt(sum(c * c for c in out.values())) * math.sqrt(
            sum(c * c for c in ref.values())
        )
        score = min(1.0, dot / norm)
    return _result("cosine", score, threshold, f"token cosine similarity {score:.3f}")
