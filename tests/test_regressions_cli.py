"""``stateval diff`` and ``stateval run --baseline`` on local runs (the journal)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.run import Journal, list_runs

MUTATOR = """
from pathlib import Path
from stateval.state import ValueConfidence

def track(state, input):
    mode = Path(__file__).with_name("mode").read_text().strip()
    name, city, index = input.prompt.split()
    out = state.copy()
    out.set_value("user.name", ValueConfidence(name, 1.0))
    wrong = mode == "bad" and int(index) < 15
    out.set_value("user.city", ValueConfidence("Nowhere" if wrong else city, 1.0))
    return out
"""

N = 24
ROOT = Path(__file__).resolve().parents[1]


def _suite(name: str, thresholds: dict[str, object] | None = None) -> dict[str, object]:
    cases = [
        {
            "id": f"case-{i:02d}",
            "input": {"prompt": f"Ada{i} City{i} {i}"},
            "expected_post_state": {"user.name": f"Ada{i}", "user.city": f"City{i}"},
        }
        for i in range(N)
    ]
    suite: dict[str, object] = {
        "name": "cities",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
    }
    if thresholds is not None:
        suite["thresholds"] = thresholds
    return suite


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    name = "diff_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(_suite(name), sort_keys=False))
    gated = _suite(name, {"regressions": {"max_regressed_fields": 0, "alpha": 0.05}})
    (tmp_path / "gated.yaml").write_text(yaml.safe_dump(gated, sort_keys=False))
    return tmp_path


def _run(project: Path, mode: str, *args: str, suite: str = "suite.yaml") -> tuple[int, str]:
    (project / "mode").write_text(mode)
    result = CliRunner().invoke(app, ["run", suite, "--no-phoenix", *args])
    return result.exit_code, result.output


def test_diff_latest_against_the_run_before_names_the_regressed_field(project: Path) -> None:
    assert _run(project, "good")[0] == 0
    assert _run(project, "bad")[0] == 0  # no thresholds, no baseline: the run passes
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["regressed_fields"] == ["user.city"]
    assert data["n_paired"] == N
    assert (data["added"], data["removed"]) == ([], [])
    city = data["fields"][0]
    assert (city["path"], city["regressed"], city["improved"], city["n"]) == ("user.city", 15, 0, N)
    assert city["regressed_cases"] == [f"case-{i:02d}" for i in range(15)]
    assert city["p_value"] == pytest.approx(2 / 2**15)
    name = next(f for f in data["fields"] if f["path"] == "user.name")
    assert name["verdict"] == "no evidence"
    metrics = {m["name"]: m for m in data["metrics"]}
    assert metrics["overall_match_rate"]["change"] == pytest.approx(-15 / N)
    assert metrics["overall_match_rate"]["verdict"] == "regressed"
    assert metrics["overall_match_rate"]["high"] < 0
    assert data["gate"]["passed"] is False


def test_diff_by_run_id_prints_a_table_and_fails_on_regression(project: Path) -> None:
    _run(project, "good")
    _run(project, "bad")
    home = project / ".stateval"
    headers = sorted(
        (Journal.open(home, r).header for r in list_runs(home)), key=lambda h: h.created_at
    )
    old, new = (h.run_id for h in headers)
    result = CliRunner().invoke(app, ["diff", old, new, "--fail-on-regression"])
    assert result.exit_code == 1
    assert "user.city" in result.output
    assert "1 field(s) regressed" in result.output
    assert f"run {old} -> run {new}" in result.output
    # The other way round, the field improved: nothing regressed, the gate passes.
    back = CliRunner().invoke(app, ["diff", new, old, "--fail-on-regression"])
    assert back.exit_code == 0, back.output
    assert "0 field(s) regressed, 1 improved" in back.output


def test_diff_markdown_is_a_pull_request_comment(project: Path) -> None:
    _run(project, "good")
    _run(project, "bad")
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--markdown"])
    assert result.exit_code == 0
    assert result.output.startswith("### :x: stateval: 1 field(s) regressed, 0 improved")
    assert "| `user.city` | 24 | 15 | 0 | 100.0% | 37.5% | -62.5pt |" in result.output


def test_diff_counts_cases_missing_from_one_run(project: Path) -> None:
    _run(project, "good", "--limit", "20")
    _run(project, "good")
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest"])
    assert result.exit_code == 0, result.output
    assert "20 paired cases; 4 only in the candidate (added): case-20, case-21" in result.output


def test_run_with_a_baseline_prints_the_diff_and_the_suite_gate_fails_it(project: Path) -> None:
    assert _run(project, "good", suite="gated.yaml")[0] == 0
    code, output = _run(project, "bad", "--baseline", "latest", suite="gated.yaml")
    assert code == 1
    assert "stateval diff" in output
    assert "regression gate: regressed_fields 1.000 <= 0.000 FAILED" in output
    # Without a gate block the diff is shown but only --fail-on-regression fails the run.
    assert _run(project, "good")[0] == 0
    code, output = _run(project, "good", "--baseline", "latest")
    assert code == 0, output
    assert "0 field(s) regressed" in output


def test_run_with_fail_on_regression_writes_the_diff_into_the_reports(project: Path) -> None:
    assert _run(project, "good")[0] == 0
    code, _ = _run(
        project,
        "bad",
        "--baseline",
        "latest",
        "--fail-on-regression",
        "--report-json",
        "r.json",
        "--markdown",
        "r.md",
    )
    assert code == 1
    report = json.loads((project / "r.json").read_text())
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    assert report["regressions"]["regressed_fields"] == ["user.city"]
    assert report["regressions"]["gate"]["passed"] is False
    assert "1 field(s) regressed" in (project / "r.md").read_text()


def _regression_rows(page: str) -> dict[str, list[str]]:
    """The regression section's per-field table: field -> its cells as text."""
    section = page[page.index('<section id="regressions">') :]
    section = section[: section.index("</table>")]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", section)[1:]:
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        rows[cells[0]] = cells[1:]
    return rows


def test_run_with_a_baseline_puts_the_regressions_into_the_html_report(project: Path) -> None:
    assert _run(project, "good", "--limit", "22")[0] == 0
    code, output = _run(project, "bad", "--baseline", "latest", "--report-html", "r.html")
    assert code == 0, output  # no gate block and no --fail-on-regression: shown, not gated
    page = (project / "r.html").read_text()
    assert '<a href="#regressions">Regressions against the baseline</a>' in page
    assert page.index('<section id="regressions">') < page.index('<section id="failing-cases">')
    assert "<b>22</b> paired cases, <b>2</b> added (only in the candidate)" in page
    assert "Added: case-22, case-23" in page
    assert '<span class="bad">1 field(s) regressed, 0 improved</span>' in page
    rows = _regression_rows(page)
    assert list(rows) == ["user.city", "user.name"]  # the regression first
    # n paired, improved, regressed, unchanged, baseline, candidate, change, p, Holm p, verdict;
    # user.name changed in too few cases to ever be significant: left out of Holm's family
    # (Tarone), so user.city's Holm p is its own p
    assert rows["user.city"] == [
        "22", "0", "15", "7", "100.0%", "31.8%", "-68.2pt", "6.1e-05", "6.1e-05", "regressed",
    ]  # fmt: skip
    assert rows["user.name"][-2:] == ["1", "no evidence"]
    metrics = page[page.index("<h3>Run metrics</h3>") :]
    assert re.search(r"<td>overall_match_rate</td>.*?<td[^>]*>\[-\d", metrics)
    assert "In Phoenix" not in page  # local runs: no compare pages


def test_diff_writes_an_html_page(project: Path) -> None:
    _run(project, "good")
    _run(project, "bad")
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--report-html", "d.html"])
    assert result.exit_code == 0, result.output
    page = (project / "d.html").read_text()
    assert '<span class="verdict failed">REGRESSED</span>' in page
    assert _regression_rows(page)["user.city"][-1] == "regressed"
    assert not re.search(r"<script|<link|<img|url\(", page)  # self-contained


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "latest~5", "latest"], "latest~5: "),
        (["diff", "nope", "latest", "--phoenix-url", "http://127.0.0.1:9"], "Phoenix at"),
        (["diff", "http://127.0.0.1:9/projects/x", "latest"], "not a Phoenix experiment URL"),
        (["run", "suite.yaml", "--no-phoenix", "--baseline", "nope"], "drop --no-phoenix"),
        (["diff", "latest", "latest", "--alpha", "1"], "--alpha must be between 0 and 1"),
    ],
)
def test_bad_names_are_one_clear_line(project: Path, args: list[str], message: str) -> None:
    _run(project, "good")
    result = CliRunner().invoke(app, args)
    # An unreachable Phoenix is an infrastructure failure (3), a bad name a usage error (2).
    assert result.exit_code == (3 if message == "Phoenix at" else 2)
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    assert message in lines[0]
    assert "Traceback" not in result.output


# -- end to end against a real Phoenix ------------------------------------------------------------


def _stateval(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("stateval")), *args]
    env = {**os.environ, "STATEVAL_HOME": str(project / ".stateval")}
    return subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, check=False
    )


def _compared_cases(phoenix_url: str, url: str) -> tuple[list[str], str]:
    """Open a compare-page URL's data: the cases Phoenix's compare view lists under the URL's
    experiments and filter (its own GraphQL query over HTTP), and the page itself."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    base, cand = query["experimentId"]
    page = httpx.get(url, timeout=60)
    assert page.status_code == 200
    body = {
        "query": """query ($base: ID!, $cands: [ID!]!, $filter: String) {
            compareExperiments(baseExperimentId: $base, compareExperimentIds: $cands,
                               filterCondition: $filter, first: 1000) {
              edges { node { example { revision { metadata } } } } } }""",
        "variables": {"base": base, "cands": [cand], "filter": query["filterCondition"][0]},
    }
    answer = httpx.post(f"{phoenix_url}/graphql", json=body, timeout=60).json()
    assert "errors" not in answer, answer
    edges = answer["data"]["compareExperiments"]["edges"]
    return sorted(e["node"]["example"]["revision"]["metadata"]["case_id"] for e in edges), base


def _field_scores(phoenix_url: str, experiment_id: str, name: str) -> dict[str, float]:
    """Case id -> the evaluation ``name`` of an experiment, read over REST."""
    experiment = httpx.get(f"{phoenix_url}/v1/experiments/{experiment_id}", timeout=60).json()
    data = experiment["data"]
    examples = httpx.get(
        f"{phoenix_url}/v1/datasets/{data['dataset_id']}/examples",
        params={"version_id": data["dataset_version_id"]},
        timeout=60,
    ).json()["data"]["examples"]
    case_of = {e["node_id"]: e["metadata"]["case_id"] for e in examples}
    runs = httpx.get(f"{phoenix_url}/v1/experiments/{experiment_id}/json", timeout=60).json()
    return {
        case_of[r["example_id"]]: a["score"]
        for r in runs
        for a in r["annotations"]
        if a["name"] == name
    }


@pytest.mark.phoenix
def test_end_to_end_against_phoenix(project: Path, phoenix_url: str) -> None:
    suite = yaml.safe_load((project / "gated.yaml").read_text())
    suite["phoenix"] = {"dataset": f"regressions-{uuid.uuid4().hex[:8]}"}
    (project / "gated.yaml").write_text(yaml.safe_dump(suite))
    (project / "mode").write_text("good")
    first = _stateval(project, "run", "gated.yaml", "--phoenix-url", phoenix_url)
    assert first.returncode == 0, first.stderr
    (project / "mode").write_text("bad")
    second = _stateval(
        project,
        "run",
        "gated.yaml",
        "--phoenix-url",
        phoenix_url,
        "--baseline",
        "latest",
        "--report-json",
        "r.json",
        "--report-html",
        "r.html",
    )
    assert second.returncode == 1, second.stderr
    assert "regression gate: regressed_fields 1.000 <= 0.000 FAILED" in second.stdout
    report = json.loads((project / "r.json").read_text())["regressions"]
    assert report["regressed_fields"] == ["user.city"]
    city = report["fields"][0]

    # The compare page's filter lists exactly the regressed cases, as Phoenix itself reads it.
    regressed = [f"case-{i:02d}" for i in range(15)]
    cases, base_id = _compared_cases(phoenix_url, city["compare_url"])
    assert cases == regressed
    # ...and over REST those cases are right in the baseline and wrong in the candidate.
    cand_id = parse_qs(urlsplit(city["compare_url"]).query)["experimentId"][1]
    before = _field_scores(phoenix_url, base_id, "field:user.city")
    after = _field_scores(phoenix_url, cand_id, "field:user.city")
    assert sorted(c for c in after if after[c] < before[c]) == regressed

    # The baseline experiment carries Phoenix's reserved baseline tag.
    tags = httpx.get(f"{phoenix_url}/v1/experiments/{base_id}/tags", timeout=60).json()["data"]
    assert [t["name"] for t in tags] == ["baseline"]
    assert "tagged as the dataset's baseline" in second.stderr
    # The HTML report links the two experiments and the field's compare page, with its filter.
    page = html.unescape((project / "r.html").read_text())
    assert f'<a href="{city["compare_url"]}">user.city: ' in page
    assert f"filter: <code>{city['filter']}</code>" in page
    for experiment in (base_id, cand_id):
        assert f'?experimentId={experiment}">(in Phoenix)</a>' in page

    # stateval diff reads the two experiments back over REST (a UI URL and a bare id) and
    # reaches the verdicts of the local runs.
    base_url = f"{phoenix_url}/datasets/x/compare?experimentId={base_id}"
    remote = _stateval(project, "diff", base_url, cand_id, "--phoenix-url", phoenix_url, "--json")
    assert remote.returncode == 0, remote.stderr
    local = _stateval(project, "diff", "latest~1", "latest", "--json")
    remote_data, local_data = json.loads(remote.stdout), json.loads(local.stdout)
    assert remote_data["regressed_fields"] == local_data["regressed_fields"] == ["user.city"]
    assert remote_data["fields"][0]["regressed_cases"] == regressed
    assert remote_data["fields"][0]["compare_url"] == city["compare_url"]
    for name in ("overall_match_rate", "accuracy"):
        got = {m["name"]: m for m in remote_data["metrics"]}[name]
        want = {m["name"]: m for m in local_data["metrics"]}[name]
        assert (got["change"], got["low"], got["high"]) == pytest.approx(
            (want["change"], want["low"], want["high"])
        )


def test_diff_of_a_mistyped_run_id_never_starts_phoenix(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(project, "good")[0] == 0
    monkeypatch.delenv("PHOENIX_COLLECTOR_ENDPOINT", raising=False)
    phoenix_home = project / "phoenix-home"
    monkeypatch.setenv("STATEVAL_PHOENIX_HOME", str(phoenix_home))
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", str(project / "no-such-phoenix"))
    typo = CliRunner().invoke(app, ["diff", "latest", "20990101-000000-abcdef"])
    assert typo.exit_code == 2, typo.output
    assert "no run '20990101-000000-abcdef' under" in typo.output
    experiment = CliRunner().invoke(app, ["diff", "latest", "RXhwZXJpbWVudDo5OTk="])
    assert experiment.exit_code == 2, experiment.output
    assert "no Phoenix server is running" in experiment.output
    assert "give --phoenix-url" in experiment.output
    assert not phoenix_home.exists()  # nothing provisioned, nothing started


def test_diff_says_when_a_run_is_unfinished(project: Path) -> None:
    from stateval.run import Journal

    assert _run(project, "good")[0] == 0
    assert _run(project, "bad")[0] == 0
    journal = Journal.open(project / ".stateval")
    lines = journal.path.read_text().splitlines(keepends=True)
    journal.path.write_text("".join(line for line in lines if '"end"' not in line))
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest"])
    assert result.exit_code == 0, result.output
    assert f"note: run {journal.run_id} is unfinished" in result.output
