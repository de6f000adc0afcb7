"""The one error boundary of the commands (issue 11, defect 2): distinct exit codes, one line."""

from __future__ import annotations

import errno
import signal

import pytest
import typer

from stateval.cli._common import (
    EXIT_INFRASTRUCTURE,
    EXIT_USAGE,
    RunInterrupted,
    errors_to_exit,
    interrupted_exit_code,
)
from stateval.errors import JournalWriteError, PhoenixUnavailableError, SuiteProblemsError


@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (SuiteProblemsError(["s.yaml:3: cases: required"]), EXIT_USAGE, "s.yaml:3: cases"),
        (PhoenixUnavailableError("Phoenix at x refused"), EXIT_INFRASTRUCTURE, "refused"),
        (JournalWriteError("cannot write j: No space left"), EXIT_INFRASTRUCTURE, "No space"),
        (
            OSError(errno.ENOSPC, "No space left on device", "/x/j"),
            EXIT_INFRASTRUCTURE,
            "no space left on device (/x/j)",
        ),
        (ZeroDivisionError("boom"), EXIT_INFRASTRUCTURE, "ZeroDivisionError: boom"),
        (
            ExceptionGroup("tasks", [ExceptionGroup("inner", [KeyError("k")])]),
            EXIT_INFRASTRUCTURE,
            "KeyError: 'k'",
        ),
        (
            ExceptionGroup("tasks", [JournalWriteError("cannot write j")]),
            EXIT_INFRASTRUCTURE,
            "cannot write j",
        ),
    ],
)
def test_errors_become_an_exit_code_and_lines_without_a_traceback(
    raised: Exception, code: int, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(typer.Exit) as caught, errors_to_exit(debug=False):
        raise raised
    assert caught.value.exit_code == code
    err = capsys.readouterr().err
    assert line in err
    assert "Traceback" not in err
    assert all(entry.startswith("error: ") for entry in err.splitlines())


def test_debug_adds_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit), errors_to_exit(debug=True):
        raise ZeroDivisionError("boom")
    assert "Traceback" in capsys.readouterr().err


def test_typer_exits_pass_through() -> None:
    with pytest.raises(typer.Exit) as caught, errors_to_exit(debug=False):
        raise typer.Exit(7)
    assert caught.value.exit_code == 7


def test_signals_exit_128_plus_their_number() -> None:
    assert [interrupted_exit_code(n) for n in (2, 15, 1)] == [130, 143, 129]


def test_an_interrupt_no_command_reported_is_one_line_and_128_plus_the_signal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Ctrl-C during `stateval traces score` (or any command without its own message) was a
    # "bug in stateval" with exit 3
    with pytest.raises(typer.Exit) as caught, errors_to_exit(debug=False):
        raise RunInterrupted(signal.SIGINT)
    assert caught.value.exit_code == 130
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: interrupted by SIGINT; what was journaled is kept"]
