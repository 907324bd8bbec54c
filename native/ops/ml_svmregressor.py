"""SVMRegressor (ai.onnx.ml): y = sum_j coefficients[j] * K(x, sv_j) + rho[0] over the
n_supports support vectors (none: y = x . coefficients + rho[0]); one_class turns y
into +1 / -1; post_transform PROBIT applies (others leave y as it is, as in
onnxruntime).  Kernels: LINEAR x.s, POLY (gamma x.s + coef0)^degree,
RBF exp(-gamma |x - s|^2), SIGMOID tanh(gamma x.s + coef0), with
kernel_params = [gamma, coef0, degree]."""

import numpy as np

from ._base import Info
from ._ml import _MlTableOp, rows, svm_kernel_fields

class SVMRegressor(_MlTableOp):
    attributes = {"coefficients": None, "kernel_params": None, "kernel_type": "LINEAR", "n_supports": 0,
                  "one_class": 0, "post_transform": "NONE", "rho": None, "support_vectors": None}
    params = "mlrt_ml_svm_regressor_params"
    array_attributes = frozenset({"support_vectors", "coefficients"})  # large FLOATS: read at once as arrays
    tolerance = (1e-5, 1e-5)

    def make_tables(self):
        n = int(self.a.n_supports)
        sv = np.asarray(self.a.support_vectors if self.a.support_vectors is not None else [], dtype=np.float64)
        coef = np.asarray(self.a.coefficients if self.a.coefficients is not None else [], dtype=np.float64)
        rho = np.asarray(self.a.rho or [], dtype=np.float64)
        if n < 0 or (n > 0 and (sv.size % n or coef.size < n)):
            raise self.fail(f"{sv.size} support vector values and {coef.size} coefficients for {n} support vectors")
        if rho.size < 1:
            raise self.fail("'rho' must hold a value")
        return [sv.reshape(n, -1) if n else np.zeros((0, 0)), coef, rho]

    def outputs_for(self, x):
        return [Info(np.dtype(np.float32), (rows(x), 1))]

    def kernel_params(self, x):
        return {**svm_kernel_fields(self), "one_class": int(bool(self.a.one_class)), "post_transform": self.transform()}
