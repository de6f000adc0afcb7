"""Where a run's results go: the stateval home folder and the Phoenix server to report to."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from stateval.run._session import PhoenixTarget

__all__ = ["ENV_HOME", "resolve_phoenix", "stateval_home"]

ENV_HOME = "STATEVAL_HOME"
"""Environment variable naming the folder of run journals (default ``.stateval``)."""


def stateval_home() -> Path:
    """The folder of run journals: ``$STATEVAL_HOME`` or ``.stateval`` in the current folder.

    The local Phoenix server is not there: it is one per user (see
    `stateval.phoenix.EmbeddedPhoenix`).
    """
    return Path(os.environ.get(ENV_HOME) or ".stateval")


def resolve_phoenix(
    phoenix_url: str | None,
    no_phoenix: bool,
    recorded_url: str | None,
    announce: Callable[[str], None] = lambda line: None,
) -> PhoenixTarget | None:
    """The Phoenix server to report to, or None for a local-only run.

    In order: ``phoenix_url`` (``--phoenix-url``), the URL a resumed run recorded,
    ``PHOENIX_COLLECTOR_ENDPOINT``, else the user's local Phoenix (one per user, whatever the
    folder; started if need be, and announced). ``PHOENIX_API_KEY`` is sent as a bearer token.
    """
    if no_phoenix:
        return None
    api_key = os.environ.get("PHOENIX_API_KEY") or None
    url = phoenix_url or recorded_url
    if url is None:
        endpoint = os.environ.get("PHOENIX_COLLECTOR_ENDPOINT")
        if endpoint:
            url = endpoint.rstrip("/").removesuffix("/v1/traces")
    if url is None or (url == recorded_url and phoenix_url is None):
        from stateval.server import EmbeddedPhoenix

        embedded = EmbeddedPhoenix()
        if url is None or embedded.status().url == url:
            url = embedded.ensure_running()
            announce(f"Phoenix (embedded): {url}")
    return PhoenixTarget(url.rstrip("/"), api_key)
