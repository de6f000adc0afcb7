"""The Python examples in docs/concepts.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CONCEPTS = Path(__file__).parent.parent / "docs" / "concepts.md"
BLOCKS = re.findall(r"```python\n(.*?)```", CONCEPTS.read_text(encoding="utf-8"), re.S)


def test_concepts_has_the_state_writing_example() -> None:
    assert any("post = pre.copy()" in block and ".set_value(" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_concepts_examples_run(block: str) -> None:
    exec(compile(block, str(CONCEPTS), "exec"), {})


def test_the_cli_reference_is_generated_from_the_cli() -> None:
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "scripts" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = script.parents[1] / "docs" / "cli.md"
    assert page.read_text(encoding="utf-8") == module.reference(), (
        "docs/cli.md is stale: python scripts/cli_reference.py > docs/cli.md"
    )
