"""Production error rates per field: flags on every span corrected by reviewed cases.

The unit tests count a tally by hand; the Phoenix test runs the whole chain a team would:
spans sent over real OTLP by the example app, a random sample exported, every draft of it
reviewed with span notes, imported, and `stateval traces rates` estimating each field's true
error rate, which the fixture knows."""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

from stateval.calibration import estimate_error_rate
from stateval.errors import StatevalError
from stateval.state import InterpretiveState
from stateval.traces import MappedCall, NoGoldChecks, RateTally, correction_note
from stateval.upload import PhoenixUploader
from traces_app import FixtureCall, send_fixture, stored_spans, write_monitor
from traces_app import stateval_cli as _stateval


def _case(pre: dict[str, Any], prompt: str, draft: dict[str, Any], gold: dict[str, Any] | None):
    review = {"status": "unreviewed"} if gold is None else {"status": "corrected"}
    case: dict[str, Any] = {
        "id": uuid.uuid4().hex[:16],
        "pre_state": pre,
        "input": {"prompt": prompt},
        "actual_post_state": draft,
        "metadata": {"review": review},
    }
    if gold is not None:
        case["expected_post_state"] = gold
    return case


def test_a_tally_counts_flags_on_spans_and_errors_in_reviewed_cases() -> None:
    tally = RateTally(NoGoldChecks(grounded=("phone",)))
    for i in range(50):
        written = "555-0199" if i < 5 else f"555-01{i:02d}"
        tally.add_call(
            MappedCall(None, f"call 555-01{i:02d}", InterpretiveState.from_flat({"phone": written}))
        )
    reviewed = [
        # the draft wrote a number the message does not hold (flagged), and it was wrong
        _case({}, "call 555-0100", {"phone": "555-0199"}, {"phone": "555-0100"}),
        # grounded, but still wrong: the message gave two numbers (not flagged)
        _case({}, "not 555-0101, call 555-0102", {"phone": "555-0101"}, {"phone": "555-0102"}),
        *(
            _case(
                {}, f"call 555-02{i:02d}", {"phone": f"555-02{i:02d}"}, {"phone": f"555-02{i:02d}"}
            )
            for i in range(10)
        ),
    ]
    tally.add_cases([*reviewed, _case({}, "hi", {"phone": "1"}, None)])
    assert tally.calls == 50
    assert tally.flagged["phone"] == 5
    assert len(tally.reviewed) == 12
    assert tally.unreviewed == 1
    [phone] = tally.rates()
    assert phone.path == "phone"
    assert phone.flagged == 5
    assert phone.errors_found == 2
    expected = estimate_error_rate(
        [True] * 5 + [False] * 45, [True, True] + [False] * 10, [True, False] + [False] * 10
    )
    assert phone.rates.to_dict() == expected.to_dict()
    assert phone.to_dict()["errors_found"] == 2


def test_a_case_whose_state_cannot_be_read_is_an_error() -> None:
    tally = RateTally(NoGoldChecks())
    with pytest.raises(StatevalError):
        tally.add_case(_case({}, "hi", {"phone": "1"}, "not a state"))  # type: ignore[arg-type]


# -- against a real Phoenix ---------------------------------------------------------------------


def _fixture(n: int, seed: int = 5) -> tuple[list[FixtureCall], list[dict[str, Any]]]:
    """CRM calls with the truth beside each: a quarter of the phone updates are lost (stale:
    no check can see it), a tenth of the calls write a phone number the e-mail does not hold,
    a tenth clobber the company."""
    rng = random.Random(seed)
    calls, truths = [], []
    for i in range(n):
        profile = {"name": f"Person {i}", "phone": f"555-{1000 + i}", "company": "Acme"}
        truth = dict(profile)
        if i % 2 == 0:
            email = f"My new phone number is 555-{2000 + i}, please update it."
            truth["phone"] = f"555-{2000 + i}"
        else:
            email = "Thanks for the quick reply, all good on my side."
        written = dict(truth)
        draw = rng.random()
        if i % 2 == 0 and draw < 0.25:
            written["phone"] = profile["phone"]  # stale
        elif i % 2 == 1 and draw < 0.2:
            written["phone"] = f"555-{7000 + i}"  # ungrounded
        elif 0.8 <= draw < 0.9:
            written["company"] = "Globex"  # clobber
        calls.append(FixtureCall(profile, email, written))
        truths.append(truth)
    return calls, truths


@pytest.mark.phoenix
def test_flags_corrected_by_a_reviewed_sample_cover_the_true_error_rates(
    tmp_path: Path, phoenix_url: str
) -> None:
    project = f"crm-rates-{uuid.uuid4().hex[:8]}"
    calls, truths = _fixture(400)
    ids = send_fixture(phoenix_url, project, calls)
    asyncio.run(stored_spans(phoenix_url, project, len(ids)))
    truth_by_span = dict(zip(ids, truths, strict=True))
    true_rate = {
        path: sum(c.updated[path] != t[path] for c, t in zip(calls, truths, strict=True)) / 400
        for path in ("phone", "company")
    }
    monitor = write_monitor(tmp_path, project, grounded=["phone"], unexplained_changes=True)
    url = ("--phoenix-url", phoenix_url)
    exported = _stateval(
        tmp_path,
        "traces",
        "export",
        str(monitor),
        "--cases",
        "gold.jsonl",
        "--no-dataset",
        "--sample",
        "120",
        "--seed",
        "2",
        *url,
    )
    assert exported.returncode == 0, exported.stderr

    not_yet = _stateval(tmp_path, "traces", "rates", str(monitor), "--cases", "gold.jsonl", *url)
    assert not_yet.returncode == 0, not_yet.stderr
    assert "not measurable: no human-labelled sample" in not_yet.stdout

    async def review() -> None:  # a person reviews every draft of the sample
        async with PhoenixUploader(phoenix_url) as phoenix:
            for line in (tmp_path / "gold.jsonl").read_text().splitlines():
                case = json.loads(line)
                span, draft = case["id"], case["actual_post_state"]
                truth = truth_by_span[span]
                wrong = {p: truth[p] for p in truth if draft.get(p) != truth[p]}
                await phoenix.post_span_note(
                    span, correction_note(wrong) if wrong else correction_note(ok=True)
                )

    asyncio.run(review())
    imported = _stateval(tmp_path, "traces", "import", "gold.jsonl", *url)
    assert imported.returncode == 0, imported.stdout + imported.stderr

    done = _stateval(
        tmp_path,
        "traces",
        "rates",
        str(monitor),
        "--cases",
        "gold.jsonl",
        "--report-json",
        "rates.json",
        *url,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "rates.json").read_text())
    assert report["spans"] == 400
    assert report["reviewed"] == 120
    assert report["unreviewed"] == 0
    fields = {f["path"]: f for f in report["fields"]}
    phone = fields["phone"]
    # The flags see the ungrounded numbers, not the lost updates: the flag rate is far below the
    # true rate, and the corrected estimate's interval covers it.
    assert phone["flag_rate"]["estimate"] < true_rate["phone"] - 0.05
    corrected = phone["corrected"]
    assert corrected["low"] <= true_rate["phone"] <= corrected["high"]
    company = fields["company"]["corrected"]
    assert company["low"] <= true_rate["company"] <= company["high"]
    assert "error rate per field" in done.stdout

    # ... and recorded in the project: a span whose annotations carry the corrected estimates
    span = done.stderr.split("figures in Phoenix: span ", 1)[1].split()[0]

    async def figures() -> dict[str, float | None]:
        async with PhoenixUploader(phoenix_url) as phoenix:
            listed = await phoenix.list_span_annotations(project, [span])
        return {a.name: a.score for a in listed}

    scores = asyncio.run(figures())
    assert scores["error_rate:phone"] == pytest.approx(corrected["estimate"])
    assert scores["error_rate:company"] == pytest.approx(company["estimate"])


def test_the_markdown_report_gives_each_estimate_or_why_not() -> None:
    from stateval.reports import rates_markdown

    tally = RateTally(NoGoldChecks(grounded=("phone",)))
    for i in range(20):
        written = "555-0199" if i < 4 else f"555-01{i:02d}"
        call = InterpretiveState.from_flat({"phone": written})
        tally.add_call(MappedCall(None, f"call 555-01{i:02d}", call))
    text = rates_markdown("crm|x", tally.rates(), tally.calls, 0, 3)
    assert text.startswith("# Production error rates: crm\\|x\n")
    assert "20 spans checked; 0 reviewed cases, 3 drafts not reviewed." in text
    assert (
        "| `phone` | 20.0% | not measurable: no human-labelled sample for this field "
        "| not measurable: no human-labelled sample to correct with |"
    ) in text
