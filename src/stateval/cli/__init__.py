"""The ``stateval`` command line: ``run``, ``validate``, ``rescore``, ``diff``, ``mutate``,
``phoenix``, ``model``, ``traces``. Each command lives in this package; options and exit codes
shared by the commands in ``_common.py``.
"""

from __future__ import annotations

from stateval.cli._app import app, main
from stateval.cli._mutate import mutate

__all__ = ["app", "main", "mutate"]
