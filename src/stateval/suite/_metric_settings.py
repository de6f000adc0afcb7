"""A suite's ``metrics:`` block read into the run's `stateval.compare.MetricOptions` and the
services seen in training, with a problem line for what the slot schema cannot carry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from stateval.compare import MetricOptions
from stateval.suite._documents import DocumentError, parse_yaml, read_document
from stateval.suite._metrics import MetricsSpec
from stateval.suite._problems import display_path, format_problem
from stateval.suite._slot_schema import SlotSchema, SlotSchemaError

__all__ = ["metric_settings", "scorer_label"]


def metric_settings(
    spec: MetricsSpec,
    schema: SlotSchema | None,
    services_key: str | None,
    base: Path,
    label: str,
    locate: Callable[[tuple[str | int, ...]], int | None],
    problems: list[str],
) -> tuple[MetricOptions, frozenset[str] | None]:
    """The run's metric options and seen services, adding a problem line for a convention
    the slot schema cannot carry (frame scope also needs ``slots.services_key``: the frames
    are the services each case names) or a seen-services file that cannot be read."""
    options = spec.to_options()
    where = locate(("metrics",))
    what = scorer_label(options)
    if options.scope in ("turn", "frame") and schema is None:  # "state" needs no slot list
        problems.append(format_problem(label, where, None, "metrics", f"{what} needs 'slots'"))
    elif options.scope == "frame" and schema is not None and not schema.has_services:
        message = (
            f"{what} scores service frames: 'slots' must be a schema with services "
            "(slots: {file: schema.json, services_key: metadata.services})"
        )
        problems.append(format_problem(label, where, None, "metrics", message))
    elif options.scope == "frame" and services_key is None:
        message = (
            f"{what} scores the service frames each case names: set it to the case metadata "
            "key listing them (slots: {file: schema.json, services_key: metadata.services})"
        )
        at = locate(("slots",))
        problems.append(format_problem(label, at, None, "slots.services_key", message))
    seen = spec.seen_services
    if seen is None or isinstance(seen, list):
        return options, None if seen is None else frozenset(seen)
    return options, _read_seen(base / seen, label, locate(("metrics", "seen_services")), problems)


def scorer_label(options: MetricOptions) -> str:
    """What scores the units, for a problem line: ``convention 'sgd'`` or ``scope 'frame'``."""
    if options.convention is not None:
        return f"convention {options.convention!r}"
    return f"scope {options.scope!r}"


def _read_seen(
    path: Path, label: str, line: int | None, problems: list[str]
) -> frozenset[str] | None:
    field = "metrics.seen_services"
    try:
        value: Any = parse_yaml(read_document(path))
    except DocumentError as exc:
        problems.append(format_problem(label, line, None, field, f"cannot read: {exc.message}"))
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    try:
        return frozenset(SlotSchema.from_data(value).services)
    except SlotSchemaError as exc:
        message = f"{display_path(path)} is neither a list of services nor a schema: {exc}"
        problems.append(format_problem(label, line, None, field, message))
        return None
