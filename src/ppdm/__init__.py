"""ppdm: privacy-preserving data publishing by perturbation.

Turn a confidential numeric table into a release whose values are distorted while the patterns
analysts mine survive; then measure what the release protects and what it still allows.

The public API is imported lazily so that ``import ppdm`` (and ``ppdm --help``) stay fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "perturb": "ppdm.pipeline",
    "perturb_array": "ppdm.pipeline",
    "evaluate": "ppdm.pipeline",
    "registry": "ppdm",
    "datasets": "ppdm",
    "metrics": "ppdm",
    "mechanisms": "ppdm",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ppdm' has no attribute {name!r}")
    module = _LAZY[name]
    if module == "ppdm":
        return importlib.import_module(f"ppdm.{name}")
    return getattr(importlib.import_module(module), name)
