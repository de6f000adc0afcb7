"""Whether a JSON text may hold an integer orjson reads otherwise than the standard library.

orjson reads an integer past 64 bits (20 digits or more, or a minus sign and 19: under -2**63)
as a float, where the json module keeps it an integer; a text that may hold one is read by the
json module instead. The text's bytes are translated (`NUMBER_MARKS`) so that the test is a
substring search: a digit or a minus sign is ``1``, a number's ``.`` or exponent (``e``,
``E``) is ``.``, any other byte ``0``. Such an integer is then twenty ones in a row with no
``.`` on either side; a float's digits (the many a small float is written with by orjson,
``0.000012345678901234568``) are not, nor is its exponent. A string's digits may count too: a
text holding them is only read more slowly.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["NUMBER_MARKS", "wide_integer_in", "wide_integer_marked"]

NUMBER_MARKS: Final = bytes(
    0x31 if 0x30 <= b <= 0x39 or b == 0x2D else 0x2E if b in b".eE" else 0x30 for b in range(256)
)
"""A ``bytes.translate`` table: digits and minus signs to ``1``, ``.eE`` to ``.``, else ``0``."""

_TWENTY: Final = b"1" * 20
_RUN: Final = re.compile(rb"1{20,}")
_DOT: Final = 0x2E


def wide_integer_marked(marked: bytes) -> bool:
    """Whether ``marked`` (a text translated by `NUMBER_MARKS`, or by a table that marks
    the same bytes alike) has twenty ones in a row that are not a float's.

    Example:
        >>> wide_integer_marked(b"0.000012345678901234568".translate(NUMBER_MARKS))
        False
        >>> wide_integer_marked(b"[-9223372036854775809]".translate(NUMBER_MARKS))
        True
    """
    if _TWENTY not in marked:
        return False
    end_of_text = len(marked)
    for run in _RUN.finditer(marked):
        start, end = run.span()
        if (not start or marked[start - 1] != _DOT) and (end == end_of_text or marked[end] != _DOT):
            return True
    return False


def wide_integer_in(text: bytes) -> bool:
    """Whether the JSON ``text`` may hold an integer past 64 bits (see the module docstring)."""
    return wide_integer_marked(text.translate(NUMBER_MARKS))
