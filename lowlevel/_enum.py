"""OrtEnum: an IntEnum that prints as onnxruntime's enums do ("GraphOptimizationLevel.ORT_ENABLE_ALL",
where a plain IntEnum prints its number), so what an app prints is the same on both."""

import enum


class OrtEnum(enum.IntEnum):
    __str__ = enum.Enum.__str__
    __format__ = enum.Enum.__format__
