"""From a span's attributes to a mutator call: pre-state, input text and post-state.

A location names an attribute and, after ``#``, a JSON pointer (RFC 6901) into the attribute's
JSON: ``input.value#/profile``. Spans written by ``stateval run`` (``stateval.mutate``) need no
mapping: their ``input.value`` is ``{"case_id", "pre_state", "input"}`` and their
``output.value`` the post-state. A span that cannot be mapped becomes an `Unmapped` with the
reason, never an exception.

Example:
    >>> mapping = SpanMapping.parse(
    ...     pre_state="input.value#/profile", input="input.value#/email", post_state="output.value"
    ... )
    >>> call = mapping.map_attributes({
    ...     "input.value": '{"profile": {"phone": "555-0100"}, "email": "Call me at 555-0199"}',
    ...     "output.value": '{"phone": "555-0199"}',
    ... })
    >>> call.pre_state.to_flat(), call.input_text, call.post_state.to_flat()
    ({'phone': '555-0100'}, 'Call me at 555-0199', {'phone': '555-0199'})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stateval.errors import StateError
from stateval.state import InterpretiveState
from stateval.suite import TracesSpec
from stateval.upload import StoredSpan
from stateval.wire import coerce_state, task_error

__all__ = ["AttributePointer", "MappedCall", "SpanMapping", "Unmapped"]

_INPUT_VALUE = "input.value"
_OUTPUT_VALUE = "output.value"


class _NotFound(Exception):
    """A location that resolves to nothing (the message says where it stopped)."""


@dataclass(frozen=True, slots=True)
class AttributePointer:
    """An attribute and a JSON pointer into its JSON (``""``: the whole attribute).

    Example:
        >>> AttributePointer.parse("input.value#/profile/phone").resolve(
        ...     {"input.value": '{"profile": {"phone": "555-0100"}}'})
        '555-0100'
    """

    attribute: str
    pointer: str = ""

    @classmethod
    def parse(cls, text: str) -> AttributePointer:
        """Read ``attribute#/json/pointer`` (the pointer is optional)."""
        attribute, _, pointer = text.partition("#")
        return cls(attribute, pointer)

    def __str__(self) -> str:
        return f"{self.attribute}#{self.pointer}" if self.pointer else self.attribute

    def resolve(self, attributes: Mapping[str, Any]) -> Any:
        """The value at this location of a span's attributes.

        Raises:
            _NotFound: The attribute is absent, not JSON where a pointer needs it, or the
                pointer leads nowhere.
        """
        if self.attribute not in attributes:
            raise _NotFound(f"no attribute {self.attribute!r}")
        value = attributes[self.attribute]
        if not self.pointer:
            return value
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise _NotFound(f"attribute {self.attribute!r} is not JSON") from None
        node = value
        for raw in self.pointer.split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise _NotFound(f"{self}: nothing at {token!r}")
        return node


@dataclass(frozen=True, slots=True)
class MappedCall:
    """One mutator call read from a span.

    Attributes:
        pre_state: The state before the call (None when the monitor does not map it).
        input_text: The message the mutator read, as text.
        post_state: The state it wrote.
        episode: The episode (session) the call belongs to, when it has one.
    """

    pre_state: InterpretiveState | None
    input_text: str
    post_state: InterpretiveState
    episode: str | None = None


@dataclass(frozen=True, slots=True)
class Unmapped:
    """A span that is not a readable mutator call, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class SpanMapping:
    """Where a span keeps a mutator call's pre-state, input and post-state.

    Attributes:
        input: Where the input is (a string, or an object: its ``prompt``, else its JSON).
        post_state: Where the post-state is (any state shape `stateval.wire.coerce_state`
            reads: flat, nested or the candidate form).
        pre_state: Where the pre-state is (None: not mapped; unexplained changes need it).
        episode: The attribute naming the call's episode (``session.id``), or None.
    """

    input: AttributePointer
    post_state: AttributePointer
    pre_state: AttributePointer | None = None
    episode: str | None = "session.id"

    @classmethod
    def parse(
        cls,
        *,
        input: str,
        post_state: str,
        pre_state: str | None = None,
        episode: str | None = "session.id",
    ) -> SpanMapping:
        """A mapping from locations written as in a monitor file."""
        return cls(
            input=AttributePointer.parse(input),
            post_state=AttributePointer.parse(post_state),
            pre_state=None if pre_state is None else AttributePointer.parse(pre_state),
            episode=episode,
        )

    @classmethod
    def stateval_mutate(cls, episode: str | None = "session.id") -> SpanMapping:
        """The mapping of the ``stateval.mutate`` spans ``stateval run`` writes."""
        return cls(
            input=AttributePointer(_INPUT_VALUE, "/input"),
            post_state=AttributePointer(_OUTPUT_VALUE),
            pre_state=AttributePointer(_INPUT_VALUE, "/pre_state"),
            episode=episode,
        )

    @classmethod
    def of(cls, spec: TracesSpec) -> SpanMapping:
        """The mapping of a monitor file's ``traces:`` section."""
        if not spec.mapped:
            return cls.stateval_mutate(spec.episode)
        assert spec.input is not None
        assert spec.post_state is not None
        return cls.parse(
            input=spec.input,
            post_state=spec.post_state,
            pre_state=spec.pre_state,
            episode=spec.episode,
        )

    def map(self, span: StoredSpan) -> MappedCall | Unmapped:
        """The mutator call a stored span records, or why it records none."""
        if span.status_code == "ERROR":
            return Unmapped("the call failed (span status ERROR)")
        return self.map_attributes(span.attributes)

    def map_attributes(self, attributes: Mapping[str, Any]) -> MappedCall | Unmapped:
        """The mutator call in a span's (flattened) attributes, or why there is none."""
        try:
            raw_post = self.post_state.resolve(attributes)
            error = task_error(raw_post)
            if error is not None:
                return Unmapped(f"the call failed: {error[:200]}")
            post = coerce_state(raw_post, what=f"post_state ({self.post_state})")
            pre = None
            if self.pre_state is not None:
                raw_pre = self.pre_state.resolve(attributes)
                where = f"pre_state ({self.pre_state})"
                pre = InterpretiveState() if raw_pre is None else coerce_state(raw_pre, what=where)
            text = _input_text(self.input.resolve(attributes))
        except (_NotFound, StateError) as exc:
            return Unmapped(str(exc))
        episode = attributes.get(self.episode) if self.episode else None
        return MappedCall(pre, text, post, None if episode is None else str(episode))


def _input_text(value: Any) -> str:
    """The input as text: a string as is, a `StructuredInput`-like object's prompt, or JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("prompt"), str):
        return str(value["prompt"])
    if value is None:
        raise _NotFound("the input is null")
    return json.dumps(value, ensure_ascii=False)
