"""Where a run's ``field:<path>`` scores go in Phoenix: the upload modes, typed once.

`UploadMode` is the one list of mode names (the suite's ``phoenix.fields_as``,
`stateval.suite.FieldsAs`, which the journal's header and ``--fields-as`` read too);
`UPLOAD_MODES` says what each mode posts. A new mode is a new name in `FieldsAs` and one line
in `UPLOAD_MODES`; the writer asks `as_evaluation` and
`as_annotation` of every score.

- ``evaluations`` (the default): every score is an experiment evaluation of the case's run, so
  every field is a column of the experiment's compare table (one request per score).
- ``annotations``: the case-level scores are experiment evaluations; each ``field:<path>``
  score is a span annotation on the case's mutator-call span, posted in bulk, and the
  experiment's metadata gets the per-field means.
- ``both``: all of ``evaluations`` plus the annotations of ``annotations``.

A field score whose case has no recorded span stays an experiment evaluation whatever the mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from stateval.compare import FIELD_PREFIX
from stateval.suite import FieldsAs

__all__ = ["UPLOAD_MODES", "ModeSpec", "UploadMode", "as_annotation", "as_evaluation"]

UploadMode = FieldsAs
"""The upload modes' names: the suite's ``phoenix.fields_as`` (`stateval.suite.FieldsAs`)."""


@dataclass(frozen=True, slots=True)
class ModeSpec:
    """What one upload mode posts for a field score whose case has a span.

    Attributes:
        evaluations: Field scores as experiment evaluations.
        annotations: Field scores as span annotations.
    """

    evaluations: bool
    annotations: bool


UPLOAD_MODES: dict[UploadMode, ModeSpec] = {
    "evaluations": ModeSpec(evaluations=True, annotations=False),
    "annotations": ModeSpec(evaluations=False, annotations=True),
    "both": ModeSpec(evaluations=True, annotations=True),
}
"""Every upload mode, by name, in the order the CLI lists them."""

assert tuple(UPLOAD_MODES) == get_args(UploadMode), "UploadMode and UPLOAD_MODES disagree"


def as_evaluation(name: str, mode: UploadMode, *, has_span: bool) -> bool:
    """Whether score ``name`` is posted as an experiment evaluation in ``mode``.

    Example:
        >>> as_evaluation("field:hotel.area", "annotations", has_span=True)
        False
        >>> as_evaluation("state_accuracy", "annotations", has_span=True)
        True
    """
    field_score = name.startswith(FIELD_PREFIX) and has_span
    return not field_score or UPLOAD_MODES[mode].evaluations


def as_annotation(name: str, mode: UploadMode, *, has_span: bool) -> bool:
    """Whether score ``name`` is posted as a span annotation in ``mode``.

    Example:
        >>> as_annotation("field:hotel.area", "both", has_span=True)
        True
        >>> as_annotation("field:hotel.area", "both", has_span=False)
        False
    """
    return name.startswith(FIELD_PREFIX) and has_span and UPLOAD_MODES[mode].annotations
