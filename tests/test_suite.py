"""Suite files: loading, case formats, and one problem line per mistake."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from stateval.errors import SuiteError, SuiteProblemsError
from stateval.mutators import UPDATES_JSON_SCHEMA
from stateval.phoenix import FieldJudge
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import load_suite, suite_json_schema
from stateval.suite._source import canonical_json

ROOT = Path(__file__).resolve().parents[1]
MULTIWOZ = ROOT / "examples" / "multiwoz" / "suite.yaml"
REGISTRATION = ROOT / "examples" / "registration" / "suite.yaml"

MUTATOR_SOURCE = """
from stateval.state import InterpretiveState, ValueConfidence

def copy_prompt(state, input):
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt, 1.0))
    return out

def make(prefix):
    def mutate(state, input):
        out = state.copy()
        out.set_value("said", ValueConfidence(prefix + input.prompt, 1.0))
        return out
    return mutate
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # problem lines name files relative to the working directory


def _module(tmp_path: Path) -> str:
    name = "mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR_SOURCE)
    return name


def _write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _problems(path: Path, **kwargs: bool) -> list[str]:
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(path, **kwargs)
    assert str(info.value) == "\n".join(info.value.problems)
    return info.value.problems


def test_inline_cases_become_states_inputs_and_a_mutator(tmp_path: Path) -> None:
    module = _module(tmp_path)
    path = _write(
        tmp_path,
        f"""
mutator: {{type: python, callable: "{module}:copy_prompt", path: .}}
cases:
  inline:
    - id: c1
      pre_state: {{user.name: Ada}}
      input: {{prompt: hello, metadata: {{turn: 1}}}}
      expected_post_state: {{user.name: Ada, said: hello}}
      metadata: {{tag: x}}
""",
    )
    suite = load_suite(path)
    (case,) = suite.cases
    assert case.pre_state == InterpretiveState.from_flat({"user.name": "Ada"})
    assert case.expected_post_state.to_flat() == {"user.name": "Ada", "said": "hello"}
    assert case.input.message_id == "c1"  # defaults to the case id
    assert dict(case.input.metadata) == {"turn": 1}
    assert dict(case.metadata) == {"tag": "x"}
    assert suite.name == "suite"
    assert suite.phoenix.dataset == "suite"
    assert suite.mutator is not None
    assert suite.mutator_description.endswith(f"{module}:copy_prompt")


def test_python_mutator_factory_is_called_with_args(tmp_path: Path) -> None:
    module = _module(tmp_path)
    path = _write(
        tmp_path,
        f"""
mutator: {{type: python, callable: "{module}:make", args: {{prefix: ">"}}}}
cases: {{inline: [{{id: a, input: {{prompt: x}}, expected_post_state: {{}}}}]}}
""",
    )
    suite = load_suite(path)
    assert suite.mutator is not None
    import asyncio

    case = suite.cases[0]
    out = asyncio.run(suite.mutator.mutate(case.pre_state, case.input))
    assert out.to_flat() == {"said": ">x"}


def test_nested_and_candidate_states(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
mutator: {type: python, callable: "builtins:print"}
cases:
  format: nested
  confidence: 0.9
  inline:
    - id: nested
      input: {prompt: p}
      expected_post_state: {registrant: {name: Ada, email: a@b.org}}
    - id: candidates
      input: {prompt: p}
      expected_post_state:
        fields:
          registrant.name: [{value: Ada, confidence: 0.5}, {value: Ada L., confidence: 0.7}]
""",
    )
    suite = load_suite(path, load_mutator=False)
    nested, candidates = suite.cases
    assert nested.expected_post_state.best("registrant.email") == ValueConfidence("a@b.org", 0.9)
    assert candidates.expected_post_state.best("registrant.name") == ValueConfidence("Ada L.", 0.7)
    assert len(candidates.expected_post_state.candidates("registrant.name")) == 2


def test_jsonl_json_and_csv_case_files_load_the_same_cases(tmp_path: Path) -> None:
    rows = [
        {
            "id": "a",
            "pre_state": {"x": 1},
            "input": {"prompt": "p1", "message_id": "m1", "metadata": {"k": "v"}},
            "expected_post_state": {"x": 2},
            "metadata": {"split": "test"},
        },
        {"id": "b", "input": {"prompt": "p2"}, "expected_post_state": {"y": "z"}},
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    (tmp_path / "cases.json").write_text(json.dumps({"cases": rows}, indent=2))
    (tmp_path / "cases.csv").write_text(
        "id,pre_state,prompt,message_id,input_metadata,expected_post_state,metadata\n"
        'a,"{""x"": 1}",p1,m1,"{""k"": ""v""}","{""x"": 2}","{""split"": ""test""}"\n'
        'b,,p2,,,"{""y"": ""z""}",\n'
    )
    loaded = []
    hashes = set()
    for name in ("cases.jsonl", "cases.json", "cases.csv"):
        suite_path = _write(
            tmp_path,
            f'mutator: {{type: python, callable: "builtins:print"}}\ncases: {{file: {name}}}\n',
            f"suite_{name}.yaml",
        )
        suite = load_suite(suite_path, load_mutator=False)
        loaded.append([c.to_example() for c in suite.cases])
        hashes.add(suite.cases_hash)
        assert suite.cases[1].input.message_id == "b"
    assert loaded[0] == loaded[1] == loaded[2]
    assert len(hashes) == 1
    assert loaded[0][0]["input"]["input"] == {
        "prompt": "p1",
        "message_id": "m1",
        "metadata": {"k": "v"},
    }


def test_every_suite_problem_is_reported_with_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """mutator: {type: python, callable: "no-colon"}
cases:
  inline:
    - id: a
      input: {prompt: 3, extra: 1}
      expected_post_state: {}
    - id: b
      input: {prompt: hi}
thresholds: {accuracy: 2}
bogus: 1
""",
    )
    problems = _problems(path)
    assert len(problems) == 6
    assert problems[0] == "suite.yaml:1: mutator.callable: expected 'module:attribute'"
    assert "suite.yaml:5: case 'a': input.prompt: " in problems[1]
    assert problems[2] == "suite.yaml:5: case 'a': input.extra: unknown key"
    assert problems[3] == "suite.yaml:7: case 'b': expected_post_state: required"
    assert problems[4].startswith("suite.yaml:9: thresholds.accuracy: ")
    assert problems[5] == "suite.yaml:10: bogus: unknown key"


def test_every_case_file_problem_names_line_case_and_field(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "ok", "input": {"prompt": "p"}, "expected_post_state": {"a": 1}}),
        "{not json",
        json.dumps({"id": "no-input", "expected_post_state": {}}),
        json.dumps(
            {"id": "bad-path", "input": {"prompt": "p"}, "expected_post_state": {"a..b": 1}}
        ),
        json.dumps({"id": "ok", "input": {"prompt": "p"}, "expected_post_state": {}}),
        json.dumps(
            {
                "id": "conf",
                "input": {"prompt": "p"},
                "expected_post_state": {"fields": {"a": [{"value": 1, "confidence": 3}]}},
            }
        ),
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.jsonl}\n',
    )
    problems = _problems(path, load_mutator=False)
    assert (
        problems[0]
        == "cases.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes"
    )
    assert problems[1] == "cases.jsonl:3: case 'no-input': input: required"
    assert problems[2].startswith(
        "cases.jsonl:4: case 'bad-path': expected_post_state.a..b: invalid path"
    )
    assert problems[3] == "cases.jsonl:5: case 'ok': id: duplicate case id (first at line 1)"
    assert problems[4].startswith(
        "cases.jsonl:6: case 'conf': expected_post_state.a: invalid confidence"
    )
    assert len(problems) == 5


def test_json_case_file_problems_point_at_the_line_of_the_field(tmp_path: Path) -> None:
    cases = [
        {"id": "a", "input": {"prompt": "p"}, "expected_post_state": {}},
        {"id": "b", "input": {"prompt": "p", "message_id": 7}, "expected_post_state": {}},
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases, indent=2))
    path = _write(
        tmp_path, 'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.json}\n'
    )
    (problem,) = _problems(path, load_mutator=False)
    text = (tmp_path / "cases.json").read_text().splitlines()
    line = int(problem.split(":")[1])
    assert '"message_id": 7' in text[line - 1]
    assert "case 'b': input.message_id: " in problem


def test_csv_cell_that_is_not_json_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "cases.csv").write_text('id,prompt,expected_post_state\na,p,"{oops"\n')
    path = _write(
        tmp_path, 'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.csv}\n'
    )
    (problem,) = _problems(path, load_mutator=False)
    assert problem.startswith("cases.csv:2: case 'a': expected_post_state: invalid JSON")


def test_missing_case_file_and_mutator_module_are_both_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "no_such_module_xyz:fn"}\ncases: {file: gone.jsonl}\n',
    )
    problems = _problems(path)
    assert problems[0] == (
        "suite.yaml:2: cases.file: cannot read gone.jsonl: No such file or directory"
    )
    assert problems[1].startswith(
        "suite.yaml:1: mutator.callable: cannot load 'no_such_module_xyz:fn'"
    )


def test_a_missing_case_file_names_the_suite_line_and_the_setting(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'name: s\nmutator: {type: python, callable: "builtins:print"}\ncases:\n'
        "  format: flat\n  file: data/nofile.jsonl\n",
    )
    (problem,) = _problems(path, load_mutator=False)
    assert problem == (
        "suite.yaml:5: cases.file: cannot read data/nofile.jsonl: No such file or directory"
    )
    (tmp_path / "cases.txt").write_text("")
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.txt}\n',
    )
    (problem,) = _problems(path, load_mutator=False)
    assert problem == (
        "suite.yaml:2: cases.file: unknown case file type cases.txt (use .jsonl, .json or .csv)"
    )


def test_a_missing_slot_file_names_the_suite_line_and_the_setting(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\n'
        "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}\n"
        "slots: {file: slots.txt}\n",
    )
    (problem,) = _problems(path, load_mutator=False)
    assert problem == "suite.yaml:3: slots.file: cannot read slots.txt: No such file or directory"


def test_case_file_problems_are_reported_with_suite_schema_problems(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "a", "input": {"prompt": "p"}, "expected_post_state": {}}),
        "{not json",
        json.dumps({"id": "a", "input": {"prompt": "p"}, "expected_post_state": {}}),
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\n'
        "thresholds: {accuracy: 2}\n"
        "cases: {file: cases.jsonl}\n",
    )
    problems = _problems(path, load_mutator=False)
    assert problems == [
        "suite.yaml:2: thresholds.accuracy: expected less than or equal to 1",
        "cases.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes",
        "cases.jsonl:3: case 'a': id: duplicate case id (first at line 1)",
    ]
    # a missing case file too, and inline cases' duplicates
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\nsurprise: 1\n'
        "cases: {file: gone.jsonl}\n",
    )
    assert _problems(path, load_mutator=False) == [
        "suite.yaml:2: surprise: unknown key",
        "suite.yaml:3: cases.file: cannot read gone.jsonl: No such file or directory",
    ]
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\nsurprise: 1\n'
        "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}},"
        " {id: a, input: {prompt: y}, expected_post_state: {}}]}\n",
    )
    problems = _problems(path, load_mutator=False)
    assert problems[0] == "suite.yaml:2: surprise: unknown key"
    assert "case 'a': id: duplicate case id" in problems[1]
    assert len(problems) == 2


def test_a_cases_section_that_is_itself_invalid_reports_only_its_schema_problem(
    tmp_path: Path,
) -> None:
    (tmp_path / "cases.jsonl").write_text("{not json\n")
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\n'
        "cases: {file: cases.jsonl, format: deep}\n",
    )
    (problem,) = _problems(path, load_mutator=False)
    assert problem.startswith("suite.yaml:2: cases.format: expected 'flat' or 'nested'")


def test_schema_messages_use_the_suite_file_words_not_model_names(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\n'
        "policies: [1]\n"
        "cases:\n  inline:\n    - 5\n    - {id: a, input: hello, expected_post_state: {}}\n",
    )
    problems = sorted(_problems(path, load_mutator=False))
    assert problems == [
        "suite.yaml:2: policies: expected an object (key: value pairs), got a list",
        "suite.yaml:5: cases.inline[0]: expected an object (key: value pairs), got a number",
        "suite.yaml:6: case 'a': input: expected an object (key: value pairs), got a string",
    ]
    assert not any("Spec" in p or "instance of" in p for p in problems)
    (tmp_path / "cases.jsonl").write_text("[1, 2]\n")
    path = _write(
        tmp_path,
        'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.jsonl}\n',
    )
    (problem,) = _problems(path, load_mutator=False)
    assert problem == "cases.jsonl:1: expected an object (key: value pairs), got a list"
    path = _write(tmp_path, "mutator: {callable: a:b}\ncases: {file: cases.jsonl}\n")
    assert _problems(path, load_mutator=False)[0] == "suite.yaml:1: mutator: needs a 'type' key"
    path = _write(tmp_path, "mutator: {type: rust}\ncases: {file: cases.jsonl}\n")
    problem = _problems(path, load_mutator=False)[0]
    assert problem == (
        "suite.yaml:1: mutator: unknown 'type' 'rust' (expected 'python', 'llm', 'replay')"
    )


def test_a_missing_callable_is_named_once(tmp_path: Path) -> None:
    module = _module(tmp_path)
    path = _write(
        tmp_path,
        f'mutator: {{type: python, callable: "{module}:nope", path: .}}\n'
        "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}\n",
    )
    (problem,) = _problems(path)
    assert problem == (
        f"suite.yaml:1: mutator.callable: cannot load '{module}:nope': "
        f"{module!r} has no attribute 'nope'"
    )


def test_llm_mutator_without_its_api_key_is_a_clear_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATEVAL_TEST_NO_KEY", raising=False)
    path = _write(
        tmp_path,
        """
mutator: {type: llm, model: m, base_url: "http://127.0.0.1:9/v1", api_key_env: STATEVAL_TEST_NO_KEY}
cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}
""",
    )
    (problem,) = _problems(path)
    assert (
        "mutator.api_key_env: llm mutator needs the environment variable STATEVAL_TEST_NO_KEY"
        in problem
    )
    monkeypatch.setenv("STATEVAL_TEST_NO_KEY", "k")
    suite = load_suite(path)
    assert "LLMMutator" in suite.mutator_description


def test_slot_schema_from_list_file_and_reference(tmp_path: Path) -> None:
    module = _module(tmp_path)
    (tmp_path / f"{module}.py").write_text('SLOTS = ["a.x", "a.y"]\n')
    (tmp_path / "slots.txt").write_text("# slots\na.x\na.y\n")
    base = (
        'mutator: {type: python, callable: "builtins:print"}\n'
        "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}\n"
    )
    for spec in ('["a.x", "a.y"]', "{file: slots.txt}", f'{{ref: "{module}:SLOTS"}}'):
        suite = load_suite(_write(tmp_path, base + f"slots: {spec}\n"), load_mutator=False)
        assert suite.slots == ("a.x", "a.y")


def test_slot_thresholds_need_a_schema_and_bad_checks_are_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """mutator: {type: python, callable: "builtins:print"}
cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}
checks:
  user.email: [{type: regex, pattern: "("}]
thresholds:
  joint_goal_accuracy: 0.5
""",
    )
    problems = _problems(path, load_mutator=False)
    assert problems[0].startswith("suite.yaml:4: checks.user.email: criterion 0")
    assert (
        problems[1] == "suite.yaml:6: thresholds.joint_goal_accuracy: needs a slot schema ('slots')"
    )


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "mutator: {type: python\ncases: [\n")
    (problem,) = _problems(path)
    assert re.match(r"suite\.yaml:\d+: invalid YAML: ", problem)


def test_published_schema_is_current_and_accepts_the_example_suite() -> None:
    published = json.loads((ROOT / "docs" / "suite-schema.json").read_text())
    assert published == suite_json_schema()
    example = yaml.safe_load(MULTIWOZ.read_text())
    jsonschema.validate(example, published)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**example, "unknown": 1}, published)
    jsonschema.validate(yaml.safe_load(REGISTRATION.read_text()), published)


def test_multiwoz_example_suite_loads() -> None:
    suite = load_suite(MULTIWOZ)
    assert len(suite.cases) == 213
    assert suite.slots is not None
    assert len(suite.slots) == 30
    assert suite.mutator is not None


def test_cases_hash_changes_with_a_case_but_not_with_policies(tmp_path: Path) -> None:
    base = 'mutator: {type: python, callable: "builtins:print"}\n'
    case = "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {v: %s}}]}\n"
    one = load_suite(_write(tmp_path, base + case % 1, "one.yaml"), load_mutator=False)
    strict = load_suite(
        _write(tmp_path, base + case % 1 + 'policies: {"*": {confidence: ignore}}\n', "p.yaml"),
        load_mutator=False,
    )
    two = load_suite(_write(tmp_path, base + case % 2, "two.yaml"), load_mutator=False)
    assert one.cases_hash == strict.cases_hash != two.cases_hash
    assert one.suite_hash != strict.suite_hash


def test_environment_variables_are_expanded_in_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEVAL_TEST_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("STATEVAL_TEST_UNSET", raising=False)
    monkeypatch.setenv("STATEVAL_TEST_EMPTY", "")
    path = _write(
        tmp_path,
        """
name: ${STATEVAL_TEST_UNSET:-fallback}-${STATEVAL_TEST_EMPTY:-x}
description: literal $${NOT_A_VAR}
mutator:
  type: llm
  model: m
  base_url: ${STATEVAL_TEST_URL}
  api_key_env: null
  instructions: "Fill ${kept} as written"
concurrency: ${STATEVAL_TEST_UNSET:-3}
cases: {inline: [{id: a, input: {prompt: "say ${NOPE}"}, expected_post_state: {}}]}
""",
    )
    suite = load_suite(path)
    assert suite.name == "fallback-x"
    assert suite.model.description == "literal ${NOT_A_VAR}"
    assert suite.model.concurrency == 3
    spec = suite.model.mutator
    assert spec.type == "llm"
    assert spec.base_url == "http://127.0.0.1:9/v1"
    # Prompt texts and case data are used as written.
    assert spec.instructions == "Fill ${kept} as written"
    assert suite.cases[0].input.prompt == "say ${NOPE}"


def test_an_unset_environment_variable_names_file_field_and_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATEVAL_TEST_UNSET", raising=False)
    path = _write(
        tmp_path,
        """mutator:
  type: llm
  model: m
  base_url: ${STATEVAL_TEST_UNSET}
  api_key_env: null
phoenix: {project: "${broken"}
cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}
""",
    )
    problems = _problems(path)
    assert problems == [
        "suite.yaml:4: mutator.base_url: environment variable STATEVAL_TEST_UNSET is not set "
        "(set it, or give a default: ${STATEVAL_TEST_UNSET:-value})",
        "suite.yaml:6: phoenix.project: malformed ${...}: write ${VAR} or ${VAR:-default} "
        "($${ for a literal ${)",
    ]


LLM_SUITE = """mutator:
  type: llm
  model: small
  base_url: http://127.0.0.1:9/v1
  api_key_env: null
  max_tokens: 128
  timeout: 7.5
  max_retries: 1
  max_concurrency: 2
  schema_dialect: json_object
{extra}
cases: {{inline: [{{id: a, input: {{prompt: x}}, expected_post_state: {{}}}}]}}
"""


def test_llm_mutator_settings_reach_its_client(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, LLM_SUITE.format(extra="")))
    client = suite.mutator.client  # type: ignore[union-attr]
    assert (client.model, client.base_url) == ("small", "http://127.0.0.1:9/v1")
    assert (client.max_tokens, client.timeout, client.max_retries) == (128, 7.5, 1)
    assert (client.max_concurrency, client.schema_dialect) == (2, "json_object")
    assert client.temperature == 0.0
    assert client.response_schema == UPDATES_JSON_SCHEMA
    assert suite.judge is None
    free = load_suite(
        _write(tmp_path, LLM_SUITE.format(extra="  structured_output: false"), "free.yaml")
    )
    assert free.mutator.client.response_schema is None  # type: ignore[union-attr]


def test_judge_block_takes_unset_settings_from_the_llm_mutator(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, LLM_SUITE.format(extra="judge: {max_tokens: 64}")))
    assert isinstance(suite.judge, FieldJudge)
    client = suite.judge.llm.client  # type: ignore[attr-defined]
    assert (client.model, client.base_url, client.timeout) == (
        "small",
        "http://127.0.0.1:9/v1",
        7.5,
    )
    assert (client.max_tokens, client.schema_dialect, client.temperature) == (64, "json_object", 0)
    assert client.response_schema is None  # each classification sends Phoenix's own schema
    # Rescoring does not need the judge.
    assert load_suite(suite.path, load_mutator=False).judge is None


def test_judge_without_a_model_or_its_key_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATEVAL_TEST_NO_KEY", raising=False)
    base = 'mutator: {type: python, callable: "builtins:print"}\n'
    cases = "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}\n"
    (problem,) = _problems(_write(tmp_path, base + "judge: {timeout: 5}\n" + cases))
    assert problem == (
        "suite.yaml:2: judge.model: the judge needs a model (or an llm mutator to take it from)"
    )
    keyed = "judge: {model: gpt-4o-mini, api_key_env: STATEVAL_TEST_NO_KEY}\n"
    (problem,) = _problems(_write(tmp_path, base + keyed + cases))
    assert problem.startswith(
        "suite.yaml:2: judge.api_key_env: the judge needs the environment variable "
        "STATEVAL_TEST_NO_KEY"
    )


MUTATION_SECTION = """
mutation:
  operators: [drop_field, stale]
  seed: 3
  fail_under: 80
  evals: [provenance, "my_evals:mentions_price"]
  max_calls: 100
  max_mutants: 20
"""


def test_mutation_section_loads_and_leaves_the_suite_hash_alone(tmp_path: Path) -> None:
    base = (
        'mutator: {type: python, callable: "builtins:print"}\n'
        "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {v: 1}}]}\n"
    )
    plain = load_suite(_write(tmp_path, base, "plain.yaml"), load_mutator=False)
    suite = load_suite(_write(tmp_path, base + MUTATION_SECTION), load_mutator=False)
    spec = suite.model.mutation
    assert spec is not None
    assert spec.operators == ["drop_field", "stale"]
    assert (spec.seed, spec.fail_under, spec.max_calls, spec.max_mutants) == (3, 80, 100, 20)
    assert spec.evals == ["provenance", "my_evals:mentions_price"]
    assert plain.model.mutation is None
    # the section configures `stateval mutate` only: runs of both suites are the same run
    assert suite.suite_hash == plain.suite_hash


def test_mutation_section_mistakes_name_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
mutator: {type: python, callable: "builtins:print"}
cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}
mutation:
  operators: ["drop_field,stale"]
  fail_under: 150
  max_mutants: 0
  seeds: 1
""",
    )
    problems = _problems(path, load_mutator=False)
    assert problems[0] == (
        "suite.yaml:5: mutation.operators: one operator name per list item, got 'drop_field,stale'"
    )
    assert problems[1] == "suite.yaml:6: mutation.fail_under: expected less than or equal to 100"
    assert problems[2] == "suite.yaml:7: mutation.max_mutants: expected greater than or equal to 1"
    assert problems[3] == "suite.yaml:8: mutation.seeds: unknown key"


def test_published_schema_accepts_the_mutation_section() -> None:
    published = json.loads((ROOT / "docs" / "suite-schema.json").read_text())
    example = yaml.safe_load(MULTIWOZ.read_text())
    jsonschema.validate({**example, **yaml.safe_load(MUTATION_SECTION)}, published)
    for bad in ({"operators": "drop_field"}, {"fail_under": 101}, {"unknown": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**example, "mutation": bad}, published)


def test_jsonl_cases_are_read_from_the_file_when_used_and_found_by_id(tmp_path: Path) -> None:
    rows = [
        {"id": f"c{i}", "input": {"prompt": f"p{i}"}, "expected_post_state": {"x": i}}
        for i in range(10)
    ]
    cases_file = tmp_path / "cases.jsonl"
    cases_file.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    suite = load_suite(
        _write(
            tmp_path,
            'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.jsonl}\n',
        ),
        load_mutator=False,
    )
    assert suite.cases.ids == tuple(r["id"] for r in rows)
    assert suite.case("c7").input.prompt == "p7"  # type: ignore[union-attr]
    assert suite.case("nope") is None
    assert [c.id for c in suite.cases.select({"c9", "c2"})] == ["c2", "c9"]
    assert suite.cases[-1].expected_post_state.to_flat() == {"x": 9}
    cases_file.write_text(cases_file.read_text().replace('"c3"', '"other"'))
    with pytest.raises(SuiteError, match="changed after the suite was loaded"):
        list(suite.cases)


def test_jsonl_cases_selected_by_id_are_each_case_asked_for_once_in_file_order(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": f"c{i}", "input": {"prompt": f"p{i}"}, "expected_post_state": {"x": i}}
        for i in range(6)
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    suite = load_suite(
        _write(
            tmp_path,
            'mutator: {type: python, callable: "builtins:print"}\ncases: {file: cases.jsonl}\n',
        ),
        load_mutator=False,
    )
    every = [r["id"] for r in rows]
    for asked, found in [
        (set(every), every),  # every case: a run's first pass, a rescore
        ([*reversed(every), "c2", "c2"], every),  # any order, an id asked for twice
        ({*every, "unknown"}, every),
        ({"c5", "c0", "c3", "unknown"}, ["c0", "c3", "c5"]),
        ([*every[1:], "unknown", "c1"], every[1:]),
        ({"unknown"}, []),
    ]:
        assert [c.id for c in suite.cases.select(asked)] == found


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)


@given(_JSON)
@example({"c": [1e-07, 2.5e-05, 1e-05, -0.00001, 1e16, 1.5e300], "b": 2**70})
@example({"é": "\u2028", "a": ["\x00", 0.1, -0.0]})
def test_the_cases_hash_text_is_the_standard_librarys_whichever_encoder_writes_it(
    value: object,
) -> None:
    # cases_hash must not change when the encoder does: runs are resumed and datasets
    # versioned by it
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == text.encode()
