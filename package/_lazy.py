"""Names a package imports from its submodules when first asked for (PEP 562).

A package's __init__ names where each lazy name lives, so that importing it costs
only its eager names: `import mlrt.lowlevel` leaves the session pipeline (and onnx,
which it needs) to the first `mlrt.lowlevel.InferenceSession`.  `from X import name`,
`X.name` and `from X import *` all still work, and load the name then.
"""

from __future__ import annotations

import importlib


def lazy(package: str, namespace: dict, where: dict[str, str]):
    """(__getattr__, __dir__) for `package`: where[name] is the module holding `name`
    (relative to `package`, e.g. "._session"); a name once loaded stays in `namespace`."""

    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module, package), name)
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
