"""`EvaluationDataset` and its loaders (JSON, JSON Lines, CSV, in-memory lists).

A sample record has ``input`` (required), ``reference``, ``id``, ``metadata`` and ``output``; any
other key is an error. Non-string inputs, references and outputs (a JSON object, a number) become
canonical JSON text. A record without an id gets ``sample-<n>`` (1-based). Every problem raises a
`DatasetError` naming the file and the line, row or sample.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from stateval.checks import as_text
from stateval.errors import DatasetError
from stateval.harness._types import EvaluationSample

__all__ = ["EvaluationDataset"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | int | None = None
    input: Any
    reference: Any = ""
    metadata: dict[str, Any] = {}
    output: Any = None


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    samples: list[Any]
    metadata: dict[str, Any] = {}


def _problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = ".".join(str(p) for p in error["loc"])
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {error['msg']}{more}" if loc else f"{error['msg']}{more}"


def _sample(data: Any, number: int, where: str) -> EvaluationSample:
    if isinstance(data, EvaluationSample):
        return data
    if not isinstance(data, Mapping):
        raise DatasetError(f"{where}: a sample is an object, not {type(data).__name__}")
    try:
        record = _Record.model_validate(dict(data))
    except ValidationError as exc:
        raise DatasetError(f"{where}: {_problem(exc)}") from exc
    return EvaluationSample(
        id=str(record.id) if record.id is not None else f"sample-{number}",
        input=as_text(record.input),
        reference=as_text(record.reference),
        metadata=record.metadata,
        output=None if record.output is None else as_text(record.output),
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read dataset: {exc}") from exc


@dataclass(frozen=True, slots=True)
class EvaluationDataset:
    """A named collection of samples with unique ids.

    Raises:
        DatasetError: Two samples share an id.

    Example:
        >>> ds = EvaluationDataset.from_list([{"input": "2+2?", "reference": "4"}], name="math")
        >>> ds.samples[0].id, len(ds)
        ('sample-1', 1)
    """

    name: str
    samples: Sequence[EvaluationSample]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        samples = tuple(self.samples)
        seen: set[str] = set()
        for sample in samples:
            if not isinstance(sample, EvaluationSample):
                raise DatasetError(f"dataset {self.name!r}: {sample!r} is not an EvaluationSample")
            if sample.id in seen:
                raise DatasetError(f"dataset {self.name!r}: duplicate sample id {sample.id!r}")
            seen.add(sample.id)
        object.__setattr__(self, "samples", samples)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[EvaluationSample]:
        return iter(self.samples)

    @classmethod
    def from_list(
        cls,
        items: Iterable[Mapping[str, Any] | EvaluationSample],
        name: str = "dataset",
        metadata: Mapping[str, Any] | None = None,
    ) -> EvaluationDataset:
        """Build a dataset from sample dicts (or `EvaluationSample` objects)."""
        samples = [
            _sample(item, n, f"dataset {name!r}: sample {n}") for n, item in enumerate(items, 1)
        ]
        return cls(name, samples, dict(metadata or {}))

    @classmethod
    def from_json(cls, path: str | Path, name: str | None = None) -> EvaluationDataset:
        """Load a JSON file: a list of samples, or ``{"name"?, "samples", "metadata"?}``."""
        path = Path(path)
        try:
            data = json.loads(_read(path))
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path} line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"
            ) from exc
        if isinstance(data, list):
            data = {"samples": data}
        if not isinstance(data, dict):
            raise DatasetError(f"{path}: expected a list of samples or an object with 'samples'")
        try:
            body = _File.model_validate(data)
        except ValidationError as exc:
            raise DatasetError(f"{path}: {_problem(exc)}") from exc
        samples = [_sample(s, n, f"{path} sample {n}") for n, s in enumerate(body.samples, 1)]
        return cls._build(name or body.name or path.stem, samples, body.metadata, path)

    @classmethod
    def from_jsonl(cls, path: str | Path, name: str | None = None) -> EvaluationDataset:
        """Load a JSON Lines file: one sample object per line (blank lines are skipped)."""
        path = Path(path)
        samples: list[EvaluationSample] = []
        for lineno, line in enumerate(_read(path).splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(
                    f"{path} line {lineno} column {exc.colno}: invalid JSON: {exc.msg}"
                ) from exc
            samples.append(_sample(data, len(samples) + 1, f"{path} line {lineno}"))
        return cls._build(name or path.stem, samples, {}, path)

    @classmethod
    def from_csv(cls, path: str | Path, name: str | None = None) -> EvaluationDataset:
        """Load a CSV file with a header row.

        Columns ``input`` (required), ``reference``, ``id``, ``output`` (an empty cell means no
        recorded output) and ``metadata`` (a JSON object); any other column goes into the
        sample's metadata under its header.
        """
        path = Path(path)
        reader = csv.reader(io.StringIO(_read(path), newline=""))
        try:
            header = next(reader, None)
            if header is None:
                raise DatasetError(f"{path}: empty CSV file (no header row)")
            if "input" not in header:
                raise DatasetError(f"{path} line 1: the header has no 'input' column")
            samples: list[EvaluationSample] = []
            for row in reader:
                lineno = reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise DatasetError(
                        f"{path} line {lineno}: {len(row)} fields, the header has {len(header)}"
                    )
                cells = dict(zip(header, row, strict=True))
                samples.append(_csv_sample(cells, path, lineno, len(samples) + 1))
        except csv.Error as exc:
            raise DatasetError(f"{path} line {reader.line_num}: invalid CSV: {exc}") from exc
        return cls._build(name or path.stem, samples, {}, path)

    @classmethod
    def _build(
        cls, name: str, samples: list[EvaluationSample], metadata: Mapping[str, Any], path: Path
    ) -> EvaluationDataset:
        try:
            return cls(name, samples, dict(metadata))
        except DatasetError as exc:
            raise DatasetError(f"{path}: {exc}") from exc


_CSV_COLUMNS = frozenset({"id", "input", "reference", "output", "metadata"})


def _csv_sample(cells: dict[str, str], path: Path, lineno: int, number: int) -> EvaluationSample:
    where = f"{path} line {lineno}"
    metadata: dict[str, Any] = {}
    if cells.get("metadata", "").strip():
        try:
            metadata = json.loads(cells["metadata"])
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: metadata is not valid JSON: {exc.msg}") from exc
        if not isinstance(metadata, dict):
            raise DatasetError(f"{where}: metadata must be a JSON object")
    metadata |= {k: v for k, v in cells.items() if k not in _CSV_COLUMNS}
    record: dict[str, Any] = {
        "input": cells["input"],
        "reference": cells.get("reference", ""),
        "metadata": metadata,
    }
    if cells.get("id"):
        record["id"] = cells["id"]
    if cells.get("output"):
        record["output"] = cells["output"]
    return _sample(record, number, where)
