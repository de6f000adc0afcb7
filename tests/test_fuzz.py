"""Fuzzing the three input surfaces (issue 11) with a bounded number of Hypothesis examples.

bench/fuzz.py runs the same targets on 10,000+ inputs each and reports the figures in
docs/reliability.md; here each target gets a few hundred, every CI run, with new inputs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from fuzzing import (
    llm_output,
    llm_outputs,
    report_inputs,
    reports,
    state,
    state_inputs,
    suite,
    suite_files,
)

_FAST = settings(max_examples=300, suppress_health_check=list(HealthCheck))


@_FAST
@given(llm_outputs())
def test_any_llm_reply_is_parsed_or_rejected_and_an_accepted_one_never_breaks_later(
    raw: str,
) -> None:
    llm_output(raw)


@_FAST
@given(state_inputs())
def test_any_value_builds_a_state_or_is_a_state_error_and_a_built_state_compares(
    item: tuple[str, Any, Any],
) -> None:
    state(item)


@settings(max_examples=150, suppress_health_check=list(HealthCheck))
@given(suite_files())
def test_any_suite_file_loads_or_is_a_list_of_problems(item: tuple[str, str, str, str]) -> None:
    suite(item)


@settings(max_examples=40, suppress_health_check=list(HealthCheck), deadline=None)
@given(report_inputs())
def test_any_hostile_run_renders_in_every_report(
    item: tuple[str, str, dict[str, Any], dict[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory(prefix="stateval-fuzz-reports-") as folder:
        reports(item, Path(folder))
