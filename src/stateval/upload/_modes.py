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
- ``failing``: what a person looks at. The case-level scores are experiment evaluations; only
  the fields that did not pass (score below 1) are span annotations, queued on the server's
  bulk inserter (no wait for span ingestion; read back until stored), and the experiment's
  metadata gets the per-field means. Passing fields are counted in the means only.

A field score whose case has no recorded span stays an experiment evaluation (in ``failing``
mode only when it did not pass).
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
        failing_only: Only the field scores below 1 are posted (the rest are counted in the
            experiment's per-field means).
        queued: Span annotations go to the server's bulk inserter and are read back, instead
            of ``sync=true`` requests that wait for the spans' ingestion.
    """

    evaluations: bool
    annotations: bool
    failing_only: bool = False
    queued: bool = False


UPLOAD_MODES: dict[UploadMode, ModeSpec] = {
    "evaluations": ModeSpec(evaluations=True, annotations=False),
    "annotations": ModeSpec(evaluations=False, annotations=True),
    "both": ModeSpec(evaluations=True, annotations=True),
    "failing": ModeSpec(evaluations=False, annotations=True, failing_only=True, queued=True),
}
"""Every upload mode, by name, in the order the CLI lists them."""

assert tuple(UPLOAD_MODES) == get_args(UploadMode), "UploadMode and UPLOAD_MODES disagree"


def _left_out(name: str, spec: ModeSpec, score: float | None) -> bool:
    """A passing field score in a mode that posts failing ones only."""
    return spec.failing_only and name.startswith(FIELD_PREFIX) and score is not None and score >= 1


def as_evaluation(
    name: str, mode: UploadMode, *, has_span: bool, score: float | None = None
) -> bool:
    """Whether score ``name`` (of value ``score``) is posted as an experiment evaluation in
    ``mode``.

    Example:
        >>> as_evaluation("field:hotel.area", "annotations", has_span=True)
        False
        >>> as_evaluation("state_accuracy", "annotations", has_span=True)
        True
        >>> as_evaluation("field:hotel.area", "failing", has_span=False, score=1.0)
        False
    """
    spec = UPLOAD_MODES[mode]
    field_score = name.startswith(FIELD_PREFIX) and has_span
    return (not field_score or spec.evaluations) and not _left_out(name, spec, score)


def as_annotation(
    name: str, mode: UploadMode, *, has_span: bool, score: float | None = None
) -> bool:
    """Whether score ``name`` (of value ``score``) is posted as a span annotation in ``mode``.

    Example:
        >>> as_annotation("field:hotel.area", "both", has_span=True)
        True
        >>> as_annotation("field:hotel.area", "both", has_span=False)
        False
        >>> as_annotation("field:hotel.area", "failing", has_span=True, score=0.0)
        True
        >>> as_annotation("field:hotel.area", "failing", has_span=True, score=1.0)
        False
    """
    spec = UPLOAD_MODES[mode]
    field_score = name.startswith(FIELD_PREFIX) and has_span
    return field_score and spec.annotations and not _left_out(name, spec, score)
