"""The lint and type-check configuration in pyproject.toml passes on the whole tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    local = Path(sys.executable).with_name(name)
    found = str(local) if local.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed: it is part of the [test] extra")
    return found


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint_passes() -> None:
    result = _run(_tool("ruff"), "check", "src", "tests", "examples", "bench", "scripts")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = _run(
        _tool("ruff"), "format", "--check", "src", "tests", "examples", "bench", "scripts"
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_passes_on_the_package() -> None:
    result = _run(_tool("mypy"))
    assert result.returncode == 0, result.stdout + result.stderr
