"""Opening a span (its status set from how the block ended) and the JSON its attributes hold."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass

from opentelemetry import trace as trace_api
from opentelemetry.trace import Span, Status, StatusCode, Tracer

__all__ = ["open_span", "to_json"]


@contextmanager
def open_span(
    tracer: Tracer,
    name: str,
    attributes: Mapping[str, str],
    links: Sequence[trace_api.Link] = (),
) -> Iterator[Span]:
    with tracer.start_as_current_span(
        name,
        attributes=attributes,
        links=links,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            raise
        span.set_status(Status(StatusCode.OK))


def to_json(value: object) -> str:
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _json_default(value: object) -> object:
    for method in ("to_dict", "model_dump"):
        fn = getattr(value, method, None)
        if callable(fn):
            return fn()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)
