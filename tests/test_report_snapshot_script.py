"""scripts/report_snapshot.py takes a tree or its src/ for ``--src``, and refuses anything else
(run as is, it would snapshot the installed stateval, so "before" would be "after")."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "report_snapshot", ROOT / "scripts" / "report_snapshot.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_tree_or_its_src_names_the_package_root(tmp_path: Path) -> None:
    root = _script()._package_root
    package = tmp_path / "src" / "stateval"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    assert root(tmp_path) == tmp_path / "src"
    assert root(tmp_path / "src") == tmp_path / "src"


def test_a_folder_without_stateval_stops_the_script(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no stateval package there"):
        _script()._package_root(tmp_path)
