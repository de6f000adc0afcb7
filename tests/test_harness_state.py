"""State evaluators in the harness: resolvable by name, scored with stateval's comparison."""

from __future__ import annotations

import json

import pytest

from stateval import EvaluationConfigError, EvaluationDataset, EvaluationHarness, InterpretiveState
from stateval.harness import STATE_METRICS, EvaluatorRegistry, StateEvaluator


def _dataset() -> EvaluationDataset:
    pre = {"hotel.area": "north", "hotel.stars": "4"}
    return EvaluationDataset.from_list(
        [
            {  # right on the changed field, keeps the other
                "id": "good",
                "input": {"pre_state": pre},
                "reference": {"hotel.area": "north", "hotel.stars": "5"},
                "output": {"hotel.area": "north", "hotel.stars": "5"},
            },
            {  # right on the changed field, but clobbers hotel.area
                "id": "clobber",
                "input": {"pre_state": pre},
                "reference": {"hotel.area": "north", "hotel.stars": "5"},
                "output": {"hotel.area": "south", "hotel.stars": "5"},
            },
            {  # the full candidate form is read too, and the stale pre-state misses the change
                "id": "stale",
                "input": {"pre_state": pre},
                "reference": {"hotel.area": "north", "hotel.stars": "5"},
                "output": InterpretiveState.from_flat(pre).to_dict(),
            },
        ],
        name="hotels",
    )


def test_every_state_metric_is_registered_by_name() -> None:
    registry = EvaluatorRegistry()
    for metric in STATE_METRICS:
        options = {"schema": ["hotel.area"]} if metric == "slot_accuracy" else {}
        assert registry.resolve(metric, **options).name == metric


@pytest.mark.parametrize(
    ("metric", "scores"),
    [
        ("state_accuracy", [1.0, 0.5, 0.5]),
        ("overall_match", [1.0, 0.0, 0.0]),
        ("changed_fields_accuracy", [1.0, 1.0, 0.0]),
        ("preserved_fields_accuracy", [1.0, 0.0, 1.0]),
    ],
)
def test_harness_scores_states_per_sample(metric: str, scores: list[float]) -> None:
    evaluator = EvaluatorRegistry().resolve(metric)
    report = EvaluationHarness(pass_threshold=1.0).run_sync(_dataset(), evaluator)
    assert [r.score for r in report.results] == scores
    assert report.passed_samples == scores.count(1.0)
    assert report.failures == []


def test_slot_accuracy_counts_absent_in_both_as_correct() -> None:
    evaluator = StateEvaluator("slot_accuracy", schema=["hotel.area", "hotel.stars", "hotel.name"])
    report = EvaluationHarness().run_sync(_dataset(), evaluator)
    assert [round(r.score, 3) for r in report.results] == [1.0, 0.667, 0.667]


def test_policies_from_a_suite_style_mapping_apply() -> None:
    evaluator = StateEvaluator(
        "overall_match", policies={"*": {"normalize": ["case"], "synonyms": {"center": "centre"}}}
    )
    dataset = EvaluationDataset.from_list(
        [{"id": "a", "input": "", "reference": {"area": "Centre"}, "output": {"area": "center"}}]
    )
    assert EvaluationHarness().run_sync(dataset, evaluator).results[0].score == 1.0


def test_an_output_that_is_not_a_state_is_a_recorded_failure_not_a_crash() -> None:
    dataset = EvaluationDataset.from_list(
        [
            {"id": "ok", "input": "", "reference": {"a": 1}, "output": {"a": 1}},
            {"id": "bad", "input": "", "reference": {"a": 1}, "output": "not json at all"},
        ]
    )
    report = EvaluationHarness().run_sync(dataset, StateEvaluator())
    assert [r.score for r in report.results] == [1.0]
    assert [f.sample_id for f in report.failures] == ["bad"]
    assert "output: not a state" in report.failures[0].error


def test_explanations_name_the_wrong_fields() -> None:
    report = EvaluationHarness().run_sync(_dataset(), StateEvaluator("state_accuracy"))
    feedback = report.results[1].feedback
    assert "1 of 2 expected fields match" in feedback
    assert "hotel.area" in feedback
    assert "'north'" in feedback
    assert "'south'" in feedback
    assert json.dumps(report.results[1].metrics)  # JSON-able for reports


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"metric": "nope"}, "unknown state metric"),
        ({"metric": "slot_accuracy"}, "needs a schema"),
        ({"policies": {"*": {"fuzz": 1}}}, "policies"),
    ],
)
def test_bad_configuration_is_an_evaluation_config_error(
    kwargs: dict[str, object], problem: str
) -> None:
    with pytest.raises(EvaluationConfigError, match=problem):
        StateEvaluator(**kwargs)  # type: ignore[arg-type]
