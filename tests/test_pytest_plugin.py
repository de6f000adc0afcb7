"""The pytest plugin: suite files collected as tests, the regression gate item, the fixture,
JUnit through pytest's own --junitxml, and the pytest11 entry point."""

from __future__ import annotations

import importlib.metadata
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import scipy.stats  # noqa: F401
import yaml

# The inner pytest runs in this process and forgets the modules it imported when it ends; numpy
# cannot be imported twice in one process, so what the diff needs is loaded here, once.

pytest_plugins = ("pytester",)

PLUGIN = "stateval.pytest_plugin"

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


@pytest.fixture
def suites(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a suite file and a mutator whose quality a ``mode`` file sets."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the plugin under test
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    root = pytester.path
    name = "plugin_mut_" + re.sub(r"\W", "_", root.name)
    (root / f"{name}.py").write_text(MUTATOR)
    (root / "mode").write_text("good")
    cases = [
        {
            "id": f"case-{i:02d}",
            "input": {"prompt": f"Ada{i} City{i} {i}"},
            "expected_post_state": {"user.name": f"Ada{i}", "user.city": f"City{i}"},
        }
        for i in range(24)
    ]
    suite = {
        "name": "cities",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "thresholds": {"accuracy": 0.9, "fields": {"user.*": 0.5}},
    }
    (root / "cities.stateval.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (root / "not_a_suite.yaml").write_text("just: data\n")
    return root


def test_a_suite_file_is_one_test_per_threshold(pytester: pytest.Pytester, suites: Path) -> None:
    result = pytester.runpytest("-p", PLUGIN, "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*cities.stateval.yaml::accuracy PASSED*",
            "*cities.stateval.yaml::error_rate PASSED*",
            "*cities.stateval.yaml::fields?user.*? PASSED*",
        ]
    )


def test_a_failed_threshold_shows_the_run_summary(pytester: pytest.Pytester, suites: Path) -> None:
    (suites / "mode").write_text("bad")
    result = pytester.runpytest("-p", PLUGIN, "--junitxml", "report.xml")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*cities.stateval.yaml: accuracy 0.688 >= 0.900 FAILED*",
            "*cities.stateval.yaml: fields?user.*? 0.375 >= 0.500 FAILED*",
            "*fields, worst first*",
            "*user.city*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    cases = ET.parse(suites / "report.xml").getroot().iter("testcase")
    by_name = {case.get("name"): case for case in cases}
    assert set(by_name) == {"accuracy", "error_rate", "fields[user.*]"}
    failure = by_name["accuracy"].find("failure")
    assert failure is not None
    assert "accuracy 0.688 >= 0.900 FAILED" in (failure.get("message") or "") + (failure.text or "")
    props = {p.get("name"): p.get("value") for p in by_name["accuracy"].iter("property")}
    assert props == {"value": "0.6875", "limit": "0.9", "kind": "min"}


def test_with_a_baseline_the_regression_gate_is_an_item(
    pytester: pytest.Pytester, suites: Path
) -> None:
    pytester.runpytest("-p", PLUGIN).assert_outcomes(passed=3)  # the baseline run
    (suites / "mode").write_text("bad")
    result = pytester.runpytest("-p", PLUGIN, "--stateval-baseline", "latest", "-v")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*cities.stateval.yaml::regressed_fields FAILED*",
            "*cities.stateval.yaml: regressed_fields 1.000 <= 0.000 FAILED*",
            "*stateval diff*",
        ]
    )


def test_the_suite_file_can_name_its_baseline(pytester: pytest.Pytester, suites: Path) -> None:
    suite = yaml.safe_load((suites / "cities.stateval.yaml").read_text())
    suite["thresholds"] = {"regressions": {"baseline": "latest", "max_regressed_fields": 0}}
    pytester.runpytest("-p", PLUGIN).assert_outcomes(passed=3)  # the baseline run
    (suites / "cities.stateval.yaml").write_text(yaml.safe_dump(suite))
    result = pytester.runpytest("-p", PLUGIN, "-v")
    result.assert_outcomes(passed=2)  # max_error_rate defaults to 0, and the gate
    result.stdout.fnmatch_lines(["*::error_rate PASSED*", "*::regressed_fields PASSED*"])


def test_a_bad_suite_file_is_one_clear_error(pytester: pytest.Pytester, suites: Path) -> None:
    (suites / "broken.stateval.yaml").write_text("name: x\nmutator: {type: nope}\n")
    result = pytester.runpytest("-p", PLUGIN)
    result.stdout.fnmatch_lines(["*broken.stateval.yaml*"])
    assert result.ret != 0


def test_the_fixture_runs_a_suite_from_a_test(pytester: pytest.Pytester, suites: Path) -> None:
    pytester.makepyfile(
        test_quality="""
        def test_quality_holds(stateval_run):
            first = stateval_run("cities.stateval.yaml")
            assert first.passed
            assert first.summary.accuracy == 1.0
            assert first.diff is None
            (__import__("pathlib").Path(__file__).with_name("mode")).write_text("bad")
            second = stateval_run("cities.stateval.yaml", baseline="latest")
            assert [f.path for f in second.diff.regressed_fields] == ["user.city"]
            assert not second.gate.passed
            assert not second.passed
            assert "user.city" in second.report()
            third = stateval_run("cities.stateval.yaml", baseline="latest", repeat=2)
            assert third.diff.cand_repetitions == 2
            assert [f.path for f in third.diff.regressed_fields] == []
        """
    )
    result = pytester.runpytest("-p", PLUGIN, "test_quality.py")
    result.assert_outcomes(passed=1)


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    entry_points = importlib.metadata.entry_points(group="pytest11")
    ours = [ep for ep in entry_points if ep.value == PLUGIN]
    assert [ep.name for ep in ours] == ["stateval"]
    assert ours[0].dist is not None
    assert ours[0].dist.name == "stateval"


def test_a_collection_error_is_its_problem_lines_without_a_traceback(
    pytester: pytest.Pytester, suites: Path
) -> None:
    (suites / "broken.stateval.yaml").write_text("name: x\nmutator: {type: nope}\n")
    result = pytester.runpytest("-p", PLUGIN, "--collect-only")
    assert result.ret != 0
    text = result.stdout.str()
    assert "broken.stateval.yaml:2: mutator" in text
    assert "Traceback" not in text
    assert "raise SuiteProblemsError" not in text
    assert "_suite.py" not in text  # no frames of stateval's own code


SLOTS_MODULE = """
from pathlib import Path

Path(__file__).with_name("imported").write_text("slots.ref ran")
if Path(__file__).with_name("broken").exists():
    raise ZeroDivisionError("division by zero in the slot module")
SLOTS = ["user.name", "user.city"]
"""


def test_collecting_imports_no_slots_ref_module_and_a_bad_one_fails_its_items_in_one_line(
    pytester: pytest.Pytester, suites: Path
) -> None:
    name = "plugin_slots_" + re.sub(r"\W", "_", suites.name)
    (suites / f"{name}.py").write_text(SLOTS_MODULE)
    suite = yaml.safe_load((suites / "cities.stateval.yaml").read_text())
    suite["slots"] = {"ref": f"{name}:SLOTS", "path": "."}
    text = yaml.safe_dump(suite, sort_keys=False)
    (suites / "cities.stateval.yaml").write_text(text)
    suite_line = text.splitlines().index("  ref: " + suite["slots"]["ref"]) + 1

    collected = pytester.runpytest("-p", PLUGIN, "--collect-only", "-q")
    assert collected.ret == 0, collected.stdout.str()
    collected.stdout.fnmatch_lines(["*cities.stateval.yaml::accuracy", "*::fields?user.*?"])
    assert not (suites / "imported").exists()  # the suite's code did not run

    (suites / "broken").write_text("")
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(failed=3)
    assert (suites / "imported").exists()  # a run imports it, as stateval run does
    text = result.stdout.str()
    line = (
        f"cities.stateval.yaml:{suite_line}: slots.ref: cannot load '{name}:SLOTS': "
        f"importing {name!r} raised ZeroDivisionError: division by zero in the slot module"
    )
    # once per failed item; the short summary repeats it after "FAILED ... - " when the
    # terminal is wide enough, so count whole lines only
    assert text.splitlines().count(line) == 3, text
    assert "Traceback" not in text
    assert "_python.py" not in text  # no frames of stateval's own code
