"""A person filters a project's spans on the monitor's verdicts in the Phoenix UI (headless
Chromium): the verdicts written by ``stateval traces score`` are what the filter box finds."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from traces_app import MONITOR, crm_app, stored_spans

pytestmark = pytest.mark.phoenix

# filter condition -> (clean span shown, clobbering span shown)
EXPECTED = {
    "annotations['stateval:flags'].label == 'flagged'": (False, True),
    "annotations['stateval:flags'].label == 'ok'": (True, False),
    "annotations['flag:company'].label == 'unexplained_change'": (False, True),
}


def test_the_spans_tab_filters_on_the_verdicts(
    tmp_path: Path, phoenix_url: str, chromium: tuple[str, list[str]]
) -> None:
    from playwright.sync_api import sync_playwright

    project = f"ui-{uuid.uuid4().hex[:8]}"
    app = crm_app()
    provider = app.instrument(phoenix_url, project)
    tracer = provider.get_tracer("crm_app")
    profile = {"name": "Ada", "phone": "555-0100", "company": "Acme"}
    app.record_call(
        tracer, profile, "clean-one: my new number is 555-0199", {**profile, "phone": "555-0199"}
    )
    app.record_call(tracer, profile, "clobber-one: thanks!", {**profile, "company": "Initech"})
    provider.shutdown()
    asyncio.run(stored_spans(phoenix_url, project, 2))
    monitor = tmp_path / "monitor.yaml"
    monitor.write_text(MONITOR.format(project=project), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from stateval.cli import main; main()",
            "traces",
            "score",
            str(monitor),
            "--phoenix-url",
            phoenix_url,
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "STATEVAL_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 1, done.stderr  # one of two spans flagged: below 0.9
    project_id = httpx.get(f"{phoenix_url}/v1/projects/{project}", timeout=30).json()["data"]["id"]
    executable, flags = chromium
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            both = (
                "() => ['clean-one', 'clobber-one'].every(t => document.body.innerText.includes(t))"
            )
            shown = {}
            for condition, wanted in EXPECTED.items():
                # Each filter on a freshly opened spans tab.
                page.goto(f"{phoenix_url}/projects/{project_id}/spans")
                page.wait_for_function(both, timeout=120_000)
                editor = page.locator(".cm-content").first
                editor.click()
                # The tab's default condition, selected and typed over. Phoenix applies whatever
                # the editor holds once it validates (no key does), and applies an empty editor at
                # once: deleting first would apply "" and write it to the URL, and the URL's ""
                # coming back could overwrite the condition typed meanwhile (seen under load).
                page.keyboard.press("Control+A")
                page.keyboard.insert_text(condition)
                assert editor.inner_text() == condition
                # Applied: Phoenix writes the condition it applies to the address.
                page.wait_for_function(
                    "condition => new URL(location.href).searchParams.get('spanFilterCondition')"
                    " === condition",
                    arg=condition,
                    timeout=120_000,
                )
                page.wait_for_function(
                    "([clean, clobber]) => document.body.innerText.includes('clean-one') === clean"
                    " && document.body.innerText.includes('clobber-one') === clobber",
                    arg=list(wanted),
                    timeout=120_000,
                )
                text = page.inner_text("body")
                shown[condition] = ("clean-one" in text, "clobber-one" in text)
        finally:
            browser.close()
    assert shown == EXPECTED
