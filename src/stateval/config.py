"""`EvaluationConfig`: harness settings from keyword arguments or ``STATEVAL_*`` variables.

The environment is read when a config is built, never at import time. Keyword arguments win over
environment variables, which win over the defaults.

Example:
    >>> EvaluationConfig(default_threshold=0.9).default_threshold
    0.9
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from stateval.errors import EvaluationConfigError

__all__ = ["EvaluationConfig"]


class EvaluationConfig(BaseSettings):
    """Settings of the evaluation harness (seed 004).

    Args:
        default_threshold: Score a sample needs to pass, in [0, 1] (``STATEVAL_DEFAULT_THRESHOLD``).
        max_samples: Evaluate at most this many samples of a dataset; None for all.
        max_retries: Extra attempts after a system or evaluator call raises (0 for none).
        timeout_seconds: Time limit of one system or evaluator call.
        max_concurrency: Samples evaluated at once.
        include_metadata: Put dataset metadata and run settings in the report's metadata.
        embedding_model: Model of the default embedding client (``stateval.checks.e5``).

    Raises:
        EvaluationConfigError: A value is invalid (one line naming the setting).
    """

    model_config = SettingsConfigDict(env_prefix="STATEVAL_", extra="forbid", frozen=True)

    default_threshold: float = Field(0.8, ge=0.0, le=1.0)
    max_samples: int | None = Field(None, gt=0)
    max_retries: int = Field(3, ge=0)
    timeout_seconds: float = Field(30.0, gt=0)
    max_concurrency: int = Field(8, gt=0)
    include_metadata: bool = True
    embedding_model: str = "multilingual-e5-small"

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = ".".join(str(part) for part in error["loc"]) or "config"
            raw = error.get("input")
            more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            raise EvaluationConfigError(
                f"invalid evaluation setting {name} (STATEVAL_{name.upper()}) = {raw!r}: "
                f"{error['msg']}{more}"
            ) from None
