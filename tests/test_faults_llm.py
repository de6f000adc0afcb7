"""The LLM client and an LLM-driven run against a fake OpenAI-compatible server's fault modes
(issue 11): every call ends within its deadline, every fault is one case's error."""

from __future__ import annotations

import pytest

from fake_llm import FAULT_MODES, FakeLLM, fake_llm
from stateval.errors import LLMStatusError, LLMUnavailableError
from stateval.mutators._openai import OpenAICompatibleClient


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
