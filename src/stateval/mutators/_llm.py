"""`LLMMutator`: a mutator that asks an LLM client for a JSON list of field updates (seed 000)."""

from __future__ import annotations

import json
from string import Template
from typing import Any, Final

from stateval.errors import MutatorError
from stateval.mutators._client import LLMClient
from stateval.mutators._input import StructuredInput
from stateval.mutators._updates import apply_updates, parse_updates
from stateval.state import InterpretiveState

__all__ = ["DEFAULT_INSTRUCTIONS", "DEFAULT_PROMPT_TEMPLATE", "PROMPT_PLACEHOLDERS", "LLMMutator"]

DEFAULT_INSTRUCTIONS: Final = (
    "Set or change only the fields the message supports; do not repeat unchanged fields."
)

PROMPT_PLACEHOLDERS: Final = frozenset(
    {"instructions", "state", "prompt", "message_id", "metadata"}
)
"""The ``$name`` placeholders a prompt template may use (`string.Template` syntax)."""

DEFAULT_PROMPT_TEMPLATE: Final = """\
You update a structured state from one input message.
$instructions

Current state, as JSON: each field path with its best value and that value's confidence.
$state

Input message (id: $message_id):
$prompt

Input metadata, as JSON:
$metadata

Reply with only a JSON array of updates, one object per field you set or change:
[{"path": "registrant.name", "value": "Ada Lovelace", "confidence": 0.95, "inference": "Stated."}]
- "path": the field path, dot-separated segments such as "registrant.email" or "items.0.sku".
- "value": the field's new value, any JSON value.
- "confidence": a number from 0 to 1: how sure the message makes you.
- "inference": one short sentence saying why.
Reply [] if the message changes nothing.
"""
"""The prompt `LLMMutator` sends by default; pass ``prompt_template=`` to change it."""


class LLMMutator:
    """A mutator that asks ``client.generate(prompt)`` for updates and applies them to a copy.

    The prompt is ``prompt_template`` with its ``$placeholders`` filled in (see
    `PROMPT_PLACEHOLDERS`); ``$state`` is the current state's best values with their confidences,
    as JSON. The reply is parsed with `parse_updates`: a reply that is not a valid list of updates
    raises `MutatorOutputError` and nothing is applied. Each update is *added* as a candidate
    carrying the input's ``message_id``, so a new value wins only if its confidence is higher.

    Args:
        client: Anything with ``async generate(prompt) -> str``, usually a `BaseLLMClient`.
        instructions: Task-specific guidance placed at ``$instructions`` (defaults to
            `DEFAULT_INSTRUCTIONS`).
        prompt_template: A `string.Template` text (literal ``$`` written as ``$$``).

    Example:
        >>> from stateval.testing import ScriptedClient
        >>> client = ScriptedClient(['[{"path": "a", "value": 1, "confidence": 0.9}]'])
        >>> import asyncio
        >>> state = asyncio.run(
        ...     LLMMutator(client).mutate(InterpretiveState(), StructuredInput("a is 1", "m-1"))
        ... )
        >>> state.best("a")
        ValueConfidence(value=1, confidence=0.9, inference=None, message_id='m-1')
    """

    def __init__(
        self,
        client: LLMClient,
        instructions: str | None = None,
        *,
        prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
    ) -> None:
        if not callable(getattr(client, "generate", None)):
            raise MutatorError(
                "LLMMutator needs a client with async generate(prompt), "
                f"got {type(client).__name__}"
            )
        template = Template(prompt_template)
        if not template.is_valid():
            raise MutatorError(
                "prompt template has an invalid $placeholder (write a literal $ as $$)"
            )
        unknown = set(template.get_identifiers()) - PROMPT_PLACEHOLDERS
        if unknown:
            raise MutatorError(
                f"prompt template uses unknown placeholder(s) {sorted(unknown)}; "
                f"known: {sorted(PROMPT_PLACEHOLDERS)}"
            )
        self.client = client
        self.instructions = DEFAULT_INSTRUCTIONS if instructions is None else instructions
        self.prompt_template = prompt_template
        self._template = template

    def build_prompt(self, state: InterpretiveState, input: StructuredInput) -> str:
        """The prompt sent for ``state`` and ``input`` (override to build it another way)."""
        return self._template.substitute(
            instructions=self.instructions,
            state=_dump(_best_values(state)),
            prompt=input.prompt,
            message_id=input.message_id,
            metadata=_dump(dict(input.metadata)),
        )

    async def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        """Ask the client, parse its reply, and return a copy of ``state`` with the updates."""
        raw = await self.client.generate(self.build_prompt(state, input))
        if not isinstance(raw, str):
            raise MutatorError(
                f"{type(self.client).__name__}.generate returned a {type(raw).__name__}, not str"
            )
        return apply_updates(state, parse_updates(raw), input.message_id)

    def describe(self) -> str:
        """One line for experiment metadata: the client class and the instructions."""
        instructions = self.instructions
        if len(instructions) > 80:
            instructions = instructions[:77] + "..."
        custom = "" if self.prompt_template == DEFAULT_PROMPT_TEMPLATE else ", custom prompt"
        client = type(self.client).__name__
        return f"LLMMutator(client={client}, instructions={instructions!r}{custom})"


def _best_values(state: InterpretiveState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in state.paths():
        best = state.best(path)
        if best is not None:
            out[path] = {"value": best.value, "confidence": best.confidence}
    return out


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
