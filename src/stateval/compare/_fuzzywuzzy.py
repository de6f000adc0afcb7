"""fuzzywuzzy's string scores as the published dialogue-state scorers call them, on rapidfuzz.

DSTC8's SGD scorer (``schema_guided_dst/metrics.py``) scores a free-form slot with
``fuzzywuzzy.fuzz.token_sort_ratio(ref, hyp) / 100``. fuzzywuzzy has two back-ends, and they
differ: with ``python-Levenshtein`` installed its ratio is the normalised Indel similarity,
without it `difflib.SequenceMatcher`'s ratio (the official SGD figure moves by up to 3.7e-4
between the two, issue 28). These functions reproduce fuzzywuzzy 0.18 **with the
python-Levenshtein back-end** (python-Levenshtein >= 0.20 is itself built on rapidfuzz, whose
`Indel.normalized_similarity` is called here): integer scores 0..100, rounded as fuzzywuzzy
rounds (``int(round(100 * ratio))``). ``tests/test_sgd_official.py`` checks them against
fuzzywuzzy's own output (``tests/fixtures/sgd_official/fuzzywuzzy_pairs.json``).

Example:
    >>> token_sort_ratio("Fish & Chips", "chips, fish")
    100
    >>> token_sort_ratio("new york", "new yrok")
    88
    >>> full_process("  Café, 5PM!  ")
    'caf  5pm'
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Indel

__all__ = ["full_process", "ratio", "token_sort_ratio"]

_NOT_WORD = re.compile(r"(?ui)\W")
# fuzzywuzzy's ``asciidammit`` drops the code points 128..255 only (not every non-ASCII one).
_LATIN1 = {code: None for code in range(128, 256)}


def full_process(text: str, force_ascii: bool = True) -> str:
    """fuzzywuzzy's ``utils.full_process``: drop code points 128..255 (``force_ascii``), every
    non-word character to a space, lower-case, strip."""
    if force_ascii:
        text = text.translate(_LATIN1)
    return _NOT_WORD.sub(" ", text).lower().strip()


def ratio(a: str, b: str) -> int:
    """fuzzywuzzy's ``fuzz.ratio`` (python-Levenshtein back-end): 100 for equal strings, 0
    when one is empty, else ``round(100 * Indel similarity)``."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return round(100 * Indel.normalized_similarity(a, b))


def _sorted_tokens(text: str) -> str:
    return " ".join(sorted(full_process(text).split())).strip()


def token_sort_ratio(a: str, b: str) -> int:
    """fuzzywuzzy's ``fuzz.token_sort_ratio``: `ratio` of the processed, token-sorted strings."""
    return ratio(_sorted_tokens(a), _sorted_tokens(b))
