"""FusedMatMul (com.microsoft, as onnxruntime): Y = alpha * A' B', A' = A or (transA) A
with its last two dims swapped, B' likewise; MatMul's broadcasting otherwise.  The
transBatch attributes (batch dims moved next to the matrix) are not supported."""

from ... import _errors
from ._base import Launch
from .matmul import MatMul


class FusedMatMul(MatMul):
    domain = "com.microsoft"
    attributes = {"alpha": 1.0, "transA": 0, "transB": 0, "transBatchA": 0, "transBatchB": 0}
    params = "mlrt_fused_matmul_params"

    def _transposes(self, a, b) -> tuple[bool, bool]:
        if self.a.transBatchA or self.a.transBatchB:
            raise _errors.NotImplemented(f"{self.where}: transBatchA / transBatchB are not supported")
        if (a.rank == 1 and self.a.transA) or (b.rank == 1 and self.a.transB):
            raise _errors.NotImplemented(f"{self.where}: transA / transB of a 1-D input are not supported")
        return bool(self.a.transA), bool(self.a.transB)

    def launch(self, inputs, outputs):
        _, sa, sb, batch, _ = self._shapes(inputs)
        params = {"alpha": float(self.a.alpha), "trans_a": int(self.a.transA), "trans_b": int(self.a.transB)}
        return Launch("FusedMatMul", params, self._views(sa, sb, batch))
