"""Recorded answers of a form filler, replayed as the mutator of the judge check (`judge.yaml`).

`judge.yaml` tests the LLM judge, not a form filler: each case's input metadata holds the value a
form filler once wrote for a field and the confidence it gave (``recorded``), and `answer` writes
exactly that. The judge is then asked about fixed pairs of values that people have labelled, so
its agreement with them is measured on the same pairs every run.

Example:
    >>> from stateval import InterpretiveState, StructuredInput
    >>> turn = StructuredInput("veggie food pls", "m1", {"recorded": {
    ...     "path": "preferences.diet", "value": "veggie", "confidence": 0.8}})
    >>> answer(InterpretiveState(), turn).best("preferences.diet")
    ValueConfidence(value='veggie', confidence=0.8, inference='recorded', message_id='m1')
"""

from __future__ import annotations

from stateval import InterpretiveState, ValueConfidence
from stateval.mutators import StructuredInput

__all__ = ["answer"]


def answer(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    """A copy of ``state`` with the recorded value of ``input.metadata["recorded"]`` set."""
    recorded = input.metadata["recorded"]
    out = state.copy()
    value = ValueConfidence(
        recorded["value"], float(recorded["confidence"]), "recorded", input.message_id
    )
    out.set_value(str(recorded["path"]), value)
    return out
