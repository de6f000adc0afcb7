"""`stateval traces mutate` against a real Phoenix: spans sent over real OTLP by the example's
instrumented app, sampled, degraded with the state operators, and the monitor's checks measured
on them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path

import pytest

from stateval.upload import PhoenixUploader, SpanFilter, StoredSpan, StoredSpanAnnotation
from traces_app import send_calls, stateval_cli
from traces_app import write_monitor as _monitor

pytestmark = pytest.mark.phoenix


def _calls(n: int) -> list[tuple[dict[str, object], str]]:
    calls: list[tuple[dict[str, object], str]] = []
    for i in range(n):
        profile = {"name": f"Person {i}", "phone": f"555-{1000 + i}", "email": f"p{i}@example.com"}
        if i % 3 == 0:
            email = f"Please use my new email p{i}@mail.example.org for invoices."
        else:
            email = f"My new phone number is 555-{2000 + i}, please update it."
        calls.append((profile, email))
    return calls


@pytest.fixture(scope="module")
def project(phoenix_url: str) -> str:
    name = f"crm-recall-{uuid.uuid4().hex[:8]}"
    send_calls(phoenix_url, name, _calls(60))
    return name


def _mutate(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return stateval_cli(folder, "traces", "mutate", *args)


def test_recall_per_operator_and_check_with_the_survivors_and_their_fix(
    tmp_path: Path, phoenix_url: str, project: str
) -> None:
    monitor = _monitor(tmp_path, project, unexplained_changes=True)
    args = ("--sample", "40", "--seed", "3", "--phoenix-url", phoenix_url)
    done = _mutate(tmp_path, str(monitor), *args, "--report-json", "r.json", "--markdown", "r.md")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["calls"] == 40
    assert (tmp_path / "r.md").read_text().startswith("# Monitor recall: crm\n")
    assert report["original_flag_rate"] == 0.0
    operators = report["operators"]
    assert operators["clobber_field"]["recall"] == 1.0
    # A perturbed phone number is still "explained" (the e-mail mentions the phone): without
    # grounding no check sees it, and the survivor says what would.
    assert operators["perturb_value"]["applied"] == 40
    assert operators["perturb_value"]["recall"] == 0.0
    survivors = {(s["operator"], s["path"]): s for s in report["survivors"]}
    assert survivors[("perturb_value", "phone")]["suggestion"] == (
        "ground phone in the input: add it to `grounded:`"
    )
    assert "recall per operator" in done.stdout
    assert "perturb_value on phone" in done.stdout

    # The figures are in the monitored project: a span holding the report, one annotation per
    # operator with its recall as the score.
    assert "figures in Phoenix: span " in done.stderr
    assert f"{phoenix_url}/redirects/spans/" in done.stderr
    published = done.stderr.split("figures in Phoenix: span ", 1)[1].split()[0]
    spans, annotations = asyncio.run(_figures(phoenix_url, project, published))
    [span] = [s for s in spans if s.span_id == published]
    assert json.loads(span.attributes["output.value"])["operators"] == operators
    scores = {a.name: a.score for a in annotations}
    assert scores["recall:clobber_field"] == 1.0
    assert scores["recall:perturb_value"] == 0.0
    assert "recall:hallucinate_field" in scores

    grounded = _monitor(
        tmp_path, project, "grounded", unexplained_changes=True, grounded=["phone", "email"]
    )
    again = _mutate(tmp_path, str(grounded), *args, "--report-json", "g.json", "--no-publish")
    assert again.returncode == 0, again.stdout + again.stderr
    fixed = json.loads((tmp_path / "g.json").read_text())
    assert fixed["operators"]["perturb_value"]["recall"] >= 0.9
    assert ("perturb_value", "phone") not in {
        (s["operator"], s["path"]) for s in fixed["survivors"]
    }

    repeat = _mutate(tmp_path, str(monitor), *args, "--report-json", "r2.json", "--no-publish")
    assert repeat.returncode == 0
    assert json.loads((tmp_path / "r2.json").read_text()) == report


async def _figures(
    url: str, project: str, span_id: str
) -> tuple[list[StoredSpan], list[StoredSpanAnnotation]]:
    async with PhoenixUploader(url) as phoenix:
        spans: list[StoredSpan] = []
        async for page in phoenix.span_pages(
            project, SpanFilter(names=("stateval.monitor.recall",))
        ):
            spans.extend(page)
        return spans, await phoenix.list_span_annotations(project, [span_id])


def test_a_recall_below_fail_under_exits_1(tmp_path: Path, phoenix_url: str, project: str) -> None:
    monitor = _monitor(tmp_path, project, unexplained_changes=True)
    done = _mutate(
        tmp_path,
        str(monitor),
        "--sample",
        "20",
        "--fail-under",
        "0.99",
        "--phoenix-url",
        phoenix_url,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is below --fail-under 99.0%" in done.stderr


def test_bad_input_is_one_line(tmp_path: Path, phoenix_url: str, project: str) -> None:
    monitor = _monitor(tmp_path, project, unexplained_changes=True)
    unknown = _mutate(
        tmp_path, str(monitor), "--operators", "drop_everything", "--phoenix-url", phoenix_url
    )
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        "error: --operators: unknown state operator 'drop_everything'; known: "
        + unknown.stderr.split("known: ", 1)[1].strip()
    ]
    empty = _monitor(tmp_path, f"no-such-project-{uuid.uuid4().hex[:6]}")
    nothing = _mutate(tmp_path, str(empty), "--phoenix-url", phoenix_url)
    assert nothing.returncode in (2, 3)
    assert len(nothing.stderr.strip().splitlines()) == 1
    assert "Traceback" not in nothing.stderr
