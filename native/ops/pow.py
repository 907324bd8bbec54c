"""Pow: y = a ^ b with numpy broadcasting; y has the base's type, the exponent
may be of another numeric type (opset 12+; accepted at every opset).

Before opset 7, `broadcast=1` with `axis` lines b up with a's dims at `axis`."""

from ._elementwise import _Broadcast, _LegacyBroadcast


class Pow_1(_LegacyBroadcast):
    same_type = False


class Pow_7(_Broadcast):
    same_type = False
