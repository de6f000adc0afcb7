"""``--since`` / ``--until`` of the ``stateval traces`` commands: ``last`` (the watermark) is
named only where it is accepted (``traces score``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateval.cli import app
from traces_app import write_monitor


@pytest.mark.parametrize("command", ["export", "mutate"])
def test_an_unreadable_since_names_only_the_forms_the_command_takes(
    tmp_path: Path, command: str
) -> None:
    monitor = write_monitor(tmp_path, "never-read")
    result = CliRunner().invoke(app, ["traces", command, str(monitor), "--since", "yesterday"])
    assert result.exit_code == 2, result.output
    assert "--since 'yesterday': expected an ISO-8601 time" in result.output
    assert "last" not in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["export", "mutate"])
def test_since_last_is_refused_where_there_is_no_watermark(tmp_path: Path, command: str) -> None:
    monitor = write_monitor(tmp_path, "never-read")
    result = CliRunner().invoke(app, ["traces", command, str(monitor), "--since", "last"])
    assert result.exit_code == 2, result.output
    assert "only stateval traces score keeps a watermark" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_traces_score_names_last_among_the_forms_it_takes(tmp_path: Path) -> None:
    monitor = write_monitor(tmp_path, "never-read")
    result = CliRunner().invoke(app, ["traces", "score", str(monitor), "--since", "yesterday"])
    assert result.exit_code == 2, result.output
    assert "a duration ago (30m, 2h, 7d) or 'last'" in result.output
