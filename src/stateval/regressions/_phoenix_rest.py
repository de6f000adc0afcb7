"""A Phoenix experiment read back over REST as a `ScoredRun`, and the dataset's baseline tag.

Endpoints (Phoenix 20.26): ``GET /v1/experiments/{id}`` (its dataset and version),
``GET /v1/datasets/{id}/examples?version_id=`` (example ids to case ids),
``GET /v1/experiments/{id}/json`` (every run with its evaluations and repetition number) and
``POST /v1/experiments/{id}/tags`` (the reserved ``baseline`` tag; older servers lack it).
"""

from __future__ import annotations

import re
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from stateval.compare import MetricOptions, slot_counts
from stateval.errors import DiffError, PhoenixUnavailableError
from stateval.regressions._scores import ExperimentLink, Observation, ScoredRun, edit_counts
from stateval.upload import CASE_ID_KEY

__all__ = [
    "BASELINE_TAG",
    "ExperimentAddress",
    "parse_experiment",
    "read_experiment",
    "tag_baseline",
]

BASELINE_TAG = "baseline"
"""Phoenix's reserved experiment tag naming a dataset's baseline experiment."""

_M = TypeVar("_M", bound=BaseModel)
_URL_ID = re.compile(r"/datasets/[^/]+/experiments/(?P<id>[^/?#]+)")


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Experiment(_Wire):
    id: str
    name: str
    dataset_id: str
    dataset_version_id: str
    metadata: dict[str, Any] = {}


class _ExperimentBody(_Wire):
    data: _Experiment


class _Example(_Wire):
    id: str
    node_id: str | None = None
    metadata: dict[str, Any] = {}


class _Examples(_Wire):
    class Data(_Wire):
        examples: list[_Example]

    data: Data


class _Annotation(_Wire):
    name: str
    score: float | None = None
    label: str | None = None
    explanation: str | None = None


class _Run(_Wire):
    example_id: str
    repetition_number: int = 1
    error: str | None = None
    latency_ms: float | None = None
    annotations: list[_Annotation] = []


_RUNS = TypeAdapter(list[_Run])


def _runs(response: httpx.Response, what: str) -> list[_Run]:
    if response.status_code >= 400:
        raise DiffError(
            f"{what}: Phoenix answered HTTP {response.status_code} {response.text[:200]}"
        )
    try:
        return _RUNS.validate_json(response.content)
    except ValidationError as exc:
        raise DiffError(
            f"{what}: unexpected answer from Phoenix: {str(exc).splitlines()[0]}"
        ) from exc


class ExperimentAddress(BaseModel):
    """A Phoenix experiment named on the command line.

    Attributes:
        experiment_id: The experiment's id.
        phoenix_url: The server, when a URL named it.
    """

    model_config = ConfigDict(frozen=True)

    experiment_id: str
    phoenix_url: str | None = None


def parse_experiment(text: str) -> ExperimentAddress:
    """An experiment id, or a Phoenix UI URL of one (``.../compare?experimentId=ID`` takes the
    first id; ``.../experiments/ID``).

    Raises:
        DiffError: A URL that names no experiment.
    """
    if not text.startswith(("http://", "https://")):
        return ExperimentAddress(experiment_id=text)
    parts = urlsplit(text)
    prefix, _, _ = parts.path.partition("/datasets/")
    server = f"{parts.scheme}://{parts.netloc}{prefix}".rstrip("/")
    ids = parse_qs(parts.query).get("experimentId")
    if ids:
        return ExperimentAddress(experiment_id=ids[-1], phoenix_url=server)
    match = _URL_ID.search(parts.path)
    if match:
        return ExperimentAddress(experiment_id=match["id"], phoenix_url=server)
    raise DiffError(f"{text}: not a Phoenix experiment URL (no experimentId in it)")


def _get(client: httpx.Client, path: str, **params: str) -> httpx.Response:
    try:
        response = client.get(path, params=params or None)
    except httpx.HTTPError as exc:
        raise PhoenixUnavailableError(f"Phoenix at {client.base_url}: {exc}") from exc
    return response


def _model(model: type[_M], response: httpx.Response, what: str) -> _M:
    if response.status_code >= 400:
        raise DiffError(
            f"{what}: Phoenix answered HTTP {response.status_code} {response.text[:200]}"
        )
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        raise DiffError(
            f"{what}: unexpected answer from Phoenix: {str(exc).splitlines()[0]}"
        ) from exc


def _client(phoenix_url: str, api_key: str | None) -> httpx.Client:
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=phoenix_url.rstrip("/"), headers=headers, timeout=60.0)


def _default_conventions(conventions: Any) -> bool:
    """Whether an experiment's value precision / recall / F1 follow the default conventions
    (its metadata's ``conventions``, which a finished run stores; absent: the defaults), so
    that counting its field evaluations' labels gives its run's figures."""
    if not isinstance(conventions, dict):
        return True
    default = MetricOptions()
    return all(
        conventions.get(name, getattr(default, name)) == getattr(default, name)
        for name in ("list_credit", "wrong_value", "averaging")
    )


def read_experiment(
    phoenix_url: str, experiment_id: str, *, api_key: str | None = None
) -> ScoredRun:
    """Read an experiment's runs and evaluations, paired by case id (the example metadata's
    ``case_id`` that stateval uploads, else the example's id).

    Raises:
        DiffError: No such experiment, or an answer stateval cannot read.
        PhoenixUnavailableError: The server cannot be reached.
    """
    what = f"experiment {experiment_id} at {phoenix_url}"
    with _client(phoenix_url, api_key) as client:
        response = _get(client, f"/v1/experiments/{experiment_id}")
        if response.status_code in (404, 422):
            raise DiffError(f"{what}: no such experiment")
        experiment = _model(_ExperimentBody, response, what).data
        examples = _model(
            _Examples,
            _get(
                client,
                f"/v1/datasets/{experiment.dataset_id}/examples",
                version_id=experiment.dataset_version_id,
            ),
            what,
        ).data.examples
        response = _get(client, f"/v1/experiments/{experiment_id}/json")
        if response.status_code == 404:  # "Experiment has no runs"
            runs: list[_Run] = []
        else:
            runs = _runs(response, what)
    case_of: dict[str, str] = {}
    for example in examples:
        case_id = example.metadata.get(CASE_ID_KEY)
        if not isinstance(case_id, str):
            case_id = example.id
        case_of[example.node_id or example.id] = case_id
        case_of[example.id] = case_id
    labelled = _default_conventions(experiment.metadata.get("conventions"))
    cases: dict[str, list[tuple[int, Observation]]] = {}
    for run in runs:
        case_id = case_of.get(run.example_id, run.example_id)
        scores = {a.name: a.score for a in run.annotations if a.score is not None}
        labels = {a.name: a.label for a in run.annotations if a.label is not None}
        slot = next((a for a in run.annotations if a.name == "slot_accuracy"), None)
        observation = Observation(
            scores=scores,
            labels=labels,
            error=run.error is not None or labels.get("state_accuracy") == "error",
            time_used=None if run.latency_ms is None else run.latency_ms / 1000,
            slots=None if slot is None else slot_counts(slot.explanation),
            ops=edit_counts((a.name, a.explanation) for a in run.annotations),
            value_labels=labelled,
        )
        cases.setdefault(case_id, []).append((run.repetition_number, observation))
    link = ExperimentLink(phoenix_url.rstrip("/"), experiment.dataset_id, experiment.id)
    suite = experiment.metadata.get("suite")
    return ScoredRun(
        label=f"experiment {experiment.name}",
        cases={
            c: tuple(o for _, o in sorted(reps, key=lambda r: r[0])) for c, reps in cases.items()
        },
        experiment=link,
        suite_name=suite if isinstance(suite, str) else None,
    )


def tag_baseline(
    phoenix_url: str, experiment_id: str, *, api_key: str | None = None, description: str = ""
) -> bool:
    """Tag an experiment as its dataset's baseline (Phoenix moves the tag from any other).

    Returns:
        False when the server has no experiment tags (Phoenix before 20.x); True when tagged.

    Raises:
        DiffError: The server refused (e.g. no such experiment).
        PhoenixUnavailableError: The server cannot be reached.
    """
    body: dict[str, Any] = {"name": BASELINE_TAG}
    if description:
        body["description"] = description
    with _client(phoenix_url, api_key) as client:
        try:
            response = client.post(f"/v1/experiments/{experiment_id}/tags", json=body)
        except httpx.HTTPError as exc:
            raise PhoenixUnavailableError(f"Phoenix at {phoenix_url}: {exc}") from exc
    if response.status_code in (404, 405) and "Experiment not found" not in response.text:
        return False  # no such route on this server
    if response.status_code >= 400:
        raise DiffError(
            f"cannot tag experiment {experiment_id} as the baseline: HTTP "
            f"{response.status_code} {response.text[:200]}"
        )
    return True
