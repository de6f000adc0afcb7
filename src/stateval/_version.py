"""The package version, in a module of its own so any module can read it without a circle."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
