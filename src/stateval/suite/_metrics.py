"""A suite's ``metrics:`` block: the pydantic model at the boundary, which resolves into the one
`stateval.compare.MetricOptions` a run scores with (``_metric_settings.py`` checks it against the
slot schema and reads the seen services).

``convention`` names an entry of `stateval.compare.CONVENTIONS`; every other key is one of its
settings, given to override the convention's or, without one, on its own.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stateval.compare import CONVENTIONS, SLOT_SCORERS, MetricOptions, resolve_options

__all__ = ["MetricsSpec"]


class MetricsSpec(BaseModel):
    """How a run's figures are computed: value precision / recall / F1 conventions, and a
    published scorer's figures (docs/concepts.md, "Scorer conventions")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    convention: str | None = Field(
        default=None,
        description="A published scorer whose figures the run also reports, named after it "
        "(e.g. sgd_joint_goal_accuracy): " + ", ".join(CONVENTIONS) + ". The settings below "
        "override its own.",
        json_schema_extra={"enum": [*CONVENTIONS, None]},
    )
    list_credit: Literal["all_or_nothing", "partial"] | None = Field(
        default=None,
        description="partial: a wrong list-valued field earns the F1 of its value list "
        "(default all_or_nothing).",
    )
    wrong_value: Literal["fp_and_fn", "fp"] | None = Field(
        default=None,
        description="fp: a wrong value is a false positive only (the first DSTC10 Track 2 "
        "scorer; its current one, convention: dstc10, counts both; default fp_and_fn).",
    )
    averaging: Literal["micro", "case"] | None = Field(
        default=None, description="case: the mean of each case's P/R/F1 (TRADE; default micro)."
    )
    scope: Literal["turn", "frame", "state"] | None = Field(
        default=None,
        description="The units of the convention's figures: turn (a case's scored slots in "
        "play), frame (each service a case names under slots.services_key, with every slot "
        "of that service; SGD) or state (a case with every field either state holds, and the "
        "schema's slots if any; mwzeval).",
    )
    matching: str | None = Field(
        default=None,
        description="How a slot both states hold scores in a unit: "
        + ", ".join(SLOT_SCORERS)
        + " (policies: the suite's match policies).",
        json_schema_extra={"enum": [*SLOT_SCORERS, None]},
    )
    joint: Literal["product", "all_right"] | None = Field(
        default=None,
        description="A unit's joint goal: the product of its slot scores, or all_right (each "
        "slot right only at score 1).",
    )
    aggregation: Literal["unit_mean", "pooled"] | None = Field(
        default=None,
        description="unit_mean: a figure is the mean of the units' own ratios (SGD's macro "
        "mean over frames); pooled: one ratio of sums over the units.",
    )
    drop_expected: list[str] | None = Field(
        default=None,
        description="Expected values the convention's figures read as no value (the scorer's "
        "references never hold them: mwzeval drops dontcare); [] keeps them.",
    )
    seen_services: list[str] | str | None = Field(
        default=None,
        description="Services seen in training, or a file listing them (a JSON/YAML list of "
        "names, or an SGD schema.json such as train/schema.json): adds the 'seen' slice "
        "(seen / unseen) of frame-scoped figures.",
    )

    @model_validator(mode="after")
    def _known(self) -> MetricsSpec:
        self.to_options()
        return self

    def to_options(self) -> MetricOptions:
        """The settings this block describes (ValueError naming an unknown one)."""
        return resolve_options(
            self.convention,
            list_credit=self.list_credit,
            wrong_value=self.wrong_value,
            averaging=self.averaging,
            scope=self.scope,
            matching=self.matching,
            joint=self.joint,
            aggregation=self.aggregation,
            drop_expected=None if self.drop_expected is None else tuple(self.drop_expected),
        )
