"""The exception hierarchy: one root, a few families.

Every error stateval raises on purpose is a `StatevalError`. Third-party exceptions are translated
at the seam with ``raise ... from exc``. The CLI turns a `StatevalError` into one line on stderr.
"""

from __future__ import annotations

__all__ = [
    "ComparisonError",
    "ConfigError",
    "DatasetError",
    "DiffError",
    "EvaluationConfigError",
    "EvaluationError",
    "EvaluatorNotFoundError",
    "FieldNotFoundError",
    "HarnessError",
    "InfrastructureError",
    "InvalidConfidenceError",
    "InvalidPathError",
    "InvalidValueError",
    "JournalBusyError",
    "JournalError",
    "JournalWriteError",
    "JudgeError",
    "LLMClientError",
    "LLMResponseError",
    "LLMStatusError",
    "LLMUnavailableError",
    "LocalModelError",
    "MutationError",
    "MutatorError",
    "MutatorLoadError",
    "MutatorOutputError",
    "PhoenixUnavailableError",
    "PluginError",
    "PolicyError",
    "ReportWriteError",
    "ScriptExhaustedError",
    "StateError",
    "StatevalError",
    "SuiteError",
    "SuiteProblemsError",
    "UsageError",
]


class StatevalError(Exception):
    """Root of every error stateval raises on purpose."""


# -- state -------------------------------------------------------------------------------------


class StateError(StatevalError):
    """An interpretive state or one of its values is invalid."""


class InvalidPathError(StateError):
    """A field path is empty or malformed."""

    def __init__(self, path: object, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"invalid path {path!r}: {problem}")


class InvalidConfidenceError(StateError):
    """A confidence is not a finite number in [0, 1]."""

    def __init__(self, confidence: object, path: str | None = None) -> None:
        self.confidence = confidence
        self.path = path
        where = f" at {path!r}" if path else ""
        super().__init__(f"invalid confidence{where}: {confidence!r} is not a number in [0, 1]")


class InvalidValueError(StateError):
    """A value is not JSON (a str, number, bool, None, or a list / dict of those)."""

    def __init__(self, value: object, problem: str, path: str | None = None) -> None:
        self.value = value
        self.problem = problem
        self.path = path
        where = f" at {path!r}" if path else ""
        super().__init__(f"invalid value{where}: {problem}")


# -- mutators ----------------------------------------------------------------------------------


class MutatorError(StatevalError):
    """A mutator failed."""


class MutatorOutputError(MutatorError):
    """An LLM mutator's raw output is not a valid list of updates; nothing of it was applied.

    Attributes:
        raw: The text the client returned, unchanged.
        reason: What is wrong with it, in one line.
    """

    def __init__(self, raw: str, reason: str) -> None:
        self.raw = raw
        self.reason = reason
        preview = raw if len(raw) <= 120 else raw[:117] + "..."
        super().__init__(f"mutator output rejected: {reason} (raw output: {preview!r})")


# -- evaluation / harness (seed 004) -------------------------------------------------------------


class EvaluationError(StatevalError):
    """Base of the evaluation-harness errors."""


class EvaluationConfigError(EvaluationError):
    """Harness or evaluator configuration is invalid."""


ConfigError = EvaluationConfigError


class EvaluatorNotFoundError(EvaluationError):
    """No evaluator is registered under the requested name."""


class DatasetError(EvaluationError):
    """An evaluation dataset cannot be read or is malformed."""


class HarnessError(EvaluationError):
    """The harness itself failed (not one sample's evaluation)."""


class JudgeError(EvaluationError):
    """An LLM judge gave no usable verdict."""


# -- suites / phoenix --------------------------------------------------------------------------


class SuiteError(StatevalError):
    """A suite or case file is invalid."""


class UsageError(StatevalError):
    """A command-line option or an environment setting is invalid (e.g. a malformed URL)."""


class InfrastructureError(StatevalError):
    """What a run needs from its surroundings failed: the disk, the network, a server.

    Not a problem of the input: the same command may work once the surroundings do. The CLI
    exits with code 3 for these (2 for other errors).
    """


class PhoenixUnavailableError(InfrastructureError):
    """The Phoenix server cannot be reached or refused a request."""


# -- mutators: loading and test fakes -----------------------------------------------------------


class MutatorLoadError(MutatorError):
    """A ``module:attr`` reference to a mutator or callable cannot be loaded.

    Attributes:
        spec: The reference as given.
        problem: What went wrong, in one line.
    """

    def __init__(self, spec: str, problem: str) -> None:
        self.spec = spec
        self.problem = problem
        super().__init__(f"cannot load {spec!r}: {problem}")


class ScriptExhaustedError(StatevalError):
    """A scripted test client (`stateval.testing.ScriptedClient`) has no responses left."""


class PolicyError(SuiteError):
    """A match policy (how a field is compared) is invalid."""


class ComparisonError(StatevalError):
    """A comparison was asked for something it cannot do (e.g. judging a missing field)."""


# -- LLM clients and the local model server -------------------------------------------------------


class LLMClientError(MutatorError):
    """A call to an LLM endpoint failed (never carries the API key).

    Attributes:
        model: The model asked for.
        url: The endpoint called.
    """

    def __init__(self, message: str, *, model: str, url: str) -> None:
        self.model = model
        self.url = url
        super().__init__(message)


class LLMUnavailableError(LLMClientError):
    """The endpoint could not be reached or timed out, after every retry."""


class LLMStatusError(LLMClientError):
    """The endpoint answered with an HTTP error status (after retries when it was retryable).

    Attributes:
        status: The HTTP status code.
        detail: The start of the response body, with secrets redacted.
    """

    def __init__(self, message: str, *, model: str, url: str, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(message, model=model, url=url)


class LLMResponseError(LLMClientError):
    """The endpoint answered 200 but not with a usable completion (no text, or a refusal)."""


class LocalModelError(StatevalError):
    """The packaged local model or its llama.cpp server cannot be found or started."""


# -- suites and runs: every problem of a suite at once, journals --------------------------------


class SuiteProblemsError(SuiteError):
    """A suite or case file has one or more problems; nothing was run.

    The message holds one line per problem, each naming the file, the line or case id, and the
    field, e.g. ``cases.jsonl:12: case 'c7': input.prompt: field required``.

    Attributes:
        problems: The problem lines, in file order.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class JournalError(StatevalError):
    """A run journal cannot be found, read, resumed or rescored."""


class DiffError(StatevalError):
    """Two runs cannot be compared: a run or experiment not found, or nothing to pair."""


class JournalBusyError(JournalError):
    """A run's journal is being written by another process (a second ``--resume`` of a run
    that is still going): one writer per run."""


class JournalWriteError(JournalError, InfrastructureError):
    """A run journal cannot be written (disk full, permissions): the run cannot go on safely."""


class ReportWriteError(InfrastructureError):
    """A report file cannot be written (disk full, permissions); the old file is left whole."""


class FieldNotFoundError(StateError, KeyError):
    """A field path has no value in a state or mapping."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"field {path!r} has no value")

    def __str__(self) -> str:
        return f"field {self.path!r} has no value"


# -- mutation testing (seed 002) ------------------------------------------------------------------


class MutationError(StatevalError):
    """Mutation testing of a suite cannot run (e.g. the baseline is over the call budget)."""


class PluginError(MutationError):
    """An operator, probe or eval plugin is invalid, or its name is already registered."""
