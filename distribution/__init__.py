"""mlrt.distribution: which native runtime this process uses, and loading it.

The bottom of the stack: it knows the runtime folder layout and the C header, and
imports nothing from the layers above.
"""

from ._runtime import LIBRARY_NAME, Runtime, current_runtime, load

__all__ = ["LIBRARY_NAME", "Runtime", "current_runtime", "load"]
