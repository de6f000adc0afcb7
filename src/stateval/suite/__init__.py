"""Suite files: models (``_models.py``; the ``mutator:`` and ``judge:`` sections in
``_mutator_specs.py``), the `Case` (``_case.py``), cases read from their files
(``_cases.py``) and streamed from them (``_source.py``), problems worded as one line
(``_problems.py``), ``${VAR}`` interpolation (``_env.py``), monitor files of production spans
(``_monitor.py``), LLM mutator and judge settings (``_llm.py``), slot
schemas and the policies they imply (``_slot_schema.py``; the ``slots:`` section read in
``_slots_section.py``), and the loader that ties them together (``_suite.py``).

A new suite key goes in ``_models.py`` (the pydantic model, hence the JSON Schema) and is read in
``_suite.py``.
"""

from __future__ import annotations

from stateval.suite._case import (
    REVIEW_KEY,
    SOURCE_PROJECT_KEY,
    SOURCE_SPAN_KEY,
    SOURCE_TRACE_KEY,
    UNREVIEWED,
    Case,
    review_status,
)
from stateval.suite._case_file import CasesPart, PartsMap
from stateval.suite._episodes import Episodes
from stateval.suite._models import (
    CaseInputSpec,
    CaseSpec,
    CasesSpec,
    EpisodeMode,
    EpisodesSpec,
    FieldsAs,
    MetricsSpec,
    MutationSpec,
    PerTurnSpec,
    PhoenixSpec,
    RegressionsSpec,
    SlotsFileSpec,
    ThresholdsSpec,
)
from stateval.suite._monitor import (
    NO_GOLD_THRESHOLDS,
    Monitor,
    MonitorModel,
    TracesSpec,
    load_monitor,
)
from stateval.suite._mutator_specs import (
    JudgeSpec,
    LLMMutatorSpec,
    MutatorSpec,
    PythonMutatorSpec,
    ReplayMutatorSpec,
)
from stateval.suite._settings import read_suite_settings
from stateval.suite._slot_schema import SlotDef, SlotSchema, SlotSchemaError
from stateval.suite._suite import (
    Cases,
    PhoenixNames,
    Suite,
    SuiteModel,
    load_suite,
    suite_json_schema,
    with_mutator,
)

__all__ = [
    "NO_GOLD_THRESHOLDS",
    "REVIEW_KEY",
    "SOURCE_PROJECT_KEY",
    "SOURCE_SPAN_KEY",
    "SOURCE_TRACE_KEY",
    "UNREVIEWED",
    "Case",
    "CaseInputSpec",
    "CaseSpec",
    "Cases",
    "CasesPart",
    "CasesSpec",
    "EpisodeMode",
    "Episodes",
    "EpisodesSpec",
    "FieldsAs",
    "JudgeSpec",
    "LLMMutatorSpec",
    "MetricsSpec",
    "Monitor",
    "MonitorModel",
    "MutationSpec",
    "MutatorSpec",
    "PartsMap",
    "PerTurnSpec",
    "PhoenixNames",
    "PhoenixSpec",
    "PythonMutatorSpec",
    "RegressionsSpec",
    "ReplayMutatorSpec",
    "SlotDef",
    "SlotSchema",
    "SlotSchemaError",
    "SlotsFileSpec",
    "Suite",
    "SuiteModel",
    "ThresholdsSpec",
    "TracesSpec",
    "load_monitor",
    "load_suite",
    "read_suite_settings",
    "review_status",
    "suite_json_schema",
    "with_mutator",
]
