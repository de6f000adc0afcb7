"""A small CRM-profile updater instrumented with OpenInference, sending its spans to Phoenix.

It knows nothing of stateval: each call of `update_profile` is a CHAIN span named
``update_profile`` whose ``input.value`` is ``{"profile": {...}, "email": "..."}`` and whose
``output.value`` is the updated profile, exported over OTLP/HTTP by the OpenTelemetry SDK. A
customer's e-mail thread is one session (``session.id``).

    python examples/traces/crm_app.py http://127.0.0.1:6006 crm-profile-updater

sends a few calls (one of them clobbers a phone number with the one in an e-mail signature);
``stateval traces score examples/traces/monitor.yaml`` then scores them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from openinference.semconv.resource import ResourceAttributes
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Tracer

SPAN_NAME = "update_profile"

_PHONE = re.compile(r"\+?\d[\d\s().-]{6,}\d")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def instrument(phoenix_url: str, project: str) -> TracerProvider:
    """A tracer provider exporting to Phoenix's OTLP/HTTP endpoint under ``project``."""
    resource = Resource.create({ResourceAttributes.PROJECT_NAME: project})
    provider = TracerProvider(resource=resource)
    # a busy collector may take more than the default 10 s to answer: the batch would be dropped
    exporter = OTLPSpanExporter(endpoint=f"{phoenix_url.rstrip('/')}/v1/traces", timeout=60)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=65_536))
    return provider


def update_profile(profile: Mapping[str, Any], email: str) -> dict[str, Any]:
    """The mutator: takes the first phone number, e-mail address and date the e-mail holds.

    Naive on purpose: a phone number in a signature replaces the profile's phone.
    """
    updated = dict(profile)
    for key, pattern in (("phone", _PHONE), ("email", _EMAIL), ("renewal_date", _DATE)):
        found = pattern.search(email)
        if found:
            updated[key] = found.group(0).strip()
    return updated


def record_call(
    tracer: Tracer,
    profile: Mapping[str, Any],
    email: str,
    updated: Mapping[str, Any],
    *,
    session_id: str | None = None,
) -> str:
    """Record one call as its span (what the instrumentation of `traced_update` writes);
    returns the span id (16 hex digits)."""
    attributes: dict[str, Any] = {
        SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.CHAIN.value,
        SpanAttributes.INPUT_VALUE: json.dumps({"profile": dict(profile), "email": email}),
        SpanAttributes.INPUT_MIME_TYPE: "application/json",
        SpanAttributes.OUTPUT_VALUE: json.dumps(dict(updated)),
        SpanAttributes.OUTPUT_MIME_TYPE: "application/json",
    }
    if session_id is not None:
        attributes[SpanAttributes.SESSION_ID] = session_id
    with tracer.start_as_current_span(SPAN_NAME, attributes=attributes) as span:
        return format(span.get_span_context().span_id, "016x")


def traced_update(
    tracer: Tracer, profile: Mapping[str, Any], email: str, *, session_id: str | None = None
) -> dict[str, Any]:
    """`update_profile`, traced."""
    updated = update_profile(profile, email)
    record_call(tracer, profile, email, updated, session_id=session_id)
    return updated


_THREAD = [
    (
        {"name": "Ada Lovelace", "phone": "555-0100", "email": "ada@example.com"},
        "Hi, my new number is 555-0199, please update it.",
    ),
    (
        {"name": "Ada Lovelace", "phone": "555-0199", "email": "ada@example.com"},
        "Also renew my plan on 2027-01-31. Thanks!",
    ),
    (
        {"name": "Ada Lovelace", "phone": "555-0199", "email": "ada@example.com"},
        "Please use ada.lovelace@example.org from now on.\n--\nSupport desk +1 212 555 0142",
    ),
]


def main(argv: list[str]) -> int:
    """Send the example thread of three calls to the Phoenix at ``argv[0]``."""
    url, project = (argv + ["http://127.0.0.1:6006", "crm-profile-updater"][len(argv) :])[:2]
    provider = instrument(url, project)
    tracer = provider.get_tracer("crm_app")
    for profile, email in _THREAD:
        traced_update(tracer, profile, email, session_id="thread-ada")
    provider.shutdown()
    print(f"sent {len(_THREAD)} calls to {url} (project {project})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
