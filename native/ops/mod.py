"""Mod: y = a mod b with numpy broadcasting.  fmod=1: the C remainder (sign of a);
fmod=0: Python's % (sign of b).  An integer division by zero gives 0."""

from ._elementwise import _Broadcast


class Mod(_Broadcast):
    attributes = {"fmod": 0}
    params = "mlrt_mod_params"

    def pack(self, inputs, outputs):
        if self.a.fmod not in (0, 1):
            raise self.fail(f"fmod must be 0 or 1, not {self.a.fmod}")
        return {"fmod": int(self.a.fmod)}
