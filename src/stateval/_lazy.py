"""Names a package imports from its modules only when first asked for (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: a name of ``where`` is imported from its
    module (relative to ``package`` when it starts with a dot) when first asked for, then kept
    in ``namespace`` (the package's globals), so that it is looked up once."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__
