"""The embedded Phoenix server: provisioning its environment, starting, reusing and stopping it.

Imports nothing from ``phoenix.*`` (the server runs in an environment of its own), so
``stateval phoenix status`` and the start of a run stay fast.
"""

from __future__ import annotations

from stateval.server._embedded import EmbeddedPhoenix, PhoenixServerStatus
from stateval.server._provision import (
    ENV_SERVER_BIN,
    ENV_SERVER_ENV,
    PHOENIX_SERVER_VERSION,
    Printer,
    phoenix_executable,
    provision_server_env,
    provisioning_commands,
    server_env_dir,
    stderr_printer,
)

__all__ = [
    "ENV_SERVER_BIN",
    "ENV_SERVER_ENV",
    "PHOENIX_SERVER_VERSION",
    "EmbeddedPhoenix",
    "PhoenixServerStatus",
    "Printer",
    "phoenix_executable",
    "provision_server_env",
    "provisioning_commands",
    "server_env_dir",
    "stderr_printer",
]
