"""The instrumented example app of examples/traces, imported by the traces tests, and a poll
that waits until Phoenix has stored a project's spans."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType

from stateval.upload import PhoenixUploader, SpanFilter

_APP = Path(__file__).resolve().parent.parent / "examples" / "traces" / "crm_app.py"


def crm_app() -> ModuleType:
    """examples/traces/crm_app.py as a module."""
    spec = importlib.util.spec_from_file_location("crm_app", _APP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def stored_spans(
    url: str, project: str, at_least: int, where: SpanFilter | None = None
) -> int:
    """How many spans ``project`` holds, once it holds at least ``at_least`` (polled)."""
    async with PhoenixUploader(url) as phoenix:
        while True:
            count = 0
            async for page in phoenix.span_pages(project, where, page_size=1000):
                count += len(page)
            if count >= at_least:
                return count
            await asyncio.sleep(0.2)
