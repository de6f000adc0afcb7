"""One line of a JSONL case file validated and hashed from its one parse, when the suite loads.

The validating pass keeps of a valid case only its id, its example's text (for the cases hash)
and what the suite's audit reads (`ValidLine`), so a plain line (`parse_json_line`) of the plain
shape (`plain_spec`) with flat states whose paths are all known is checked from the values
parsed from it, with no state, input or case built only to be dropped. Any other line is built
into a `Case` as before (`_build_record`), which words its problems; the plain path is taken
only where that build would find none, so the problems, their lines and their order are the
same either way, and so is the example's text (`plain_example_json` against `example_json`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from stateval.state import paths_known
from stateval.suite._case import Case
from stateval.suite._case_spec import PlainCaseSpec, plain_spec
from stateval.suite._cases import (
    PLAIN_LINE,
    POST_STRINGS,
    PRE_STRINGS,
    SeenIds,
    StateFormat,
    _build_record,
    _Record,
    duplicate_problem,
)
from stateval.suite._episodes import EpisodeIndexer, episode_keys
from stateval.suite._source import example_json, plain_example_json

__all__ = ["ValidLine", "validate_line"]

_STR = {str}
_tuple = tuple.__new__


class ValidLine(NamedTuple):
    """What the validating pass keeps of a valid case (a named tuple: made per case line).

    Attributes:
        id: The case id.
        example: The case's dataset example as the cases hash reads it (`example_json`).
        gold: The expected post-state's best value per path.
        all_strings: True when every value of ``gold`` is known to be a string (False: not
            known either way).
        human: The paths with a human verdict.
        metadata: The case's metadata.
        kind: What the case is read again from (`PLAIN_LINE`, with `PRE_STRINGS` and
            `POST_STRINGS`: see `stateval.suite._cases`), or 0.
    """

    id: str
    example: bytes
    gold: Mapping[str, Any]
    all_strings: bool
    human: Collection[str]
    metadata: Mapping[str, Any]
    kind: int = 0

    @classmethod
    def of(cls, case: Case) -> ValidLine:
        """What the validating pass keeps of ``case``."""
        expected = case.expected_post_state
        flat = expected.flat_values
        if flat is not None:
            gold, all_strings = flat.values, flat.all_strings
        else:
            gold, all_strings = expected.to_flat(), False
        return cls(case.id, example_json(case), gold, all_strings, case.human, case.metadata)


def validate_line(
    data: object,
    plain: bool,
    line: int,
    label: str,
    fmt: StateFormat,
    confidence: float,
    problems: list[str],
    seen: SeenIds,
    episodes: EpisodeIndexer | None = None,
    drafts: list[str] | None = None,
) -> ValidLine | None:
    """The valid case parsed from line ``line`` (``plain``: see `parse_json_line`), or None
    when it has problems (appended, as `_build_record` words them) or is an unreviewed draft
    (its id appended to ``drafts``). With ``episodes``, the case's episode and turn are handed
    to the indexer."""
    turn: tuple[str, int] | None = None
    valid = None
    if plain and fmt == "flat" and confidence.__class__ is float and 0.0 <= confidence <= 1.0:
        spec = plain_spec(data)
        if spec is not None:
            if episodes is not None:
                episode_id, turn_index, bad = episode_keys(spec.metadata, episodes.spec)
                if not bad:
                    assert episode_id is not None
                    assert turn_index is not None
                    turn = episode_id, turn_index
            if episodes is None or turn is not None:
                valid = _plain_line(spec, confidence)
    if valid is None:  # built into a case, which words its problems
        record = _Record(data, line, lambda _loc: line, parsed=True)
        case = _build_record(record, label, fmt, confidence, problems, seen, episodes, drafts)
        return None if case is None else ValidLine.of(case)
    if valid.id in seen:
        problems.append(duplicate_problem(label, line, valid.id, seen[valid.id]))
        return None
    seen[valid.id] = line
    if episodes is not None:
        assert turn is not None
        episodes.add(*turn, valid.id, line, False, valid.metadata)  # the pre-state is not empty
    return valid


def _plain_line(spec: PlainCaseSpec, confidence: float) -> ValidLine | None:
    """The `ValidLine` of a plain spec parsed from a plain line, or None where the case must
    be built to tell (an empty state, a state in the candidate form, a path not known to be
    valid, a number orjson may write otherwise than the standard library).

    Every value of a plain line is a JSON value of text without surrogates and finite numbers
    (`parse_json_line`), so of what `build_case` checks only the states' paths are left: known
    paths were accepted before (`paths_known`)."""
    case_id, pre, expected = spec.id, spec.pre_state, spec.expected_post_state
    if (
        not pre
        or not expected
        or (len(pre) == 1 and "fields" in pre)
        or (len(expected) == 1 and "fields" in expected)
        or not paths_known(pre)
        or not paths_known(expected)
    ):
        return None
    given = spec.input
    as_given = {
        "prompt": given.prompt,
        "message_id": given.message_id or case_id,
        "metadata": given.metadata,
    }
    pre_strings = set(map(type, pre.values())) == _STR
    all_strings = set(map(type, expected.values())) == _STR
    metadata = spec.metadata
    example = plain_example_json(
        case_id, pre, as_given, expected, pre_strings, all_strings, metadata, confidence
    )
    if example is None:
        return None
    kind = PLAIN_LINE | (PRE_STRINGS if pre_strings else 0) | (POST_STRINGS if all_strings else 0)
    # made as a tuple: no call of the named tuple's __new__ (a line's share of it is not small)
    return _tuple(ValidLine, (case_id, example, expected, all_strings, (), metadata, kind))
