"""Equal: y = (a == b), elementwise with numpy broadcasting and a bool result.

Before opset 7, `broadcast=1` with `axis` lines b up with a's dims at `axis`."""

import numpy as np

from ._elementwise import _Compare, _LegacyBroadcast


class Equal_1(_LegacyBroadcast):
    out_dtype = np.bool_


class Equal_7(_Compare):
    pass
