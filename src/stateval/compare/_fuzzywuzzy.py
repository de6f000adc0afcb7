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

mwzeval's ``get_dst`` matches a value with ``fuzz.partial_ratio(hyp, ref) > 95``. `partial_ratio`
follows fuzzywuzzy's algorithm on python-Levenshtein 0.27.5's primitives (rapidfuzz's
Levenshtein matching blocks): equal to it on 300,000 pairs (``tests/test_mwzeval_official.py``;
``tests/fixtures/mwzeval_official/partial_ratio_pairs.json`` keeps 1,945). python-Levenshtein
0.12.2, in C, aligns some equal-cost edits otherwise (262 of those pairs fall on the other side
of 95), difflib 75; rapidfuzz's own ``partial_ratio`` 17,656.

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

from rapidfuzz.distance import Indel, Levenshtein

__all__ = ["full_process", "partial_ratio", "ratio", "token_sort_ratio"]

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


def partial_ratio(a: str, b: str) -> int:
    """fuzzywuzzy's ``fuzz.partial_ratio`` (python-Levenshtein back-end): 100 for equal strings,
    0 when one is empty, else the best `ratio` of the shorter string against the window of the
    longer one, as long as it, that starts where each of their matching blocks aligns them
    (python-Levenshtein's ``matching_blocks`` of their Levenshtein ``opcodes``); 100 as soon as
    a window's ratio exceeds 0.995. Unlike rapidfuzz's own ``partial_ratio``, which searches
    every alignment and scores ``("lan hong house", "lan hong houske")`` 96.3, not 93.

    Example:
        >>> partial_ratio("acorn", "acorn guest house")
        100
        >>> partial_ratio("lan hong house", "lan hong houske")
        93
    """
    if a == b:
        return 100
    if not a or not b:
        return 0
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    best = 0.0
    for block in Levenshtein.opcodes(shorter, longer).as_matching_blocks():
        start = max(block.b - block.a, 0)
        similarity = Indel.normalized_similarity(shorter, longer[start : start + len(shorter)])
        if similarity > 0.995:
            return 100
        best = max(best, similarity)
    return round(100 * best)
