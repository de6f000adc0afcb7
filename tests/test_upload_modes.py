"""The upload modes are typed once: the suite schema, the journal header and ``--fields-as``
all take exactly the names of `stateval.upload.UPLOAD_MODES`."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from stateval.cli import app
from stateval.run import RunHeader
from stateval.suite import suite_json_schema
from stateval.upload import UPLOAD_MODES, as_annotation, as_evaluation


def test_the_suite_schema_lists_the_upload_modes() -> None:
    schema = suite_json_schema()
    phoenix = schema["$defs"]["PhoenixSpec"]["properties"]["fields_as"]
    assert phoenix["enum"] == list(UPLOAD_MODES)


def test_the_journal_header_takes_the_upload_modes_only() -> None:
    base = {"suite_path": "s", "suite_name": "s", "suite_hash": "h", "cases_hash": "h"}
    for mode in UPLOAD_MODES:
        assert RunHeader(**base, case_ids=[], fields_as=mode).fields_as == mode
    with pytest.raises(ValidationError):
        RunHeader(**base, case_ids=[], fields_as="spans")


def test_fields_as_on_the_command_line_names_every_mode() -> None:
    result = CliRunner().invoke(app, ["run", "nowhere.yaml", "--fields-as", "spans"])
    assert result.exit_code == 2
    assert f"expected one of {', '.join(UPLOAD_MODES)}" in result.output


@pytest.mark.parametrize(
    ("mode", "evaluation", "annotation"),
    [
        ("evaluations", True, False),
        ("annotations", False, True),
        ("both", True, True),
        ("failing", False, True),
    ],
)
def test_each_mode_posts_a_field_score_as_its_table_says(
    mode: str, evaluation: bool, annotation: bool
) -> None:
    assert as_evaluation("field:a", mode, has_span=True) is evaluation  # type: ignore[arg-type]
    assert as_annotation("field:a", mode, has_span=True) is annotation  # type: ignore[arg-type]
    assert as_evaluation("field:a", mode, has_span=False) is True  # type: ignore[arg-type]
    assert as_evaluation("state_accuracy", mode, has_span=True) is True  # type: ignore[arg-type]


def test_failing_mode_leaves_out_passing_field_scores_only() -> None:
    assert as_annotation("field:a", "failing", has_span=True, score=0.5) is True
    assert as_annotation("field:a", "failing", has_span=True, score=1.0) is False
    assert as_annotation("field:a", "failing", has_span=True) is True  # no score: shown
    assert as_evaluation("field:a", "failing", has_span=False, score=0.0) is True
    assert as_evaluation("field:a", "failing", has_span=False, score=1.0) is False
    assert as_evaluation("state_accuracy", "failing", has_span=True, score=1.0) is True
    assert as_annotation("state_accuracy", "failing", has_span=True, score=0.0) is False
