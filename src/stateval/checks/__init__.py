"""Rule, text, embedding and trajectory checks: plain functions that return a `CheckResult`.

Every check takes the value to check first (any JSON value: non-strings are read as canonical
JSON, see `as_text`), then its parameters or reference, and returns a `CheckResult` with a score in
[0, 1]. `on_field` / `on_field_pair` apply a check to one field of a state.
"""

from __future__ import annotations

from stateval.checks._criteria import (
    ContainsAllCriterion,
    ContainsAnyCriterion,
    ContainsCriterion,
    Criterion,
    ExactCriterion,
    JSONParseableCriterion,
    JSONSchemaCriterion,
    RegexCriterion,
    check_criteria,
    parse_criteria,
)
from stateval.checks._embedding import (
    EmbeddingClient,
    EmbeddingClientProtocol,
    cosine_of,
    embedding_similarity,
)
from stateval.checks._fields import FieldSource, field_value, on_field, on_field_pair
from stateval.checks._result import CheckResult
from stateval.checks._rules import (
    DEFAULT_REGEX_TIMEOUT,
    RegexPattern,
    compile_regex,
    compile_schema,
    contains,
    contains_all,
    contains_any,
    exact,
    json_parseable,
    json_schema,
    matches_regex,
)
from stateval.checks._similarity import (
    DEFAULT_SIMILARITY_THRESHOLD,
    cosine,
    jaccard,
    keyword_overlap,
    keywords,
    levenshtein,
)
from stateval.checks._text import STOPWORDS, as_text, tokenize
from stateval.checks._trajectory import trajectory_fidelity

__all__ = [
    "DEFAULT_REGEX_TIMEOUT",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "STOPWORDS",
    "CheckResult",
    "ContainsAllCriterion",
    "ContainsAnyCriterion",
    "ContainsCriterion",
    "Criterion",
    "EmbeddingClient",
    "EmbeddingClientProtocol",
    "ExactCriterion",
    "FieldSource",
    "JSONParseableCriterion",
    "JSONSchemaCriterion",
    "RegexCriterion",
    "RegexPattern",
    "as_text",
    "check_criteria",
    "compile_regex",
    "compile_schema",
    "contains",
    "contains_all",
    "contains_any",
    "cosine",
    "cosine_of",
    "embedding_similarity",
    "exact",
    "field_value",
    "jaccard",
    "json_parseable",
    "json_schema",
    "keyword_overlap",
    "keywords",
    "levenshtein",
    "matches_regex",
    "on_field",
    "on_field_pair",
    "parse_criteria",
    "tokenize",
    "trajectory_fidelity",
]
