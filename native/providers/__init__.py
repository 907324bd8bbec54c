"""Execution providers: one module each; `_base.py` holds the interface."""

from ._base import (ExecutionProvider, available, device_classes, device_kinds, for_device, owner_of, register,
                    unregister)

__all__ = ["ExecutionProvider", "available", "device_classes", "device_kinds", "for_device", "owner_of", "register",
           "unregister"]
