"""The runnable examples in examples/ run as users would run them."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_seed_mutator_evaluation_example_runs() -> None:
    script = EXAMPLES / "seed_mutator_evaluation.py"
    source = script.read_text(encoding="utf-8")
    assert "from core." not in source
    assert "assert result.accuracy_score == 1.0" in source
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "module",
    [
        "stateval.evaluation",
        "stateval.mutators._client",
        "stateval.mutators._input",
        "stateval.mutators._llm",
        "stateval.mutators._python",
        "stateval.mutators._updates",
        "stateval.testing",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0
    assert result.failed == 0
