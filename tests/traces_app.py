"""The instrumented example app of examples/traces, imported by the traces tests, and a poll
that waits until Phoenix has stored a project's spans."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from stateval.upload import PhoenixUploader, SpanFilter

_APP = Path(__file__).resolve().parent.parent / "examples" / "traces" / "crm_app.py"


def crm_app() -> ModuleType:
    """examples/traces/crm_app.py as a module."""
    spec = importlib.util.spec_from_file_location("crm_app", _APP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def stored_spans(
    url: str, project: str, at_least: int, where: SpanFilter | None = None
) -> int:
    """How many spans ``project`` holds, once it holds at least ``at_least`` (polled)."""
    async with PhoenixUploader(url) as phoenix:
        while True:
            count = 0
            async for page in phoenix.span_pages(project, where, page_size=1000):
                count += len(page)
            if count >= at_least:
                return count
            await asyncio.sleep(0.2)


@dataclass(frozen=True)
class FixtureCall:
    """One call of the injected-error fixture: what the app read and wrote, and the error
    injected into what it wrote (None for a clean call)."""

    profile: dict[str, Any]
    email: str
    updated: dict[str, Any]
    injected: str | None = None
    field: str | None = None


_FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken"]
_LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]
_COMPANIES = ["Acme", "Initech", "Globex", "Umbrella", "Hooli", "Vandelay"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August"]


def _phone(rng: random.Random) -> tuple[str, str]:
    """A phone number as stored (212-555-0142) and as a person writes it."""
    area, line = rng.randint(201, 989), rng.randint(100, 9999)
    stored = f"{area}-555-{line:04d}"
    written = rng.choice(
        [stored, f"({area}) 555-{line:04d}", f"+1 {area} 555 {line:04d}", f"{area}.555.{line:04d}"]
    )
    return stored, written


def _clean(rng: random.Random, i: int) -> FixtureCall:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    old_phone, _ = _phone(rng)
    profile = {
        "name": f"{first} {last}",
        "phone": old_phone,
        "email": f"{first.lower()}{i}@example.com",
        "company": rng.choice(_COMPANIES),
        "renewal_date": "2026-06-30",
    }
    kind = rng.choice(["phone", "email", "renewal", "company", "nothing"])
    updated = dict(profile)
    signature = f"\n--\n{first} {last}\n{profile['company']}"
    if kind == "phone":
        stored, written = _phone(rng)
        email = f"Hi, my number changed: please use {written} from now on.{signature}"
        updated["phone"] = stored
    elif kind == "email":
        new = f"{first.lower()}.{last.lower()}{i}@mail.example.org"
        email = f"Please send invoices to {new} instead.{signature}"
        updated["email"] = new
    elif kind == "renewal":
        day, month = rng.randint(1, 28), rng.randint(1, 8)
        written = rng.choice(
            [
                f"{day} {_MONTHS[month - 1]} 2027",
                f"{_MONTHS[month - 1]} {day}, 2027",
                f"2027-{month:02d}-{day:02d}",
                f"{day}/{month}/27",  # a two-digit year: not a form `Grounding` reads
                f"{_MONTHS[month - 1]} {day}",  # no year: not a form either
            ]
        )
        email = f"We'd like to renew on {written}, thanks.{signature}"
        updated["renewal_date"] = f"2027-{month:02d}-{day:02d}"
    elif kind == "company":
        new = rng.choice([c for c in _COMPANIES if c != profile["company"]])
        email = f"I joined {new} last month, please update my details.\n--\n{first} {last}"
        updated["company"] = new
    else:
        email = f"Thanks for the quick reply, all good on my side.{signature}"
    return FixtureCall(profile, email, updated)


def crm_fixture(count: int, seed: int = 0, error_share: float = 0.3) -> list[FixtureCall]:
    """``count`` calls of the CRM updater, ``error_share`` of them with one injected error:
    an ungrounded value (``ungrounded``: a phone number the e-mail does not hold), a clobbered
    untouched field (``clobber``: the company changed with no word of it), or an invalid format
    (``format``: an e-mail address without ``@``, as the e-mail spells it out), or a phone
    number taken from the e-mail's signature (``signature``: issue 20's newcomer's clobber)."""
    rng = random.Random(seed)
    calls = []
    for i in range(count):
        call = _clean(rng, i)
        if rng.random() >= error_share:
            calls.append(call)
            continue
        kind = rng.choice(["ungrounded", "clobber", "format", "signature"])
        updated = dict(call.updated)
        email = call.email
        if kind == "ungrounded":
            updated["phone"] = _phone(rng)[0]
            field = "phone"
        elif kind == "clobber":
            others = [
                c for c in _COMPANIES if c not in (call.profile["company"], updated["company"])
            ]
            updated["company"] = rng.choice(others)
            email = email.replace(call.profile["company"], "").replace(updated["company"], "")
            field = "company"
        elif kind == "signature":
            stored, written = _phone(rng)
            email = f"Thanks, that's all sorted.\n--\nSupport desk {written}"
            updated = {**call.profile, "phone": stored}
            field = "phone"
        else:
            user = call.profile["name"].split()[0].lower()
            email = f"My new address is {user} at example dot com.\n--\n{call.profile['name']}"
            updated = {**call.profile, "email": f"{user} at example dot com"}
            field = "email"
        calls.append(FixtureCall(call.profile, email, updated, kind, field))
    return calls


def send_fixture(
    url: str, project: str, calls: list[FixtureCall], *, session_size: int = 0
) -> list[str]:
    """Export ``calls`` as the example app's spans over OTLP; their span ids, in order."""
    app = crm_app()
    provider = app.instrument(url, project)
    tracer = provider.get_tracer("crm_app")
    ids = []
    for i, call in enumerate(calls):
        session = f"{project}-thread-{i // session_size}" if session_size else None
        ids.append(
            app.record_call(tracer, call.profile, call.email, call.updated, session_id=session)
        )
    provider.shutdown()
    return ids


MONITOR = """\
name: crm-monitor
traces:
  project: {project}
  span_name: update_profile
  pre_state: input.value#/profile
  input: input.value#/email
  post_state: output.value
checks:
  email: [{{type: regex, pattern: "^[^@ ]+@[^@ ]+\\\\.[a-z]+$"}}]
grounded: [phone, email, renewal_date]
unexplained_changes: true
thresholds:
  overall_match_rate: 0.9
"""


def send_calls(url: str, project: str, calls: list[tuple[dict[str, object], str]]) -> list[str]:
    """Send ``(profile, email)`` calls as spans of the example app (its own output); their span
    ids, once Phoenix has stored them all."""
    app = crm_app()
    provider = app.instrument(url, project)
    tracer = provider.get_tracer("crm_app")
    ids = [
        app.record_call(tracer, profile, email, app.update_profile(profile, email))
        for profile, email in calls
    ]
    provider.shutdown()
    asyncio.run(stored_spans(url, project, len(ids)))
    return ids


STATEVAL = [sys.executable, "-c", "from stateval.cli import main; main()"]


def write_monitor(folder: Path, project: str, name: str = "monitor", **extra: Any) -> Path:
    """A monitor file of the example app's spans in ``project`` (``extra``: more top-level
    keys), written as ``<folder>/<name>.yaml``."""
    path = folder / f"{name}.yaml"
    traces = {
        "project": project,
        "span_name": "update_profile",
        "pre_state": "input.value#/profile",
        "input": "input.value#/email",
        "post_state": "output.value",
    }
    path.write_text(yaml.safe_dump({"name": "crm", "traces": traces, **extra}))
    return path


def stateval_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``stateval ARGS`` run in ``folder``, with a stateval home of its own there."""
    return subprocess.run(
        [*STATEVAL, *args],
        cwd=folder,
        env={**os.environ, "STATEVAL_HOME": str(folder / ".stateval")},
        capture_output=True,
        text=True,
        check=False,
    )
