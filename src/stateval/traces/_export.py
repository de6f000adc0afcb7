"""From production spans to drafts for review: `export_drafts` (``stateval traces export``).

The monitor's spans (its ``traces:`` filters and mapping, a ``since``/``until`` window) are
read, optionally narrowed to the flagged ones (``stateval traces score``'s summary
annotation `SUMMARY_NAME` labelled ``flagged``) and to a seeded sample (stratified by an
attribute), then put in **review-queue order**: flagged spans first, then the lowest
confidence (the calibration triage order: the least sure values hold most of the errors), each
with the reason it is where it is. They become

* a case file (JSONL, stateval's case format): per span one case whose id is the span id, with
  the pre-state, the input, the mutator's output as ``actual_post_state`` (the **draft**, which
  a ``replay`` suite scores) and no ``expected_post_state`` yet; its metadata holds the source
  span (`SOURCE_SPAN_KEY`...) and the review (``status: unreviewed``, ``rank``, ``reason``);
* a Phoenix dataset whose examples link to their spans (``View Source Span``), the draft as
  their expected output, in queue order.

A person then corrects drafts on the spans (`stateval.traces._corrections`) and
``stateval traces import`` turns them into gold.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stateval.errors import StatevalError
from stateval.state import InterpretiveState
from stateval.suite import (
    REVIEW_KEY,
    SOURCE_PROJECT_KEY,
    SOURCE_SPAN_KEY,
    SOURCE_TRACE_KEY,
    UNREVIEWED,
    Monitor,
)
from stateval.traces._mapping import MappedCall
from stateval.traces._reader import SpanWindow, read_calls
from stateval.traces._verdicts import SUMMARY_NAME
from stateval.upload import Example, PhoenixUploader, StoredSpan

__all__ = [
    "Draft",
    "ExportOptions",
    "ExportResult",
    "export_drafts",
    "gold_suite",
    "review_queue",
    "sample_drafts",
]

_FLAGGED = "flagged"


@dataclass(frozen=True, slots=True)
class Draft:
    """One exported span: a mutator call waiting for review.

    Attributes:
        span: The span.
        call: Its mutator call.
        flagged: Why ``stateval traces score`` flagged it (None when it did not).
        stratum: The span's value of the ``--stratify-by`` attribute (None without one).
    """

    span: StoredSpan
    call: MappedCall
    flagged: str | None = None
    stratum: str | None = None

    @property
    def weakest(self) -> tuple[float, str | None]:
        """The lowest confidence among the draft's fields, and that field (1.0, None when the
        draft has no field)."""
        best = self.call.post_state.best_candidates()
        if not best:
            return 1.0, None
        path = min(best, key=lambda p: (best[p].confidence, p))
        return best[path].confidence, path

    @property
    def reason(self) -> str:
        """Why the draft is where it is in the queue."""
        confidence, path = self.weakest
        lowest = f"lowest confidence {confidence:.2f}" + (f" ({path})" if path else "")
        return f"flagged: {self.flagged}; {lowest}" if self.flagged is not None else lowest


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What to export and where.

    Attributes:
        cases: The case file to write (``.jsonl``).
        dataset: The Phoenix dataset to write (None: none).
        window: Which spans by start time.
        flagged: Only spans ``stateval traces score`` flagged.
        sample: Export at most this many (a seeded sample; None: all).
        seed: The sample's seed.
        stratify_by: A span attribute: the sample takes each of its values in proportion.
        force: Overwrite an existing case file.
        append: Add to an existing case file the spans it does not hold yet (its cases,
            reviewed or not, stay as they are; the new ones rank after them).
    """

    cases: Path
    dataset: str | None = None
    window: SpanWindow = field(default_factory=SpanWindow)
    flagged: bool = False
    sample: int | None = None
    seed: int = 0
    stratify_by: str | None = None
    force: bool = False
    append: bool = False


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What an export did.

    Attributes:
        read: Spans read (sampled by the monitor's ``sample``).
        unmapped: Spans that were no mutator call (their reasons: `stateval.traces.Unmapped`).
        flagged: Spans among them flagged by ``stateval traces score``.
        drafts: The exported drafts, in queue order.
        dataset_url: Where the dataset opens in Phoenix (None without one).
    """

    read: int
    unmapped: int
    flagged: int
    drafts: tuple[Draft, ...]
    dataset_url: str | None = None


def _rank(seed: int, span_id: str) -> bytes:
    return hashlib.sha256(f"{seed}:{span_id}".encode()).digest()


def sample_drafts(
    drafts: Sequence[Draft], n: int, seed: int = 0, *, stratified: bool = False
) -> list[Draft]:
    """A seeded sample of ``n`` drafts (each span's place is a hash of seed and span id, so
    the sample is stable). Stratified, each stratum gets its proportional share (largest
    remainders first, ties by stratum name)."""
    if n >= len(drafts):
        return list(drafts)
    if not stratified:
        return sorted(drafts, key=lambda d: _rank(seed, d.span.span_id))[:n]
    strata: dict[str, list[Draft]] = {}
    for draft in drafts:
        strata.setdefault(str(draft.stratum), []).append(draft)
    exact = {name: n * len(group) / len(drafts) for name, group in strata.items()}
    shares = {name: int(share) for name, share in exact.items()}
    leftover = n - sum(shares.values())
    for name in sorted(exact, key=lambda k: (shares[k] - exact[k], k))[:leftover]:
        shares[name] += 1
    chosen: list[Draft] = []
    for name, group in strata.items():
        chosen.extend(sorted(group, key=lambda d: _rank(seed, d.span.span_id))[: shares[name]])
    return chosen


def review_queue(drafts: Sequence[Draft], seed: int = 0) -> list[Draft]:
    """Flagged drafts first, then by lowest confidence; ties in a seeded order of span ids."""
    return sorted(
        drafts,
        key=lambda d: (d.flagged is None, d.weakest[0], _rank(seed, d.span.span_id)),
    )


async def _read_drafts(
    phoenix: PhoenixUploader, monitor: Monitor, options: ExportOptions
) -> tuple[list[Draft], int, int]:
    """Every mapped span of the window as a draft (unflagged yet); spans read, unmapped."""
    drafts: list[Draft] = []
    read = unmapped = 0
    async for page in read_calls(phoenix, monitor.traces, options.window):
        read += len(page.calls)
        for span, call in page.calls:
            if not isinstance(call, MappedCall):
                unmapped += 1
                continue
            stratum = None
            if options.stratify_by is not None:
                stratum = str(span.attributes.get(options.stratify_by, "(none)"))
            drafts.append(Draft(span, call, None, stratum))
    return drafts, read, unmapped


async def _with_flags(phoenix: PhoenixUploader, project: str, drafts: list[Draft]) -> list[Draft]:
    listed = await phoenix.list_span_annotations(
        project, [d.span.span_id for d in drafts], names=[SUMMARY_NAME]
    )
    why = {
        a.span_id: (a.explanation or _FLAGGED).strip()
        for a in listed
        if (a.label or "").lower() == _FLAGGED
    }
    return [
        Draft(d.span, d.call, why.get(d.span.span_id), d.stratum) if d.span.span_id in why else d
        for d in drafts
    ]


def draft_case(draft: Draft, project: str, rank: int) -> dict[str, Any]:
    """The case-file line of a draft (no ``expected_post_state`` yet)."""
    post = draft.call.post_state
    sure = all(vc.confidence == 1.0 for vc in post.best_candidates().values())
    review: dict[str, Any] = {"status": UNREVIEWED, "rank": rank, "reason": draft.reason}
    metadata: dict[str, Any] = {
        SOURCE_SPAN_KEY: draft.span.span_id,
        SOURCE_TRACE_KEY: draft.span.trace_id,
        SOURCE_PROJECT_KEY: project,
        REVIEW_KEY: review,
    }
    if draft.call.episode is not None:
        metadata["session_id"] = draft.call.episode
    pre = draft.call.pre_state or InterpretiveState()
    return {
        "id": draft.span.span_id,
        "pre_state": pre.to_flat(),
        "input": {"prompt": draft.call.input_text},
        "actual_post_state": post.to_flat() if sure else post.to_dict(),
        "metadata": metadata,
    }


def write_lines(path: Path, lines: Sequence[str]) -> None:
    """Write a JSONL case file whole, atomically (a reader sees the old file or the new)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    with temp.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
    os.replace(temp, path)


async def export_drafts(
    phoenix: PhoenixUploader, monitor: Monitor, options: ExportOptions
) -> ExportResult:
    """Export the monitor's spans as drafts for review (see the module docstring).

    Raises:
        StatevalError: The case file exists (without ``force``), or no span was selected.
        PhoenixUnavailableError: Phoenix cannot be reached.
    """
    kept: list[tuple[str, dict[str, Any] | None]] = []
    if options.cases.exists():
        if options.append:
            kept = read_lines(options.cases)
        elif not options.force:
            raise StatevalError(
                f"{options.cases} exists (--append adds the new spans, --force overwrites it)"
            )
    held = {str(data.get("id")) for _, data in kept if data is not None}
    first_rank = 1 + max((_rank_of(data) for _, data in kept if data is not None), default=0)
    project = monitor.traces.project
    drafts, read, unmapped = await _read_drafts(phoenix, monitor, options)
    drafts = [d for d in drafts if d.span.span_id not in held]
    drafts = await _with_flags(phoenix, project, drafts) if drafts else drafts
    flagged = sum(d.flagged is not None for d in drafts)
    if options.flagged:
        drafts = [d for d in drafts if d.flagged is not None]
    if options.sample is not None:
        stratified = options.stratify_by is not None
        drafts = sample_drafts(drafts, options.sample, options.seed, stratified=stratified)
    queue = review_queue(drafts, options.seed)
    if not queue and not options.append:
        raise StatevalError(
            f"no span of project {project!r} to export ({read} read, {unmapped} not mutator "
            "calls" + (", none flagged)" if options.flagged else ")")
        )
    cases = [draft_case(d, project, rank) for rank, d in enumerate(queue, start=first_rank)]
    new = [json.dumps(case, ensure_ascii=False) for case in cases]
    write_lines(options.cases, [text for text, _ in kept] + new)
    url = None
    if options.dataset is not None:
        everything = [data for _, data in kept if data is not None and "actual_post_state" in data]
        examples = [_example(case) for case in [*everything, *cases]]
        ref = await phoenix.ensure_dataset(
            options.dataset,
            examples,
            description=f"Drafts of {project} spans for review (stateval traces export)",
        )
        url = f"{phoenix.base_url}/datasets/{ref.id}/examples"
    return ExportResult(read, unmapped, flagged, tuple(queue), url)


def _rank_of(case: Mapping[str, Any]) -> int:
    review = (case.get("metadata") or {}).get(REVIEW_KEY)
    rank = review.get("rank") if isinstance(review, Mapping) else None
    return rank if isinstance(rank, int) else 0


def _example(case: Mapping[str, Any]) -> Example:
    """An exported case as the review dataset's example: input, the draft, the span link."""
    return Example(
        str(case["id"]),
        {"case_id": case["id"], "pre_state": case.get("pre_state", {}), "input": case["input"]},
        {"post_state": case["actual_post_state"]},
        case.get("metadata") or {},
        span_id=(case.get("metadata") or {}).get(SOURCE_SPAN_KEY),
    )


def read_lines(path: Path) -> list[tuple[str, dict[str, Any] | None]]:
    """Each non-blank line of a case file as written, with its JSON object (None when it
    holds none).

    Raises:
        StatevalError: The file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StatevalError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise StatevalError(f"{path}: not UTF-8 text: {exc.reason}") from exc
    out: list[tuple[str, dict[str, Any] | None]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        out.append((line, data if isinstance(data, dict) else None))
    return out


def gold_suite(monitor: Monitor, cases: str) -> dict[str, Any]:
    """A suite over an exported case file (``--suite``): the ``replay`` mutator scores each
    case's draft (the production output) against its gold once imported; the monitor's
    policies, slots and checks, with confidences not compared (gold has none)."""
    model = monitor.model
    policies = {
        path: policy.model_dump(mode="json", exclude_defaults=True)
        for path, policy in model.policies.items()
    }
    policies.setdefault("*", {})
    policies["*"].setdefault("confidence", "ignore")
    suite: dict[str, Any] = {
        "name": f"{monitor.name}-gold",
        "description": f"Gold from reviewed production spans of {monitor.traces.project}",
        "mutator": {"type": "replay"},
        "cases": {"file": cases},
        "policies": policies,
    }
    if isinstance(model.slots, list):  # a slot file is named relative to the monitor: not copied
        suite["slots"] = model.slots
    if model.checks:
        suite["checks"] = model.checks
    if model.judge is not None:  # fields judged by an LLM, and the human verdicts on them
        suite["judge"] = model.judge.model_dump(mode="json", exclude_defaults=True)
    return suite
