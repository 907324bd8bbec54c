"""IsInf: y = (x is +inf and detect_positive) or (x is -inf and detect_negative)."""

from ._elementwise import _Predicate


class IsInf(_Predicate):
    attributes = {"detect_negative": 1, "detect_positive": 1}
    params = "mlrt_isinf_params"

    def pack(self, inputs, outputs):
        return {"detect_negative": int(bool(self.a.detect_negative)), "detect_positive": int(bool(self.a.detect_positive))}
