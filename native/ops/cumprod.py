"""CumProd: running products of x along the axis given by input 1 (a scalar),
optionally exclusive (each product leaves its own element out, the first is 1)
and/or in reverse.  Integers wrap; floats round at every step, like numpy.
The semantics are CumSum's; only the kernel and its struct differ."""

from .cumsum import CumSum


class CumProd(CumSum):
    params = "mlrt_cumprod_params"
    tolerance = (1e-6, 1e-7)
