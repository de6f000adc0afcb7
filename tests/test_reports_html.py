"""The HTML report: self-contained, every section, and charts a real browser draws."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from stateval.reports import HtmlSection, html_report, write_html_report
from stateval.run import RunSummary, start_journal
from stateval.suite import Suite
from stateval.upload import run_suite

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


@pytest.fixture
def summary(judged_suite: Callable[..., Suite], tmp_path: Path) -> RunSummary:
    suite = judged_suite(thresholds={"judge_kappa": 0.6})
    journal = start_journal(tmp_path / ".stateval", suite)
    outcome = asyncio.run(run_suite(suite, journal, concurrency=2))
    return outcome.summary


def test_the_page_is_self_contained(summary: RunSummary) -> None:
    page = html_report(summary)
    assert not re.search(r"<script|<link|<iframe|<img|@import|url\((?!#)", page)
    # every link is an in-page anchor (or into Phoenix, which this local run does not have)
    assert set(re.findall(r'href="([^"#][^"]*)"', page)) == set()
    assert page.count('<svg class="chart"') == 3  # fields, reliability, triage


def test_the_page_has_every_section_and_figure(summary: RunSummary) -> None:
    page = html_report(summary)
    for anchor in ("thresholds", "fields", "calibration", "judge-agreement", "failing-cases"):
        assert f'<section id="{anchor}">' in page
    assert "judge_kappa" in page
    assert "FAILED" in page  # kappa 0.5 is below 0.6
    assert "not measurable: every value has confidence 0.8" in page
    assert "1 disagreements" in page
    assert "&#x27;Ann&#x27;" in page  # user text is escaped


def test_extra_sections_plug_in_before_the_failing_cases(summary: RunSummary) -> None:
    extra = HtmlSection("Regressions since baseline", "<p>none</p>")
    page = html_report(summary, sections=[extra])
    assert '<section id="regressions-since-baseline"><h2>Regressions since baseline</h2>' in page
    assert page.index("regressions-since-baseline") < page.index('<section id="failing-cases">')
    assert '<a href="#regressions-since-baseline">' in page


def test_a_phoenix_run_links_to_its_experiment(summary: RunSummary) -> None:
    from dataclasses import replace

    url = "http://127.0.0.1:6006/datasets/RGF0/compare?experimentId=RXhw"
    page = html_report(replace(summary, experiment_url=url))
    assert f'href="{url}"' in page.replace("&amp;", "&")


def _browser_or_skip() -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"no {CHROMIUM} (apt-get install chromium)")


def test_chromium_draws_every_chart(summary: RunSummary, tmp_path: Path) -> None:
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    path = tmp_path / "report.html"
    write_html_report(summary, path)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            charts = page.evaluate(
                """() => [...document.querySelectorAll('svg.chart')].map(svg => {
                    const box = svg.getBoundingClientRect();
                    const marks = {};  // bars and curves (their SVG ids) -> drawn size
                    for (const g of svg.querySelectorAll('g[id]')) {
                        if (!/^(bar|bin|curve)-/.test(g.id)) continue;
                        const b = g.getBoundingClientRect();
                        marks[g.id] = [b.width, b.height];
                    }
                    const texts = [...svg.querySelectorAll('text')].map(t => t.textContent);
                    return {name: svg.dataset.chart, width: box.width, height: box.height,
                            marks, texts};
                })"""
            )
        finally:
            browser.close()
    assert requests == [path.as_uri()]  # nothing else was fetched
    by_name = {c["name"]: c for c in charts}
    assert list(by_name) == ["fields", "reliability", "triage"]
    for chart in charts:
        assert chart["width"] > 100, chart["name"]
        assert chart["height"] > 100, chart["name"]
    fields = by_name["fields"]
    assert {"user.name", "user.city"} <= set(fields["texts"])
    # user.name is right in 4 of 5 cases: a bar 80% long; user.city (0%) has an empty bar
    assert fields["marks"]["bar-user.name"][0] > 100
    assert fields["marks"]["bar-user.city"][0] < 1
    # the pooled values: 0.4 (wrong), 0.5, 0.6, 0.7, 0.8 x5, 0.9 -> 6 non-empty bins, the
    # first with no right value (a bar of height 0), the others all right (full height)
    reliability = by_name["reliability"]
    assert sorted(reliability["marks"]) == [f"bin-{i}" for i in range(6)]
    heights = [reliability["marks"][f"bin-{i}"][1] for i in range(6)]
    assert heights[0] < 1
    assert min(heights[1:]) > 100
    assert any("ECE" in t for t in reliability["texts"])
    triage = by_name["triage"]
    assert {"curve-(all fields)", "curve-user.name"} <= set(triage["marks"])
    assert all(w > 100 and h > 20 for w, h in triage["marks"].values())
