"""The ``mutator:`` and ``judge:`` sections of a suite file: a Python callable, an LLM behind
an OpenAI-compatible API, or replayed predictions (pydantic models; `stateval schema`
publishes them with the rest)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from stateval.suite._spec_base import _Strict

__all__ = [
    "JudgeSpec",
    "LLMMutatorSpec",
    "MutatorSpec",
    "PythonMutatorSpec",
    "ReplayMutatorSpec",
]


class PythonMutatorSpec(_Strict):
    """A mutator written in Python, named by ``module:attr``."""

    type: Literal["python"]
    callable: str = Field(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
        description="'module:attr': a function (state, input) -> state, or an object with "
        "async mutate(state, input); with `args`, a factory called with them.",
    )
    path: str | None = Field(
        default=None,
        description="A folder (relative to the suite file) searched first for the module.",
    )
    args: dict[str, Any] | None = Field(
        default=None,
        description="Keyword arguments: when set, `callable` is called with them "
        "and must return the mutator.",
    )


class _ClientSettings(_Strict):
    """Settings of an `OpenAICompatibleClient` shared by the ``llm`` mutator and the judge."""

    max_tokens: int | None = Field(
        default=None, ge=1, description="Completion token limit per call (server default: none)."
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds allowed per HTTP attempt.")
    max_retries: int = Field(
        default=3, ge=0, description="Retries on 408/409/429/5xx, timeouts, connection errors."
    )
    max_concurrency: int = Field(default=4, ge=1, description="Calls in flight at once.")
    schema_dialect: Literal["auto", "json_schema", "json_object"] = Field(
        default="auto",
        description="How a response schema is sent: OpenAI's json_schema, llama.cpp's "
        "json_object, or auto (json_schema, then json_object if the server rejects it).",
    )


class LLMMutatorSpec(_ClientSettings):
    """An `LLMMutator` over an OpenAI-compatible chat endpoint."""

    type: Literal["llm"]
    model: str = Field(min_length=1)
    base_url: str | None = Field(default=None, description="Default: OpenAI's API.")
    api_key_env: str | None = Field(
        default="OPENAI_API_KEY",
        description="Environment variable holding the API key (null: the server needs none).",
    )
    instructions: str | None = None
    prompt_template: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    structured_output: bool = Field(
        default=True,
        description="Constrain replies to the update list's JSON Schema (UPDATES_JSON_SCHEMA).",
    )


class JudgeSpec(_ClientSettings):
    """The LLM judge of fields whose policy says ``judge: llm``.

    Unset settings are the ``llm`` mutator's (one server serves both); with a ``python``
    mutator, ``model`` must be given and the rest default as for a mutator.
    """

    provider: Literal["openai-compatible"] = "openai-compatible"
    model: str | None = Field(default=None, min_length=1)
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float | None = Field(default=0.0, ge=0, le=2)


class ReplayMutatorSpec(_Strict):
    """Outputs the system already produced, scored instead of calling anything: each case's
    ``actual_post_state``, or a predictions file joined by case id."""

    type: Literal["replay"]
    predictions: str | None = Field(
        default=None,
        description="A JSONL file (relative to the suite file), one "
        '{"id": <case id>, "actual_post_state": <state>} per line; without it, each case\'s '
        "own actual_post_state.",
    )


MutatorSpec = Annotated[
    PythonMutatorSpec | LLMMutatorSpec | ReplayMutatorSpec, Field(discriminator="type")
]
