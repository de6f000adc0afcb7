"""``stateval phoenix start|stop|status``: the local Phoenix server (one per user)."""

from __future__ import annotations

from typing import Annotated

import typer

from stateval.cli._common import DebugOption, errors_to_exit

__all__ = ["phoenix_app"]

phoenix_app = typer.Typer(
    help="Manage the local Phoenix server (one per user, found from any folder).",
    no_args_is_help=True,
)


@phoenix_app.command("start", short_help="Start the local Phoenix server (one per user).")
def phoenix_start(
    port: Annotated[
        int | None,
        typer.Option(
            min=1, max=65535, metavar="PORT", help="Port to listen on (default 6006, else free)."
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Start the local Phoenix server (or find it running) and print its URL.

    There is one per user, its data in the user's data directory (STATEVAL_PHOENIX_HOME moves
    it); every run, from any folder, reports to it unless told otherwise.
    """
    with errors_to_exit(debug):
        from stateval.server import EmbeddedPhoenix

        print(EmbeddedPhoenix().ensure_running(port))


@phoenix_app.command("stop")
def phoenix_stop(
    debug: DebugOption = False,
) -> None:
    """Stop the local Phoenix server."""
    with errors_to_exit(debug):
        from stateval.server import EmbeddedPhoenix

        stopped = EmbeddedPhoenix().stop()
        print("stopped" if stopped else "not running")


@phoenix_app.command("status")
def phoenix_status(
    debug: DebugOption = False,
) -> None:
    """Say whether the local Phoenix server runs: URL, version, uptime, data folder.

    Exit code 0 when it runs, 1 when it does not.
    """
    with errors_to_exit(debug):
        from stateval.server import EmbeddedPhoenix

        status = EmbeddedPhoenix().status()
        if status.running:
            print(f"running at {status.url} (pid {status.pid})")
            print(f"version:  arize-phoenix {status.version or 'unknown'}")
            print(f"uptime:   {_duration(status.uptime or 0.0)}")
        else:
            print("not running (`stateval phoenix start` starts it)")
        print(f"data:     {status.data_dir}")
        print(f"log:      {status.log_file}")
        if not status.running:
            raise typer.Exit(1)


def _duration(seconds: float) -> str:
    """``2 h 05 min``, ``3 min 07 s``, ``12 s``."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"
