"""Det: the determinant of each square matrix in the last two dims of X [*, M, M];
Y has shape [*] (a scalar for a single matrix)."""

from ._base import Info, Op


class Det(Op):
    params = "mlrt_det_params"
    tolerance = (1e-5, 1e-6)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank < 2 or x.shape[-1] != x.shape[-2]:
            raise self.fail(f"X must be [*, M, M] (square matrices), got shape {list(x.shape)}")
        return [Info(x.dtype, tuple(x.shape[:-2]))]

    def pack(self, inputs, outputs):
        x = inputs[0]
        return {"batch": outputs[0].size, "n": x.shape[-1]}
