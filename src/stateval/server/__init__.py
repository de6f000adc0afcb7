"""The local Phoenix server (one per user): provisioning its environment, starting, reusing and
stopping it.

Imports nothing from ``phoenix.*`` (the server runs in an environment of its own), so
``stateval phoenix status`` and the start of a run stay fast.
"""

from __future__ import annotations

from stateval.server._embedded import (
    ENV_PHOENIX_HOME,
    ENV_PHOENIX_PORT,
    EmbeddedPhoenix,
    PhoenixServerStatus,
    phoenix_home,
)
from stateval.server._provision import (
    ENV_SERVER_BIN,
    ENV_SERVER_ENV,
    ENV_UV,
    PHOENIX_SERVER_VERSION,
    PROGRESS_EVERY,
    Printer,
    find_uv,
    phoenix_executable,
    provision_server_env,
    provisioning_commands,
    server_env_dir,
    stderr_printer,
)

__all__ = [
    "ENV_PHOENIX_HOME",
    "ENV_PHOENIX_PORT",
    "ENV_SERVER_BIN",
    "ENV_SERVER_ENV",
    "ENV_UV",
    "PHOENIX_SERVER_VERSION",
    "PROGRESS_EVERY",
    "EmbeddedPhoenix",
    "PhoenixServerStatus",
    "Printer",
    "find_uv",
    "phoenix_executable",
    "phoenix_home",
    "provision_server_env",
    "provisioning_commands",
    "server_env_dir",
    "stderr_printer",
]
