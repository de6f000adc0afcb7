"""EvaluationConfig: defaults, environment variables, validation."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stateval.config import EvaluationConfig
from stateval.errors import EvaluationConfigError


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DEFAULT_THRESHOLD", "MAX_SAMPLES", "MAX_RETRIES", "TIMEOUT_SECONDS"):
        monkeypatch.delenv(f"STATEVAL_{name}", raising=False)
    config = EvaluationConfig()
    assert config.default_threshold == 0.8
    assert config.max_samples is None
    assert config.max_retries == 3
    assert config.timeout_seconds == 30
    assert config.max_concurrency == 8
    assert config.include_metadata is True
    assert config.embedding_model == "multilingual-e5-small"


def test_environment_variables_are_read_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEVAL_DEFAULT_THRESHOLD", "0.95")
    monkeypatch.setenv("STATEVAL_MAX_SAMPLES", "10")
    monkeypatch.setenv("STATEVAL_INCLUDE_METADATA", "false")
    monkeypatch.setenv("STATEVAL_EMBEDDING_MODEL", "portuguese-multilingual-e5-small")
    monkeypatch.setenv("STATEVAL_SOMETHING_ELSE", "ignored")  # other settings share the prefix
    config = EvaluationConfig()
    assert (config.default_threshold, config.max_samples) == (0.95, 10)
    assert config.include_metadata is False
    assert config.embedding_model == "portuguese-multilingual-e5-small"


def test_keyword_arguments_win_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEVAL_MAX_RETRIES", "7")
    assert EvaluationConfig(max_retries=1).max_retries == 1


@pytest.mark.parametrize(
    ("env", "value", "message"),
    [
        ("DEFAULT_THRESHOLD", "1.5", r"default_threshold \(STATEVAL_DEFAULT_THRESHOLD\) = '1.5'"),
        ("MAX_SAMPLES", "0", r"max_samples .* greater than 0"),
        ("MAX_RETRIES", "-1", r"max_retries .* greater than or equal to 0"),
        ("TIMEOUT_SECONDS", "0", r"timeout_seconds .* greater than 0"),
        ("MAX_CONCURRENCY", "many", r"max_concurrency .* valid integer"),
    ],
)
def test_invalid_environment_values_raise_one_line(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str
) -> None:
    monkeypatch.setenv(f"STATEVAL_{env}", value)
    with pytest.raises(EvaluationConfigError, match=message) as info:
        EvaluationConfig()
    assert "\n" not in str(info.value)


def test_unknown_keyword_is_rejected() -> None:
    with pytest.raises(EvaluationConfigError, match=r"threshold .* Extra inputs"):
        EvaluationConfig(threshold=0.5)


def test_importing_the_module_reads_no_environment() -> None:
    env = {**os.environ, "STATEVAL_MAX_RETRIES": "not a number"}
    code = "import stateval.config, stateval.harness, stateval.checks; print('ok')"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
