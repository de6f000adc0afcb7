"""Fuzz targets and Hypothesis strategies shared by tests/test_fuzz.py and bench/fuzz.py.

Three targets, each taking one generated input and raising only what stateval promises:

* `llm_output`: a model reply through the whole path a run takes it: `parse_updates`, then
  `apply_updates`, comparison under several policies, the journal's JSON encoding and the state's
  JSON round trip. Only `MutatorOutputError` may come out of the parse; once a reply is accepted,
  nothing after it may raise at all.
* `state`: Python values through the state constructors (``from_flat``, ``from_nested``,
  ``from_dict``, ``from_json``, ``ValueConfidence``), then, for a state that was built, the
  comparison and encoding steps. Only `StatevalError` may come out of construction.
* `suite`: suite files (YAML or JSON text, with a JSONL or CSV case file) through `load_suite`.
  Only `StatevalError` may come out.
* `reports`: a run whose field paths, values, case ids and suite name are hostile text (rich
  markup, emoji codes, TeX, HTML, Markdown pipes and backticks, control and bidi characters),
  through every renderer: the terminal summary at 80 and 200 columns, JSON, Markdown, HTML
  (with its charts), JUnit XML, and a diff of the run with itself (terminal, Markdown, HTML).
  A suite stateval refuses is fine; once it loads, nothing may raise, the JSON and XML must
  parse, and the terminal must show every field path of the table whole at 200 columns.

Anything else is a defect; `Defect` carries it, with the stage it came from.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from stateval.compare import MatchPolicy, compare_states
from stateval.errors import MutatorOutputError, StatevalError
from stateval.mutators import apply_updates, parse_updates
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import load_suite

__all__ = [
    "Defect",
    "llm_output",
    "llm_outputs",
    "report_inputs",
    "reports",
    "state",
    "state_inputs",
    "suite",
    "suite_files",
]


class Defect(Exception):
    """An input made stateval raise something outside its promise."""

    def __init__(self, stage: str, error: BaseException) -> None:
        self.stage = stage
        self.error = error
        super().__init__(f"{stage}: {type(error).__name__}: {str(error)[:200]}")


# -- values ---------------------------------------------------------------------------------

_NASTY_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\ud800",
        "\udfff",
        "a\ud83dz",
        "\u2028",
        "é",
        "\ufeff",
        "${X}",
        "a.b",
        "..",
        "*",
    ]
)
_TEXT = st.text(st.characters(exclude_categories=()), max_size=12) | _NASTY_TEXT
_INTS = st.integers(-(10**20), 10**20) | st.sampled_from([10**400, -(10**400), 2**64, 10**4299])
_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([1e308, -0.0, 5e-324])
_SCALARS = st.none() | st.booleans() | _INTS | _FLOATS | _TEXT
JSON_LIKE = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)
_ODD = st.sampled_from([object(), {1, 2}, b"bytes", (1, 2), {1: "x"}, {("t",): 1}, 1j])
_DEEP = st.integers(1, 3_000).map(lambda n: _nest(n))
VALUES = JSON_LIKE | _ODD | _DEEP
_PATHS = _TEXT | st.sampled_from(
    ["a", "n", "name", "a.b", "items.0.sku", "a..b", ".a", "a.", "a b"]
)
_CONFIDENCES = (
    st.floats(0, 1)
    | st.sampled_from([0, 1, 1.5, -0.1, float("nan"), True, "0.5", None, 10**400])
    | _FLOATS
)


def _nest(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


POLICIES = [
    None,
    MatchPolicy(numeric_tolerance=0.5),
    MatchPolicy(normalize=("case", "number_words", "punctuation", "whitespace"), fuzzy=0.8),
    MatchPolicy(list_mode="set", confidence="ignore"),
    MatchPolicy(list_mode="any_of", alternatives_separator="|", numeric_tolerance=1.0),
]
EXPECTED = InterpretiveState.from_flat({"n": 5, "name": "Ada", "a.b": [1, "x"], "items.0.sku": "Z"})


def _downstream(stage: str, built: InterpretiveState) -> None:
    """What a run does with a state once it exists; nothing here may raise."""
    try:
        for policy in POLICIES:
            compare_states(EXPECTED, built, policy).to_dict()
            compare_states(built, EXPECTED, policy)
        line = json.dumps(built.to_dict(), ensure_ascii=False)
        line.encode()  # the journal writes UTF-8
        assert InterpretiveState.from_dict(json.loads(line)) == built
    except Exception as exc:
        raise Defect(stage, exc) from exc


# -- target 1: LLM output -------------------------------------------------------------------


@st.composite
def _update_dicts(draw: st.DrawFn) -> Any:
    item: dict[str, Any] = {}
    if draw(st.booleans()) or True:
        item["path"] = draw(_PATHS | st.integers() | st.none())
    item["value"] = draw(JSON_LIKE | _DEEP)
    item["confidence"] = draw(
        _CONFIDENCES.filter(lambda c: not isinstance(c, str)) | st.just("0.5")
    )
    if draw(st.booleans()):
        item["inference"] = draw(_TEXT | st.none() | st.integers())
    if draw(st.integers(0, 9)) == 0:
        item[draw(_TEXT)] = 1
    if draw(st.integers(0, 9)) == 0:
        del item[draw(st.sampled_from(["path", "value", "confidence"]))]
    return item


_TOKENS = [
    "NaN",
    "Infinity",
    "-Infinity",
    '"\\ud800"',
    '"\\udc80x"',
    "1e400",
    "9" * 5000,
    "[" * 5000,
    "{",
    "}",
    "]",
    ",",
    '"',
    "\\",
    "```",
    "```json\n",
    "\n```",
    "null",
    "true",
    '{"updates": ',
]


@st.composite
def llm_outputs(draw: st.DrawFn) -> str:
    """Model replies: well-formed update lists with hostile values, wrapped or cut or spliced."""
    items = draw(st.lists(_update_dicts(), max_size=4))
    document: Any = items if draw(st.integers(0, 4)) else {"updates": items}
    try:
        text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    except (ValueError, RecursionError):
        text = "[]"
    wrap = draw(st.integers(0, 5))
    if wrap == 1:
        text = f"```json\n{text}\n```"
    elif wrap == 2:
        text = f"Here you go: {text} Hope it helps."
    elif wrap == 3:
        text = f"{text}\n{text}"
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(_TOKENS)) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(0, 8)) :]
    if draw(st.integers(0, 19)) == 0:
        text = draw(st.text(st.characters(exclude_categories=()), max_size=60))
    return text


def llm_output(raw: str) -> None:
    """Parse ``raw`` as a reply and take an accepted one through a run's later steps."""
    try:
        updates = parse_updates(raw)
    except MutatorOutputError:
        return
    except Exception as exc:
        raise Defect("parse_updates", exc) from exc
    try:
        built = apply_updates(InterpretiveState(), updates, "m-1")
    except Exception as exc:
        raise Defect("apply_updates", exc) from exc
    _downstream("accepted reply", built)


# -- target 2: state construction and comparison ---------------------------------------------


@st.composite
def state_inputs(draw: st.DrawFn) -> tuple[str, Any, Any]:
    """(constructor, argument, confidence) triples for the state constructors."""
    kind = draw(st.sampled_from(["flat", "nested", "dict", "json", "value"]))
    if kind == "flat":
        arg: Any = draw(st.dictionaries(_PATHS | st.integers(), VALUES, max_size=5))
    elif kind == "nested":
        arg = draw(st.dictionaries(_TEXT | st.integers(), VALUES, max_size=4))
    elif kind == "dict":
        candidates = st.lists(
            st.fixed_dictionaries(
                {"value": VALUES, "confidence": _CONFIDENCES},
                optional={"inference": _TEXT | st.integers(), "message_id": _TEXT | st.none()},
            )
            | VALUES,
            max_size=3,
        )
        arg = {"fields": draw(st.dictionaries(_PATHS, candidates | VALUES, max_size=4))}
        if draw(st.integers(0, 9)) == 0:
            arg = draw(VALUES)
    elif kind == "json":
        arg = draw(st.text(max_size=40)) if draw(st.booleans()) else draw(llm_outputs())
    else:
        arg = draw(VALUES)
    return kind, arg, draw(_CONFIDENCES)


def state(item: tuple[str, Any, Any]) -> None:
    """Build a state from ``item`` (see `state_inputs`); a built one goes downstream."""
    kind, arg, confidence = item
    try:
        if kind == "flat":
            built = InterpretiveState.from_flat(arg, confidence=confidence)
        elif kind == "nested":
            built = InterpretiveState.from_nested(arg, confidence=confidence)
        elif kind == "dict":
            built = InterpretiveState.from_dict(arg)
        elif kind == "json":
            built = InterpretiveState.from_json(arg)
        else:
            built = InterpretiveState()
            built.add_value("v", ValueConfidence(arg, confidence))
    except StatevalError:
        return
    except Exception as exc:
        raise Defect(f"InterpretiveState ({kind})", exc) from exc
    _downstream(f"built state ({kind})", built)


# -- target 3: suite loading -------------------------------------------------------------------

_SUITE = """\
name: fuzz
mutator: {type: python, callable: "builtins:print"}
policies:
  n: {numeric_tolerance: 0.5}
cases:
  inline:
    - id: c1
      input: {prompt: "hello"}
      expected_post_state: {n: 5, name: Ada}
"""
_YAML_TOKENS = [
    "&a [1,2,3]",
    "*a",
    "!!timestamp 2024-01-01",
    "2024-05-01",
    "!!binary aGk=",
    "!!set {a}",
    "!!python/object:os.system ls",
    '"\\ud800"',
    '"\\udc80"',
    "9" * 5000,
    "1e400",
    ".nan",
    ".inf",
    "[" * 300,
    "{" * 300,
    "\t",
    "- ",
    ": ",
    "? ",
    "|",
    ">",
    "'",
    '"',
    "%YAML 1.1",
    "---",
    "...",
    "${UNSET_VAR_FOR_FUZZ}",
    "{a: 1, a: 2}",
    "~",
    "0x1F",
    "0o17",
    "1_000",
    "<<: *a",
    "!!str",
    "file: /etc/passwd",
    "concurrency: -1",
    "slots: [a, a]",
    "ref: os:system",
]


@st.composite
def suite_files(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """(suite file name, suite text, case file name, case file text)."""
    fmt = draw(st.sampled_from(["yaml", "yaml", "json", "bomb", "random"]))
    if fmt == "json":
        data: Any = {
            "mutator": {"type": "python", "callable": "builtins:print"},
            "cases": {
                "inline": [{"id": "c1", "input": {"prompt": "x"}, "expected_post_state": {}}]
            },
        }
        if draw(st.booleans()):
            data["cases"]["inline"][0]["expected_post_state"] = draw(
                st.dictionaries(_PATHS, JSON_LIKE, max_size=3)
            )
        else:
            data[draw(st.sampled_from(["name", "policies", "slots", "thresholds", "cases"]))] = (
                draw(JSON_LIKE)
            )
        try:
            text = json.dumps(data, ensure_ascii=draw(st.booleans()))
        except (ValueError, RecursionError):
            text = "{}"
        name = "suite.json"
    elif fmt == "bomb":
        width = draw(st.integers(2, 12))
        levels = draw(st.integers(2, 9))
        lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
        for i in range(1, levels):
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
        text = _SUITE + "\n".join(lines) + "\n"
        name = "suite.yaml"
    elif fmt == "random":
        text = draw(st.text(st.characters(exclude_categories=()), max_size=200))
        name = draw(st.sampled_from(["suite.yaml", "suite.json"]))
    else:
        text = _SUITE
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(text)))
            if draw(st.booleans()):
                text = text[:at] + draw(st.sampled_from(_YAML_TOKENS)) + text[at:]
            else:
                text = text[:at] + text[at + draw(st.integers(0, 10)) :]
        name = "suite.yaml"
    case_name, case_text = "cases.jsonl", ""
    if draw(st.integers(0, 3)) == 0:
        case_name = draw(st.sampled_from(["cases.jsonl", "cases.csv", "cases.json"]))
        case_text = draw(
            st.sampled_from(
                [
                    '{"id": "c1", "input": {"prompt": "x"}, "expected_post_state": {"n": '
                    + "9" * 5000
                    + "}}",
                    '{"id": "c1", "input": {"prompt": "\\ud800"}}',
                    "[" * 100_000,
                    'id,prompt,expected_post_state\nc1,hi,"{""n"": 1e400}"\n',
                    'id,prompt,expected_post_state\nc1,hi,"' + "[" * 5000 + '"\n',
                    '[{"id": "c1", "input": {"prompt": "x"}, "pre_state": {"a": {"b": NaN}}}]',
                ]
            )
            | st.text(max_size=80)
        )
        if fmt != "json" and draw(st.booleans()):
            text = text.replace("  inline:\n", f"  file: {case_name}\n  old_inline:\n", 1)
    return name, text, case_name, case_text


def suite(item: tuple[str, str, str, str], folder: Path | None = None) -> None:
    """Write the files of ``item`` to ``folder`` (default: a fresh temporary one; a campaign
    passes one folder for every input, emptied first) and load the suite."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="stateval-fuzz-") as fresh:
            suite(item, Path(fresh))
        return
    for old in folder.iterdir():
        if old.is_dir():
            shutil.rmtree(old)
        else:
            old.unlink()
    name, text, case_name, case_text = item
    (folder / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    (folder / case_name).write_text(case_text, encoding="utf-8", errors="surrogatepass")
    try:
        load_suite(folder / name, load_mutator=False)
    except StatevalError:
        return
    except Exception as exc:
        raise Defect("load_suite", exc) from exc


# -- target 4: renderers ------------------------------------------------------------------------

_HOSTILE_SEGMENTS = st.sampled_from(
    [
        "[/]",
        "[bold]x",
        ":x:",
        ":boom:",
        "$\\frac$",
        "$x_1$",
        "<script>",
        "a|b",
        "`x`",
        "&amp;",
        "\u202eevil",
        "\x1b[31m",
        "]]>",
        "%s",
        "{0}",
        "é",
    ]
)
_SEGMENTS = _HOSTILE_SEGMENTS | st.text(
    st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")).filter(lambda c: c != "."),
    min_size=1,
    max_size=8,
)
_REPORT_PATHS = st.lists(_SEGMENTS, min_size=1, max_size=3).map(".".join)
_REPORT_VALUES = (
    _HOSTILE_SEGMENTS | st.text(max_size=20) | st.integers(-(10**6), 10**6) | st.booleans()
)


@st.composite
def report_inputs(draw: st.DrawFn) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """(suite name, case id, expected state, actual state), flat, with hostile text."""
    paths = draw(st.lists(_REPORT_PATHS, min_size=1, max_size=4, unique=True))
    expected = {p: draw(_REPORT_VALUES) for p in paths}
    actual = {p: draw(_REPORT_VALUES) if draw(st.booleans()) else expected[p] for p in paths}
    return draw(_SEGMENTS), draw(_SEGMENTS), expected, actual


def reports(item: tuple[str, str, dict[str, Any], dict[str, Any]], folder: Path) -> None:
    """Run a one-case suite of ``item`` in ``folder`` and render it every way (see above)."""
    import asyncio
    import dataclasses
    import io
    import xml.etree.ElementTree as ET

    from rich.console import Console

    from stateval.mutators import PythonMutator
    from stateval.regressions import diff_runs, local_run, markdown_diff, print_diff
    from stateval.reports import (
        diff_html_report,
        html_report,
        markdown_report,
        print_summary,
        write_json_report,
        write_junit_report,
    )
    from stateval.run import start_journal
    from stateval.upload import run_suite

    name, case_id, expected, actual = item
    for old in folder.iterdir():
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    data = {
        "name": name,
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [{"id": case_id, "input": {"prompt": "x"}, "expected_post_state": expected}]
        },
    }
    (folder / "suite.json").write_text(json.dumps(data), encoding="utf-8")
    try:
        loaded = load_suite(folder / "suite.json", load_mutator=False)
        post = InterpretiveState.from_flat(actual)
    except StatevalError:
        return

    def track(state: InterpretiveState, input: Any) -> InterpretiveState:
        return post

    stage = "run"
    try:
        suite = dataclasses.replace(loaded, mutator=PythonMutator(track))
        journal = start_journal(folder / ".stateval", suite)
        summary = asyncio.run(run_suite(suite, journal, concurrency=1)).summary
        for width in (80, 200):
            stage = f"terminal at {width} columns"
            console = Console(record=True, width=width, file=io.StringIO())
            print_summary(summary, console)
            text = console.export_text()
            if width == 200:
                for row in summary.fields:
                    if row.path not in text and "\x1b" not in row.path:
                        raise AssertionError(f"field {row.path!r} not shown whole")
        stage = "JSON"
        write_json_report(summary, folder / "r.json")
        json.loads((folder / "r.json").read_text(encoding="utf-8"))
        stage = "Markdown"
        markdown_report(summary)
        stage = "HTML"
        html_report(summary)
        stage = "JUnit"
        write_junit_report(summary, folder / "j.xml")
        ET.parse(folder / "j.xml")
        stage = "diff"
        run = local_run(journal, suite)
        diff = diff_runs(run, run, resamples=10)
        print_diff(diff, Console(record=True, width=80, file=io.StringIO()))
        markdown_diff(diff)
        diff_html_report(diff)
    except Exception as exc:
        raise Defect(f"reports ({stage})", exc) from exc
