"""Run ``phoenix serve`` with its gRPC collector bound to loopback, like its HTTP server.

Phoenix 20.x binds the OTLP/gRPC collector to ``[::]:PHOENIX_GRPC_PORT`` (every interface) and
has no setting for its host; ``PHOENIX_HOST`` moves only the HTTP server. stateval exports spans
over HTTP, so the embedded server's gRPC port only has to exist on this machine. This script is
executed by the *server environment's* interpreter (it imports nothing from stateval):

    <server python> _loopback_serve.py <phoenix executable> serve

It wraps grpc.aio's server so that a port requested on every interface (``[::]``, ``0.0.0.0``,
no host) is bound on ``STATEVAL_GRPC_BIND_HOST`` (``127.0.0.1``) instead, then runs the
``phoenix`` console script as ``__main__``.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

__all__ = ["main"]

_WILDCARDS = ("[::]", "0.0.0.0", "", "*")


def _loopback(address: str, host: str) -> str:
    bound, _, port = address.rpartition(":")
    return f"{host}:{port}" if bound in _WILDCARDS else address


def _patch_grpc(host: str) -> None:
    from grpc.aio import _server  # type: ignore[import-untyped]

    original_insecure = _server.Server.add_insecure_port
    original_secure = _server.Server.add_secure_port

    def add_insecure_port(self: Any, address: str) -> int:
        return int(original_insecure(self, _loopback(address, host)))

    def add_secure_port(self: Any, address: str, credentials: Any) -> int:
        return int(original_secure(self, _loopback(address, host), credentials))

    _server.Server.add_insecure_port = add_insecure_port
    _server.Server.add_secure_port = add_secure_port


def main() -> None:
    """Patch, then hand over to the ``phoenix`` script named in ``argv[1]``."""
    if len(sys.argv) < 2:
        sys.exit("usage: _loopback_serve.py PHOENIX_EXECUTABLE serve")
    _patch_grpc(os.environ.get("STATEVAL_GRPC_BIND_HOST", "127.0.0.1"))
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
