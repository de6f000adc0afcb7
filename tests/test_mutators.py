"""LLMMutator, StructuredInput and BaseLLMClient: what a user building an LLM mutator relies on."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from stateval import (
    BaseLLMClient,
    InterpretiveState,
    LLMMutator,
    Mutator,
    StructuredInput,
    ValueConfidence,
)
from stateval.errors import InvalidValueError, MutatorError, MutatorOutputError
from stateval.mutators import DEFAULT_INSTRUCTIONS, describe_mutator
from stateval.testing import ScriptedClient

INPUT = StructuredInput(
    prompt="My name is Ada Lovelace", message_id="message-7", metadata={"channel": "email"}
)


def _reply(*updates: dict[str, object]) -> str:
    return json.dumps(list(updates))


def _pre_state() -> InterpretiveState:
    state = InterpretiveState()
    state.add_value("registrant.name", ValueConfidence("Ada", 0.6, "first guess", "message-1"))
    state.add_value("registrant.city", ValueConfidence("London", 0.9))
    return state


async def test_updates_are_applied_to_a_copy_and_the_argument_is_unchanged() -> None:
    pre = _pre_state()
    before = pre.copy()
    client = ScriptedClient(
        [_reply({"path": "registrant.email", "value": "ada@example.org", "confidence": 0.8})]
    )
    post = await LLMMutator(client).mutate(pre, INPUT)
    assert pre == before
    assert post is not pre
    assert post.to_flat() == {
        "registrant.name": "Ada",
        "registrant.city": "London",
        "registrant.email": "ada@example.org",
    }


async def test_each_added_candidate_records_the_message_id_and_inference() -> None:
    client = ScriptedClient(
        [_reply({"path": "a", "value": 1, "confidence": 0.5, "inference": "stated"})]
    )
    post = await LLMMutator(client).mutate(InterpretiveState(), INPUT)
    assert post.candidates("a") == [ValueConfidence(1, 0.5, "stated", "message-7")]


async def test_a_new_value_wins_only_with_a_higher_confidence() -> None:
    client = ScriptedClient(
        [
            _reply({"path": "registrant.name", "value": "Ada L.", "confidence": 0.5}),
            _reply({"path": "registrant.name", "value": "Ada Lovelace", "confidence": 0.95}),
        ]
    )
    mutator = LLMMutator(client)
    lower = await mutator.mutate(_pre_state(), INPUT)
    assert lower.best("registrant.name") == ValueConfidence("Ada", 0.6, "first guess", "message-1")
    assert [vc.value for vc in lower.candidates("registrant.name")] == ["Ada", "Ada L."]
    higher = await mutator.mutate(_pre_state(), INPUT)
    best = higher.best("registrant.name")
    assert best is not None
    assert (best.value, best.message_id) == ("Ada Lovelace", "message-7")


async def test_prompt_carries_the_input_and_the_current_state() -> None:
    client = ScriptedClient(["[]"])
    await LLMMutator(client).mutate(_pre_state(), INPUT)
    (prompt,) = client.prompts
    assert "My name is Ada Lovelace" in prompt
    assert "message-7" in prompt
    assert '"channel": "email"' in prompt
    assert DEFAULT_INSTRUCTIONS in prompt
    state_json = json.dumps(
        {
            "registrant.name": {"value": "Ada", "confidence": 0.6},
            "registrant.city": {"value": "London", "confidence": 0.9},
        },
        indent=2,
    )
    assert state_json in prompt


async def test_prompt_shows_only_the_best_candidate_of_each_field() -> None:
    state = _pre_state()
    state.add_value("registrant.name", ValueConfidence("Ada Lovelace", 0.99))
    client = ScriptedClient(["[]"])
    await LLMMutator(client).mutate(state, INPUT)
    assert '"value": "Ada Lovelace",\n    "confidence": 0.99' in client.prompts[0]
    assert '"value": "Ada"' not in client.prompts[0]


async def test_instructions_and_prompt_template_can_be_changed() -> None:
    client = ScriptedClient(["[]", "[]"])
    await LLMMutator(client, "Extract hotel slots only.").mutate(InterpretiveState(), INPUT)
    assert "Extract hotel slots only." in client.prompts[0]
    assert DEFAULT_INSTRUCTIONS not in client.prompts[0]
    template = "$instructions|$prompt|$message_id|$metadata|$state|costs $$5"
    mutator = LLMMutator(client, "do it", prompt_template=template)
    await mutator.mutate(InterpretiveState(), StructuredInput(prompt="hi", message_id="m"))
    assert client.prompts[1] == "do it|hi|m|{}|{}|costs $5"


async def test_build_prompt_can_be_overridden() -> None:
    class Short(LLMMutator):
        def build_prompt(self, state: InterpretiveState, input: StructuredInput) -> str:
            return f"{input.message_id}: {input.prompt}"

    client = ScriptedClient(["[]"])
    await Short(client).mutate(InterpretiveState(), INPUT)
    assert client.prompts == ["message-7: My name is Ada Lovelace"]


@pytest.mark.parametrize(
    ("template", "message"),
    [("$prompt $nope", "unknown placeholder(s) ['nope']"), ("$prompt $", "invalid $placeholder")],
)
def test_a_bad_prompt_template_is_rejected_at_construction(template: str, message: str) -> None:
    with pytest.raises(MutatorError) as caught:
        LLMMutator(ScriptedClient([]), prompt_template=template)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        _reply({"path": "a", "value": 1, "confidence": 0.5}, {"path": "a..b", "value": 2}),
        _reply(
            {"path": "a", "value": 1, "confidence": 0.5}, {"path": "b", "value": 2, "confidence": 9}
        ),
    ],
)
async def test_malformed_output_applies_nothing(reply: str) -> None:
    pre = _pre_state()
    before = pre.copy()
    with pytest.raises(MutatorOutputError) as caught:
        await LLMMutator(ScriptedClient([reply])).mutate(pre, INPUT)
    assert caught.value.raw == reply
    assert pre == before


async def test_a_client_that_returns_no_text_is_a_mutator_error() -> None:
    class Broken(BaseLLMClient):
        async def generate(self, prompt: str) -> str:
            return None  # type: ignore[return-value]

    with pytest.raises(MutatorError, match=r"Broken\.generate returned a NoneType, not str"):
        await LLMMutator(Broken()).mutate(InterpretiveState(), INPUT)


def test_a_client_without_generate_is_rejected() -> None:
    with pytest.raises(MutatorError, match="needs a client with async generate"):
        LLMMutator(object())  # type: ignore[arg-type]


async def test_base_client_must_be_subclassed() -> None:
    with pytest.raises(NotImplementedError, match="BaseLLMClient does not implement generate"):
        await BaseLLMClient().generate("x")


async def test_a_seed_style_subclass_works_as_client() -> None:
    class FixedClient(BaseLLMClient):
        async def generate(self, prompt: str) -> str:
            return _reply({"path": "registrant.name", "value": "Ada", "confidence": 0.95})

    mutator = LLMMutator(FixedClient())
    assert isinstance(mutator, Mutator)
    post = await mutator.mutate(InterpretiveState(), INPUT)
    assert post.to_flat() == {"registrant.name": "Ada"}


def test_describe_names_the_client_and_instructions() -> None:
    mutator = LLMMutator(ScriptedClient([]), "Fill the form.")
    assert mutator.describe() == "LLMMutator(client=ScriptedClient, instructions='Fill the form.')"
    assert describe_mutator(mutator) == mutator.describe()
    custom = LLMMutator(ScriptedClient([]), "x", prompt_template="$prompt")
    assert custom.describe().endswith(", custom prompt)")


def test_structured_input_copies_and_freezes_its_metadata() -> None:
    metadata: dict[str, object] = {"turn": 1}
    message = StructuredInput(prompt="hi", message_id="m-1", metadata=metadata)
    metadata["turn"] = 2
    assert message.metadata["turn"] == 1
    with pytest.raises(TypeError):
        message.metadata["turn"] = 3  # type: ignore[index]
    assert message.to_dict() == {"prompt": "hi", "message_id": "m-1", "metadata": {"turn": 1}}
    assert StructuredInput(prompt="hi", message_id="m-1").metadata == {}


def test_an_input_of_checked_parts_is_the_input_made_of_them() -> None:
    # a case line read again makes its input without checking or copying its metadata again
    metadata: dict[str, object] = {"turn": 1, "tags": ["a"]}
    message = StructuredInput.of_checked("hi", "m-1", metadata)
    assert message == StructuredInput("hi", "m-1", {"turn": 1, "tags": ["a"]})
    assert repr(message) == repr(StructuredInput("hi", "m-1", {"turn": 1, "tags": ["a"]}))
    with pytest.raises(TypeError):
        message.metadata["turn"] = 3  # type: ignore[index]
    assert pickle.loads(pickle.dumps(message)) == message


def test_structured_input_survives_deepcopy_and_pickle() -> None:
    message = StructuredInput(prompt="hi", message_id="m-1", metadata={"tags": ["a"]})
    for clone in (copy.deepcopy(message), pickle.loads(pickle.dumps(message))):
        assert clone == message
        assert clone.metadata["tags"] == ["a"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"prompt": 1, "message_id": "m"},
        {"prompt": "hi", "message_id": None},
        {"prompt": "hi", "message_id": "m", "metadata": {"when": object()}},
        {"prompt": "hi", "message_id": "m", "metadata": ["not", "a", "mapping"]},
    ],
)
def test_structured_input_rejects_non_text_and_non_json_metadata(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidValueError):
        StructuredInput(**kwargs)  # type: ignore[arg-type]
