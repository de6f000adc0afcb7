"""Where a run's journals go: the stateval home folder."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_HOME", "stateval_home"]

ENV_HOME = "STATEVAL_HOME"
"""Environment variable naming the folder of run journals (default ``.stateval``)."""


def stateval_home() -> Path:
    """The folder of run journals: ``$STATEVAL_HOME`` or ``.stateval`` in the current folder.

    The local Phoenix server is not there: it is one per user (see
    `stateval.server.EmbeddedPhoenix`).
    """
    return Path(os.environ.get(ENV_HOME) or ".stateval")
