"""LLM-judged fields: a Phoenix `ClassificationEvaluator` rules on values the rules call different.

A field whose match policy has ``judge="llm"`` (and a ``rubric``) is first compared by the
deterministic rule. Only when that rule says the *values* differ does `FieldJudge` ask an LLM,
through a Phoenix `ClassificationEvaluator` with choices ``{"equivalent": 1.0, "different": 0.0}``
and an explanation. Verdicts are cached per ``(rubric, expected value, actual value)`` for the
life of the `JudgeCache` (one run). A judge that fails (an exception or timeout from the client,
a refusal, a label outside the choices) gives a ``judge_error`` verdict with the reason; it never
raises.

Any `phoenix.evals.LLM` works. For an OpenAI-compatible server (OpenAI, vLLM, Ollama,
llama.cpp), use `stateval.phoenix._llm.OpenAICompatibleLLM`: its calls go through stateval's
`OpenAICompatibleClient`, with its retries, timeouts, key redaction and both structured-output
dialects (llama.cpp's server rejects OpenAI's ``json_schema`` form with an HTTP 500, on which
phoenix's own openai adapter gives up)::

    from stateval.mutators import OpenAICompatibleClient
    client = OpenAICompatibleClient("qwen2.5-7b-instruct", base_url="http://localhost:8000/v1",
                                    api_key_env=None, timeout=30.0)
    judge = FieldJudge(OpenAICompatibleLLM(client))  # from stateval.phoenix._llm

In async code use `FieldJudge.ajudge` (it does not block the event loop) and ``await
judge.aclose()`` at the end.

With `FieldJudge.trace_calls`, every judge LLM call of `ajudge` is an OpenInference LLM span
(`stateval.tracing.llm_span`) under the current span: an `OpenAICompatibleLLM`'s client records
it itself (messages, model, token counts); for any other LLM the judge records the rendered
messages, the model and the reply. Credentials never reach a span.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from phoenix.evals import LLM, ClassificationEvaluator
from phoenix.evals.llm.prompts import PromptTemplate, TemplateFormat

from stateval.compare import FieldComparison, FieldStatus, StateComparison

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

__all__ = [
    "DEFAULT_JUDGE_TEMPLATE",
    "JUDGE_CHOICES",
    "FieldJudge",
    "JudgeCache",
    "JudgeVerdict",
    "JudgedComparison",
    "judge_comparison",
]

#: The judge's labels and the score each gives.
JUDGE_CHOICES: dict[str, float] = {"equivalent": 1.0, "different": 0.0}

#: The default prompt (mustache variables: ``path``, ``rubric``, ``expected``, ``actual``).
DEFAULT_JUDGE_TEMPLATE = """\
You are checking one field of a structured state that a program extracted from a message.
Decide whether the ACTUAL value means the same as the EXPECTED value for this field.

Field: {{path}}
Rubric: {{rubric}}

EXPECTED value (JSON): {{expected}}
ACTUAL value (JSON): {{actual}}

Answer "equivalent" if, under the rubric, the actual value is an acceptable way to record the
expected value; answer "different" otherwise.
"""

_NO_RUBRIC = "The values are equivalent when they denote the same thing for this field."

VerdictLabel: TypeAlias = Literal["equivalent", "different", "judge_error"]


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """What the judge said about one (expected, actual) pair.

    Attributes:
        label: ``"equivalent"``, ``"different"`` or ``"judge_error"``.
        explanation: The judge's reason, or what went wrong.
        cached: True when the verdict came from the cache (no LLM call).
    """

    label: VerdictLabel
    explanation: str
    cached: bool = False

    @property
    def ok(self) -> bool:
        """False for a ``judge_error``."""
        return self.label != "judge_error"

    @property
    def equivalent(self) -> bool:
        """True when the judge accepted the actual value."""
        return self.label == "equivalent"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class JudgeCache:
    """Verdicts keyed by ``(rubric, expected value, actual value)``, shared within one run.

    Thread-safe. Errors are not cached, so a later evaluation may retry them.

    Attributes:
        hits: Lookups answered from the cache.
        misses: Lookups that needed an LLM call.
    """

    hits: int = 0
    misses: int = 0
    _verdicts: dict[tuple[str, str, str], JudgeVerdict] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @staticmethod
    def key(rubric: str, expected: Any, actual: Any) -> tuple[str, str, str]:
        """The cache key of a pair (values in canonical JSON)."""
        return (rubric, _canonical(expected), _canonical(actual))

    def get(self, key: tuple[str, str, str]) -> JudgeVerdict | None:
        """The cached verdict for ``key`` (counting a hit or a miss)."""
        with self._lock:
            verdict = self._verdicts.get(key)
            if verdict is None:
                self.misses += 1
            else:
                self.hits += 1
            return verdict

    def put(self, key: tuple[str, str, str], verdict: JudgeVerdict) -> None:
        """Store a verdict (errors are ignored)."""
        if verdict.ok:
            with self._lock:
                self._verdicts[key] = verdict

    def __len__(self) -> int:
        return len(self._verdicts)


class FieldJudge:
    """Rules on whether two values of a field are equivalent, with a Phoenix LLM classifier.

    Args:
        llm: Any `phoenix.evals.LLM` (see the module docstring for an OpenAI-compatible server).
        cache: Where verdicts are kept; a fresh `JudgeCache` when omitted. Share one per run.
        prompt_template: A mustache template using ``{{path}}``, ``{{rubric}}``,
            ``{{expected}}`` and ``{{actual}}`` (values are rendered as JSON).
        name: The name of the underlying `ClassificationEvaluator`.

    Example:
        >>> from stateval.phoenix import ScriptedJudgeLLM
        >>> judge = FieldJudge(ScriptedJudgeLLM(["equivalent"]))
        >>> judge.judge("hotel.area", "British and US spelling agree", "centre", "center").label
        'equivalent'
        >>> judge.judge("hotel.area", "British and US spelling agree", "centre", "center").cached
        True
    """

    def __init__(
        self,
        llm: LLM,
        *,
        cache: JudgeCache | None = None,
        prompt_template: str = DEFAULT_JUDGE_TEMPLATE,
        name: str = "field_judge",
    ) -> None:
        self.llm = llm
        self.cache = cache if cache is not None else JudgeCache()
        self.tracer: Tracer | None = None
        self.evaluator = ClassificationEvaluator(
            name=name,
            llm=llm,
            prompt_template=PromptTemplate(
                template=prompt_template, template_format=TemplateFormat.MUSTACHE
            ),
            choices=dict(JUDGE_CHOICES),
            include_explanation=True,
        )

    def judge(self, path: str, rubric: str | None, expected: Any, actual: Any) -> JudgeVerdict:
        """The verdict on ``actual`` against ``expected`` for field ``path`` (never raises)."""
        rubric_text = rubric or _NO_RUBRIC
        key = JudgeCache.key(rubric_text, expected, actual)
        cached = self.cache.get(key)
        if cached is not None:
            return JudgeVerdict(cached.label, cached.explanation, cached=True)
        verdict = self._ask(path, rubric_text, expected, actual)
        self.cache.put(key, verdict)
        return verdict

    async def ajudge(
        self, path: str, rubric: str | None, expected: Any, actual: Any
    ) -> JudgeVerdict:
        """`judge` for async code: the LLM call does not block the event loop (never raises)."""
        rubric_text = rubric or _NO_RUBRIC
        key = JudgeCache.key(rubric_text, expected, actual)
        cached = self.cache.get(key)
        if cached is not None:
            return JudgeVerdict(cached.label, cached.explanation, cached=True)
        variables = self._variables(path, rubric_text, expected, actual)
        if self.tracer is None:
            verdict = await self._aask(variables)
        else:
            verdict = await self._aask_traced(variables, self.tracer)
        self.cache.put(key, verdict)
        return verdict

    def trace_calls(self, tracer: Tracer) -> None:
        """Record each LLM call of `ajudge` as an LLM span of ``tracer`` under the current span.

        An `OpenAICompatibleLLM` whose client has no tracer yet gets this one (its spans carry
        the token counts); any other LLM's calls are recorded by the judge.
        """
        from stateval.phoenix._llm import OpenAICompatibleLLM

        if isinstance(self.llm, OpenAICompatibleLLM):
            if self.llm.client.tracer is None:
                self.llm.client.tracer = tracer
            return
        self.tracer = tracer

    async def _aask(self, variables: dict[str, str]) -> JudgeVerdict:
        try:
            scores = await self.evaluator.async_evaluate(variables)
        except Exception as exc:
            return JudgeVerdict("judge_error", _reason(exc))
        return _verdict(scores)

    async def _aask_traced(self, variables: dict[str, str], tracer: Tracer) -> JudgeVerdict:
        from stateval.tracing import llm_span

        messages = [
            {"role": str(getattr(m["role"], "value", m["role"])), "content": str(m["content"])}
            for m in self.evaluator.prompt_template.render(variables)
        ]
        provider = getattr(self.llm, "provider", None)
        with llm_span(
            tracer,
            messages=messages,
            model_name=str(self.llm.model),
            provider=provider if isinstance(provider, str) else None,
        ) as span:
            verdict = await self._aask(variables)
            reply = {"label": verdict.label, "explanation": verdict.explanation}
            span.set_response(json.dumps(reply, ensure_ascii=False))
        return verdict

    async def aclose(self) -> None:
        """Release the LLM's connections, when it holds any (an `OpenAICompatibleLLM`)."""
        close = getattr(self.llm, "aclose", None)
        if close is not None:
            await close()

    @staticmethod
    def _variables(path: str, rubric: str, expected: Any, actual: Any) -> dict[str, str]:
        return {
            "path": path,
            "rubric": rubric,
            "expected": _canonical(expected),
            "actual": _canonical(actual),
        }

    def _ask(self, path: str, rubric: str, expected: Any, actual: Any) -> JudgeVerdict:
        try:
            scores = self.evaluator.evaluate(self._variables(path, rubric, expected, actual))
        except Exception as exc:
            return JudgeVerdict("judge_error", _reason(exc))
        return _verdict(scores)


def _verdict(scores: list[Any]) -> JudgeVerdict:
    given = scores[0].label if scores else None
    if given not in JUDGE_CHOICES:
        return JudgeVerdict("judge_error", f"judge gave no usable label ({given!r})")
    label: VerdictLabel = "equivalent" if given == "equivalent" else "different"
    return JudgeVerdict(label, scores[0].explanation or "")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"judge timed out: {exc}" if str(exc) else "judge timed out"
    if isinstance(exc, KeyError):
        return f"judge reply has no {exc} (refused or unparseable)"
    text = str(exc).strip() or type(exc).__name__
    return f"judge failed: {type(exc).__name__}: {text}"


@dataclass(frozen=True, slots=True)
class JudgedComparison:
    """A comparison after the judge has ruled on the fields whose policy asks for it.

    Attributes:
        comparison: The comparison with judged fields updated (see
            `StateComparison.with_judgement`).
        verdicts: The verdict per judged path (including ``judge_error`` ones).
    """

    comparison: StateComparison
    verdicts: Mapping[str, JudgeVerdict] = field(default_factory=dict)

    def judge_error(self, path: str) -> str | None:
        """Why the judge failed on ``path``, or None when it did not fail."""
        verdict = self.verdicts.get(path)
        return verdict.explanation if verdict is not None and not verdict.ok else None

    @property
    def judge_errors(self) -> dict[str, str]:
        """``{path: reason}`` of every failed judgement."""
        return {p: v.explanation for p, v in self.verdicts.items() if not v.ok}


def judge_comparison(comparison: StateComparison, judge: FieldJudge | None) -> JudgedComparison:
    """Have ``judge`` rule on every field of ``comparison`` whose policy asks for an LLM judge.

    Fields the rule already matches are never sent. Without a judge, each such field gets a
    ``judge_error`` verdict ("no judge LLM configured") and keeps its deterministic status.
    """
    verdicts: dict[str, JudgeVerdict] = {}
    for request in comparison.judge_requests:
        verdict = _verdict_for(request, judge)
        verdicts[request.path] = verdict
        if verdict.ok:
            comparison = comparison.with_judgement(
                request.path, matched=verdict.equivalent, explanation=verdict.explanation or None
            )
    return JudgedComparison(comparison, verdicts)


def _verdict_for(request: FieldComparison, judge: FieldJudge | None) -> JudgeVerdict:
    assert request.status is FieldStatus.MISMATCHED
    assert request.expected is not None
    assert request.actual is not None
    if judge is None:
        return JudgeVerdict("judge_error", "no judge LLM configured for a judge='llm' policy")
    rubric = request.policy.rubric if request.policy is not None else None
    return judge.judge(request.path, rubric, request.expected.value, request.actual.value)
