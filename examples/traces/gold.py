"""From the CRM app's production spans to a suite with gold, and back to its spans.

    python examples/traces/gold.py http://127.0.0.1:6006 [PROJECT] [FOLDER]

1. the app (crm_app.py) sends its three calls to Phoenix;
2. ``stateval traces export`` writes them as drafts to review: ``crm-gold.jsonl`` (a case file
   in review-queue order), ``crm-gold.yaml`` (a replay suite over it) and the dataset
   ``crm-review`` whose examples link to the spans;
3. a reviewer corrects the drafts with span notes, here through the REST API (in the Phoenix UI:
   open the span, "Take notes", type the same lines): the third call took the phone number
   from the support desk's signature (``correct: phone = "555-0199"``); the first two are right
   (``correct: ok``);
4. ``stateval traces import`` turns the notes into gold;
5. ``stateval run`` scores the production outputs against it: 2 of 3 cases match, and the
   experiment's example of the third links to the span it came from.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from stateval.traces import correction_note
from stateval.upload import PhoenixUploader

HERE = Path(__file__).resolve().parent


def stateval(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a ``stateval`` command in ``folder`` as a user would, echoing what it prints."""
    done = subprocess.run(
        [sys.executable, "-c", "from stateval.cli import main; main()", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"$ stateval {' '.join(args)}\n{done.stdout}{done.stderr}", end="")
    return done


async def stored(url: str, project: str, at_least: int) -> None:
    """Wait until Phoenix has stored the app's spans (OTLP ingestion is asynchronous)."""
    async with PhoenixUploader(url) as phoenix:
        while True:
            count = 0
            async for page in phoenix.span_pages(project):
                count += len(page)
            if count >= at_least:
                return
            await asyncio.sleep(0.2)


async def correct(url: str, lines: list[str]) -> None:
    """The reviewer's notes, one per span (by the REST API: POST /v1/span_notes)."""
    async with PhoenixUploader(url) as phoenix:
        for line in lines:
            case = json.loads(line)
            if "Support desk" in case["input"]["prompt"]:
                note = correction_note({"phone": case["pre_state"]["phone"]})
            else:
                note = correction_note(ok=True)
            await phoenix.post_span_note(case["metadata"]["source_span_id"], note)


def main(argv: list[str]) -> int:
    url = argv[0] if argv else "http://127.0.0.1:6006"
    project = argv[1] if len(argv) > 1 else "crm-profile-updater"
    folder = Path(argv[2] if len(argv) > 2 else ".").resolve()
    os.environ["CRM_PROJECT"] = project
    subprocess.run([sys.executable, str(HERE / "crm_app.py"), url, project], check=True)
    asyncio.run(stored(url, project, 3))
    monitor = str(HERE / "monitor.yaml")
    exported = stateval(
        folder,
        *("traces", "export", monitor, "--cases", "crm-gold.jsonl", "--suite", "crm-gold.yaml"),
        *("--phoenix-url", url, "--force"),
    )
    if exported.returncode != 0:
        return exported.returncode
    asyncio.run(correct(url, (folder / "crm-gold.jsonl").read_text().splitlines()))
    imported = stateval(folder, "traces", "import", "crm-gold.jsonl", "--phoenix-url", url)
    if imported.returncode != 0:
        return imported.returncode
    ran = stateval(
        folder, "run", "crm-gold.yaml", "--phoenix-url", url, "--report-json", "report.json"
    )
    return 0 if ran.returncode in (0, 1) else ran.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
