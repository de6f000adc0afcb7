"""Text inside Markdown tables and code spans, shared by the run and diff Markdown reports.

Field paths, case ids and values are the user's or a model's text: a ``|`` would split a table
cell, a newline end the row, a backtick end a code span.
"""

from __future__ import annotations

__all__ = ["cell", "code"]


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell.

    Example:
        >>> cell("a|b\\nc")
        'a\\\\|b c'
    """
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def code(text: str) -> str:
    """``text`` as an inline code span inside a table cell, whatever backticks it holds.

    Example:
        >>> code("a`b")
        '`` a`b ``'
        >>> code("x")
        '`x`'
    """
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    inner = cell(text)
    return f"{fence} {inner} {fence}" if longest else f"{fence}{inner}{fence}"
