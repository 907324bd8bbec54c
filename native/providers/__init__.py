"""Execution providers: one module each; `_base.py` holds the interface."""

from ._base import ExecutionProvider, available, register

__all__ = ["ExecutionProvider", "available", "register"]
