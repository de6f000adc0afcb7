"""The import graph flows one way: the import-linter layers in pyproject.toml hold, no package
reaches into another package's private modules, and nothing imports the top package."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "stateval"


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with its line (``from x import y`` gives
    ``x.y`` too, since ``y`` may be a module)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _owner(path: Path, package: Path) -> str:
    """The package a source file belongs to: ``stateval.run`` for ``run/_runner.py``,
    ``stateval`` for a top-level module."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1])


def private_cross_imports(package: Path) -> list[str]:
    """``file:line module`` for each import of another subpackage's ``_private`` module.

    The top package's own private modules (``stateval._version``) are shared by design.
    """
    found: dict[str, None] = {}
    for path in sorted(package.rglob("*.py")):
        owner = _owner(path, package)
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] != package.name:
                continue  # a third-party library's internals are its own business
            for i, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    if i > 1 and ".".join(parts[:i]) != owner:
                        where = f"{path.relative_to(package.parent)}:{line}"
                        found[f"{where} {'.'.join(parts[: i + 1])}"] = None
                    break
    return list(found)


def test_import_layers_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail("lint-imports is not installed: import-linter is part of the [test] extra")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_package_imports_another_packages_private_modules() -> None:
    assert private_cross_imports(PACKAGE) == []


def test_the_private_import_check_finds_one(tmp_path: Path) -> None:
    package = tmp_path / "stateval"
    (package / "run").mkdir(parents=True)
    (package / "run" / "_runner.py").write_text(
        "from stateval.run._results import CaseScore\n"  # its own package: fine
        "from stateval.compare import compare_states\n"  # a public name: fine
        "from stateval.phoenix._judge import FieldJudge\n",  # another package's private module
        encoding="utf-8",
    )
    assert private_cross_imports(package) == ["stateval/run/_runner.py:3 stateval.phoenix._judge"]


def test_nothing_imports_the_top_package() -> None:
    """``stateval/__init__.py`` is the front door: modules inside never import it (upward)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "__init__.py"
        for line, module in _imports(path)
        if module == "stateval"
    ]
    assert found == []


def test_every_module_has_a_layer() -> None:
    """A new top-level module or package must be placed in the layers, or nothing checks it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    layered = {name.strip() for layer in contract["layers"] for name in layer.split("|")}
    modules = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert modules - layered == set()
