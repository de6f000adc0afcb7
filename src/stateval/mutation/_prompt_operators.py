"""Prompt operators: degrade an `LLMMutator`'s prompt (or a bare prompt) one edit at a time.

Lines holding a ``$placeholder`` (``$state``, ``$prompt``...) are never edited: a mutant that
hides the input from the model says nothing about the suite. Descriptions name the line
(1-based) and quote the text that changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from stateval.errors import StatevalError
from stateval.mutation._mutant import Mutant, RatedOperator
from stateval.mutation._system import System, as_system
from stateval.mutators import PROMPT_PLACEHOLDERS

__all__ = [
    "PROMPT_OPERATORS",
    "drop_examples",
    "drop_instruction",
    "flip_negation",
    "truncate",
    "weaken_modals",
]

_PLACEHOLDER = re.compile(
    r"(?<!\$)\$(?:\{(?:"
    + "|".join(PROMPT_PLACEHOLDERS)
    + r")\}|(?:"
    + "|".join(PROMPT_PLACEHOLDERS)
    + r")\b)"
)
_EXAMPLE = re.compile(
    r"^\s*(?:examples?\b|e\.g\.|for example|"
    r"input\s*:|output\s*:|user\s*:|assistant\s*:|q\s*:|a\s*:)",
    re.IGNORECASE,
)
_JSON_LINE = re.compile(r"^\s*[\[{].*[\]}]\s*,?$")
_NEGATIONS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(
            r"\b(do|does|did|must|should|can|could|will|would|is|are|was|were|may)\s+not\b",
            re.IGNORECASE,
        ),
        lambda m: m.group(1),
    ),
    (
        re.compile(
            r"\b(do|does|did|must|should|ca|could|wo|would|is|are|was|were)n't\b", re.IGNORECASE
        ),
        lambda m: {"ca": "can", "wo": "will"}.get(m.group(1).lower(), m.group(1)),
    ),
    (re.compile(r"\bnever\b", re.IGNORECASE), lambda m: _same_case(m.group(0), "always")),
    (re.compile(r"\bnothing\b", re.IGNORECASE), lambda m: _same_case(m.group(0), "something")),
)
_MODALS = {
    "must": "may",
    "shall": "may",
    "should": "could",
    "always": "usually",
    "never": "rarely",
    "only": "preferably",
    "required": "optional",
}
_MODAL = re.compile(r"\b(" + "|".join(_MODALS) + r")\b", re.IGNORECASE)
_SHOW = 60


def _same_case(original: str, word: str) -> str:
    return word.capitalize() if original[:1].isupper() else word


def _show(line: str) -> str:
    text = line.strip()
    return repr(text if len(text) <= _SHOW else text[: _SHOW - 3] + "...")


def _editable(system: System) -> list[tuple[int, str]] | None:
    """``(index, line)`` of every non-blank line without a placeholder, or None (no prompt)."""
    if system.prompt is None:
        return None
    return [
        (i, line)
        for i, line in enumerate(system.prompt.splitlines())
        if line.strip() and not _PLACEHOLDER.search(line)
    ]


def _with_lines(
    system: System, operator: str, description: str, edit: Callable[[list[str]], None]
) -> Mutant | None:
    assert system.prompt is not None
    lines = system.prompt.splitlines()
    edit(lines)
    text = "\n".join(lines) + ("\n" if system.prompt.endswith("\n") else "")
    if text == system.prompt:
        return None
    try:
        degraded = system.with_prompt(text)
    except StatevalError:
        return None
    return Mutant(operator, description, degraded, "prompt")


def _collect(mutants: list[Mutant | None]) -> list[Mutant]:
    return [m for m in mutants if m is not None]


def drop_instruction(target: Any) -> list[Mutant]:
    """Per prompt line: the prompt without it."""
    system = as_system(target)
    lines = _editable(system)
    if not lines:
        return []

    def make(index: int, line: str) -> Mutant | None:
        def edit(all_lines: list[str]) -> None:
            del all_lines[index]

        return _with_lines(
            system, "drop_instruction", f"drops prompt line {index + 1}: {_show(line)}", edit
        )

    return _collect([make(i, line) for i, line in lines])


def flip_negation(target: Any) -> list[Mutant]:
    """Per prompt line with a negation: the negation flipped (``do not`` -> ``do``)."""
    system = as_system(target)
    lines = _editable(system)
    if not lines:
        return []
    out: list[Mutant | None] = []
    for index, line in lines:
        flipped = line
        for pattern, repl in _NEGATIONS:
            flipped = pattern.sub(repl, flipped)
        if flipped == line:
            continue

        def edit(all_lines: list[str], index: int = index, flipped: str = flipped) -> None:
            all_lines[index] = flipped

        description = (
            f"flips the negation in prompt line {index + 1}: {_show(line)} -> {_show(flipped)}"
        )
        out.append(_with_lines(system, "flip_negation", description, edit))
    return _collect(out)


def weaken_modals(target: Any) -> list[Mutant]:
    """One mutant: every modal word weakened (must -> may, always -> usually, only -> ...)."""
    system = as_system(target)
    lines = _editable(system)
    if not lines:
        return []
    changes: dict[int, str] = {}
    words: dict[str, None] = {}
    for index, line in lines:

        def repl(m: re.Match[str]) -> str:
            word = m.group(0)
            words[f"{word.lower()} -> {_MODALS[word.lower()]}"] = None
            return _same_case(word, _MODALS[word.lower()])

        weakened = _MODAL.sub(repl, line)
        if weakened != line:
            changes[index] = weakened
    if not changes:
        return []

    def edit(all_lines: list[str]) -> None:
        for index, text in changes.items():
            all_lines[index] = text

    shown = ", ".join(str(i + 1) for i in changes)
    description = f"weakens the modal words of prompt lines {shown} ({', '.join(words)})"
    return _collect([_with_lines(system, "weaken_modals", description, edit)])


def truncate(target: Any) -> list[Mutant]:
    """One mutant: the last half of the prompt's lines dropped (placeholder lines kept)."""
    system = as_system(target)
    lines = _editable(system)
    if not lines or len(lines) < 2:
        return []
    cut = lines[len(lines) - len(lines) // 2 :]
    dropped = {i for i, _ in cut}

    def edit(all_lines: list[str]) -> None:
        all_lines[:] = [line for i, line in enumerate(all_lines) if i not in dropped]

    description = (
        f"truncates the prompt: drops its last {len(cut)} of {len(lines)} text lines "
        f"(lines {cut[0][0] + 1}-{cut[-1][0] + 1}, from {_show(cut[0][1])}; placeholders kept)"
    )
    return _collect([_with_lines(system, "truncate", description, edit)])


def drop_examples(target: Any) -> list[Mutant]:
    """One mutant: the few-shot example lines dropped (``Example:``, ``Input:``, JSON lines)."""
    system = as_system(target)
    lines = _editable(system)
    if not lines:
        return []
    examples = {i for i, line in lines if _EXAMPLE.match(line) or _JSON_LINE.match(line)}
    if not examples:
        return []

    def edit(all_lines: list[str]) -> None:
        all_lines[:] = [line for i, line in enumerate(all_lines) if i not in examples]

    shown = ", ".join(str(i + 1) for i in sorted(examples))
    description = f"drops the {len(examples)} few-shot example line(s) of the prompt ({shown})"
    return _collect([_with_lines(system, "drop_examples", description, edit)])


PROMPT_OPERATORS: dict[str, RatedOperator] = {
    "drop_instruction": RatedOperator(drop_instruction, "medium"),
    "flip_negation": RatedOperator(flip_negation, "high"),
    "weaken_modals": RatedOperator(weaken_modals, "medium"),
    "truncate": RatedOperator(truncate, "high"),
    "drop_examples": RatedOperator(drop_examples, "medium"),
}
"""The built-in prompt operators, by name."""
