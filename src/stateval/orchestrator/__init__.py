"""One run request, one orchestrator: `RunRequest` holds what a run needs, `carry_out` runs it.

``stateval run``, the pytest plugin and ``stateval traces`` build the same request; each shows
the run its own way through a `RunView` (progress bars on a terminal, nothing in pytest).
"""

from __future__ import annotations

from stateval.orchestrator._merge import merge_runs
from stateval.orchestrator._orchestrate import RunResult, RunView, carry_out, undelivered
from stateval.orchestrator._request import RunRequest
from stateval.orchestrator._workers import BACKENDS, ShardDone, ShardTask, run_shard

__all__ = [
    "BACKENDS",
    "RunRequest",
    "RunResult",
    "RunView",
    "ShardDone",
    "ShardTask",
    "carry_out",
    "merge_runs",
    "run_shard",
    "undelivered",
]
