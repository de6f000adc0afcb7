"""One run request, one orchestrator: `RunRequest` holds what a run needs, `carry_out` runs it.

``stateval run`` and the pytest plugin build the same request; each shows the run its own way
through a `RunView` (progress bars on a terminal, nothing in pytest). ``stateval traces score``
builds a `TracesRunRequest` of the same shape, run by `carry_out_traces` through the same steps
(Phoenix resolved, the run driven by the view, summary, the reports' table, a result whose
``passed`` is the exit code). The traces side is imported when first named (a run does not
need `stateval.traces`: ~0.2 s of every ``stateval run``'s start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stateval._lazy import lazy_names
from stateval.orchestrator._conclude import RunResult, RunView, undelivered
from stateval.orchestrator._merge import merge_runs
from stateval.orchestrator._orchestrate import carry_out
from stateval.orchestrator._request import RunRequest, TracesRunRequest
from stateval.orchestrator._workers import (
    BACKENDS,
    ShardDone,
    ShardTask,
    forked_parts,
    run_shard,
    shipped,
)

if TYPE_CHECKING:
    from stateval.orchestrator._traces import TracesResult, TracesView, carry_out_traces

__all__ = [
    "BACKENDS",
    "RunRequest",
    "RunResult",
    "RunView",
    "ShardDone",
    "ShardTask",
    "TracesResult",
    "TracesRunRequest",
    "TracesView",
    "carry_out",
    "carry_out_traces",
    "forked_parts",
    "merge_runs",
    "run_shard",
    "shipped",
    "undelivered",
]

_LAZY = {name: "._traces" for name in ("TracesResult", "TracesView", "carry_out_traces")}
"""Names imported from their module when first asked for."""


__getattr__ = lazy_names(__name__, _LAZY, globals())
