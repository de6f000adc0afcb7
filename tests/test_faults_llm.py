"""The LLM client and an LLM-driven run against a fake OpenAI-compatible server's fault modes
(issue 11): every call ends within its deadline, every fault is one case's error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_llm import FAULT_MODES, FakeLLM, fake_llm
from stateval.errors import LLMStatusError, LLMUnavailableError
from stateval.mutators._openai import OpenAICompatibleClient
from stateval.run import Journal


@pytest.fixture(scope="module")
def server() -> FakeLLM:
    with fake_llm() as fake:
        yield fake


def _client(fake: FakeLLM, **kwargs: object) -> OpenAICompatibleClient:
    kwargs.setdefault("api_key_env", None)
    kwargs.setdefault("backoff_base", 0.01)
    return OpenAICompatibleClient("fake-model", base_url=fake.url, **kwargs)  # type: ignore[arg-type]


def test_the_fake_server_has_thirty_fault_modes_or_more() -> None:
    assert len(FAULT_MODES) >= 30


@pytest.mark.parametrize("mode", ["trickle", "hang_after_headers", "hang"])
async def test_the_timeout_bounds_the_whole_attempt_not_each_read(
    server: FakeLLM, mode: str
) -> None:
    # "trickle" sends a *valid* reply one byte every 0.5 s: each read is quick, so a per-read
    # timeout would wait the ~2 minutes and succeed. The attempt's deadline ends it.
    client = _client(server, timeout=1.0, max_retries=1)
    with pytest.raises(LLMUnavailableError, match=r"timed out after 1s; gave up after 2 attempt"):
        await client.generate(f"FAULT:{mode}")
    await client.aclose()


async def test_the_key_is_redacted_where_a_server_echoes_it(server: FakeLLM) -> None:
    client = _client(server, api_key="sk-live-ABCDEFGH12345678", max_retries=0)
    with pytest.raises(LLMStatusError) as caught:
        await client.generate("FAULT:http_401_echo")
    await client.aclose()
    assert server.authorizations[-1] == "Bearer sk-live-ABCDEFGH12345678"
    assert "ABCDEFGH12345678" not in str(caught.value)
    assert "ABCDEFGH12345678" not in caught.value.detail


async def test_a_basic_authorization_echoed_back_is_redacted(server: FakeLLM) -> None:
    client = _client(server, max_retries=0, extra_body={})
    client._api_key = None
    http = client._bind().http
    http.headers["Authorization"] = "Basic dXNlcjpodW50ZXIy"
    with pytest.raises(LLMStatusError) as caught:
        await client.generate("FAULT:http_401_echo")
    await client.aclose()
    assert "dXNlcjpodW50ZXIy" not in str(caught.value)
    assert "Basic ***" in caught.value.detail


# -- a whole run: one case per fault mode, through the `stateval` command ----------------------

_STATEVAL = Path(sys.executable).with_name("stateval")


def _fault_suite(folder: Path, url: str, modes: list[str]) -> Path:
    cases = [
        {
            "id": mode,
            "input": {"prompt": f"FAULT:{mode}"},
            "expected_post_state": {"n": 5, "name": "Ada"},
        }
        for mode in modes
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "suite.yaml").write_text(
        f"""
name: faults
mutator:
  type: llm
  model: fake-model
  base_url: {url}
  api_key_env: FAKE_LLM_KEY
  timeout: 2
  max_retries: 1
  structured_output: false
concurrency: 8
policies:
  n: {{numeric_tolerance: 0.5}}
thresholds: {{max_error_rate: 1.0}}
cases: {{file: cases.jsonl}}
"""
    )
    return folder / "suite.yaml"


def test_every_fault_mode_is_one_case_error_and_the_run_finishes(
    server: FakeLLM, tmp_path: Path
) -> None:
    modes = sorted(FAULT_MODES)
    suite = _fault_suite(tmp_path, server.url, modes)
    env = {
        **os.environ,
        "STATEVAL_HOME": str(tmp_path / "home"),
        "FAKE_LLM_KEY": "sk-fake-KEY0123456789",
    }
    report = tmp_path / "report.json"
    done = subprocess.run(
        [str(_STATEVAL), "run", str(suite), "--no-phoenix", "--report-json", str(report)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    journal = Journal.open(tmp_path / "home")
    assert journal.complete
    assert sorted(journal.results) == modes
    errors = {case: rec["error"] for case, rec in journal.results.items() if rec["error"]}
    ok = {"ok", "fenced", "http_503_then_ok", "http_429_then_ok"}
    assert set(modes) - set(errors) >= ok
    assert not ok & set(errors), {c: errors[c] for c in ok & set(errors)}
    for mode in ("trickle", "hang", "hang_after_headers", "surrogate_value", "huge_int", "deep"):
        assert mode in errors, mode
    assert all("\n" not in e for e in errors.values())
    assert "timed out after 2s" in errors["trickle"]
    # A 400-digit integer is a value like any other: compared exactly, not a crash.
    assert journal.results["big_int"]["error"] is None
    text = report.read_text() + "".join(p.read_text() for p in (tmp_path / "home").rglob("*.jsonl"))
    assert "KEY0123456789" not in text + done.stdout + done.stderr
