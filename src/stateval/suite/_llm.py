"""The LLM parts of a suite: the ``llm`` mutator's client and the ``judge:`` block's judge.

Both are `OpenAICompatibleClient`s, so one OpenAI-compatible server (a local llama.cpp, vLLM,
Ollama, or OpenAI itself) can serve the mutator and the judge. Unset judge settings are taken
from an ``llm`` mutator. Problems are appended as lines naming file, line and field.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from stateval.errors import StatevalError
from stateval.mutators import UPDATES_JSON_SCHEMA, LLMMutator, Mutator
from stateval.suite._mutator_specs import JudgeSpec, LLMMutatorSpec, MutatorSpec
from stateval.suite._problems import Loc, format_problem

if TYPE_CHECKING:
    from stateval.mutators import OpenAICompatibleClient
    from stateval.phoenix import FieldJudge

__all__ = ["build_judge", "build_judge_client", "build_llm_mutator", "judge_settings"]

Locate = Callable[[Loc], int | None]

_INHERITED: Final = (
    "model",
    "base_url",
    "api_key_env",
    "max_tokens",
    "timeout",
    "max_retries",
    "max_concurrency",
    "schema_dialect",
)
_CLIENT_OPTIONS: Final = (
    "api_key_env",
    "max_tokens",
    "timeout",
    "max_retries",
    "max_concurrency",
    "schema_dialect",
    "temperature",
)


def _client(
    settings: Mapping[str, Any],
    *,
    section: str,
    label: str,
    locate: Locate,
    problems: list[str],
    response_schema: Mapping[str, Any] | None = None,
) -> OpenAICompatibleClient | None:
    from stateval.mutators import OpenAICompatibleClient

    key_env = settings.get("api_key_env")
    if key_env and not os.environ.get(key_env):
        field = f"{section}.api_key_env"
        problems.append(
            format_problem(
                label,
                locate((section, "api_key_env")),
                None,
                field,
                f"{'llm mutator' if section == 'mutator' else 'the judge'} needs the "
                f"environment variable {key_env} "
                "(or set api_key_env: null for a server without a key)",
            )
        )
        return None
    options: dict[str, Any] = {name: settings[name] for name in _CLIENT_OPTIONS}
    for name in ("base_url", "temperature"):  # unset: the client's defaults (OpenAI, 0.0)
        if settings.get(name) is None:
            options.pop(name, None)
        else:
            options[name] = settings[name]
    try:
        return OpenAICompatibleClient(settings["model"], response_schema=response_schema, **options)
    except StatevalError as exc:
        problems.append(format_problem(label, locate((section,)), None, section, str(exc)))
        return None


def build_llm_mutator(
    spec: LLMMutatorSpec, label: str, locate: Locate, problems: list[str]
) -> Mutator | None:
    """The `LLMMutator` of an ``llm`` mutator block, or None after appending its problems."""
    client = _client(
        spec.model_dump(),
        section="mutator",
        label=label,
        locate=locate,
        problems=problems,
        response_schema=UPDATES_JSON_SCHEMA if spec.structured_output else None,
    )
    if client is None:
        return None
    try:
        if spec.prompt_template is not None:
            return LLMMutator(client, spec.instructions, prompt_template=spec.prompt_template)
        return LLMMutator(client, spec.instructions)
    except StatevalError as exc:
        field = "mutator.prompt_template" if spec.prompt_template else "mutator"
        problems.append(format_problem(label, locate(("mutator",)), None, field, str(exc)))
        return None


def judge_settings(judge: JudgeSpec, mutator: MutatorSpec) -> dict[str, Any]:
    """The judge's client settings: its own, and an ``llm`` mutator's for those it leaves unset."""
    values = judge.model_dump()
    if isinstance(mutator, LLMMutatorSpec):
        for name in _INHERITED:
            if name not in judge.model_fields_set:
                values[name] = getattr(mutator, name)
    return values


def build_judge(
    judge: JudgeSpec, mutator: MutatorSpec, label: str, locate: Locate, problems: list[str]
) -> FieldJudge | None:
    """The `FieldJudge` of a ``judge:`` block, or None after appending its problems."""
    settings = judge_settings(judge, mutator)
    if not settings.get("model"):
        problems.append(
            format_problem(
                label,
                locate(("judge",)),
                None,
                "judge.model",
                "the judge needs a model (or an llm mutator to take it from)",
            )
        )
        return None
    client = _client(settings, section="judge", label=label, locate=locate, problems=problems)
    if client is None:
        return None
    from stateval.phoenix import FieldJudge, OpenAICompatibleLLM

    return FieldJudge(OpenAICompatibleLLM(client))


def build_judge_client(
    judge: JudgeSpec, label: str, locate: Locate, problems: list[str]
) -> OpenAICompatibleClient | None:
    """The LLM client of a monitor's ``judge:`` block (which must name its model), or None
    after appending its problems."""
    if not judge.model:
        where = locate(("judge",))
        problems.append(
            format_problem(label, where, None, "judge.model", "the judge needs a model")
        )
        return None
    return _client(
        judge.model_dump(), section="judge", label=label, locate=locate, problems=problems
    )
