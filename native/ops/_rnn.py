"""Shared semantics of RNN, GRU and LSTM: shapes of the inputs and outputs for
both layouts, the direction, and the activation functions with their alpha / beta
(consumed in order by the functions that take them, ONNX defaults otherwise)."""

from __future__ import annotations

import numpy as np

from .._lib import enum_value
from ._base import Info, Op
from .gemm import packed_strips

# the constant of kernels/rnn.h, number of alpha / beta values taken, default alpha, default beta
ACTIVATIONS = {
    "relu": ("MLRT_RNN_RELU", 0, 0, 0.0, 0.0), "tanh": ("MLRT_RNN_TANH", 0, 0, 0.0, 0.0),
    "sigmoid": ("MLRT_RNN_SIGMOID", 0, 0, 0.0, 0.0), "affine": ("MLRT_RNN_AFFINE", 1, 1, 1.0, 0.0),
    "leakyrelu": ("MLRT_RNN_LEAKYRELU", 1, 0, 0.01, 0.0),
    "thresholdedrelu": ("MLRT_RNN_THRESHOLDEDRELU", 1, 0, 1.0, 0.0),
    "scaledtanh": ("MLRT_RNN_SCALEDTANH", 1, 1, 1.0, 1.0), "hardsigmoid": ("MLRT_RNN_HARDSIGMOID", 1, 1, 0.2, 0.5),
    "elu": ("MLRT_RNN_ELU", 1, 0, 1.0, 0.0), "softsign": ("MLRT_RNN_SOFTSIGN", 0, 0, 0.0, 0.0),
    "softplus": ("MLRT_RNN_SOFTPLUS", 0, 0, 0.0, 0.0),
}
DIRECTIONS = {"forward": "MLRT_RNN_FORWARD", "reverse": "MLRT_RNN_REVERSE", "bidirectional": "MLRT_RNN_BIDIRECTIONAL"}


class _Recurrent(Op):
    """X [seq, batch, input] (layout 1: [batch, seq, input]), W [dirs, G*H, input],
    R [dirs, G*H, H], B [dirs, 2*G*H], sequence_lens [batch], initial_h (and for
    LSTM initial_c) [dirs, batch, H] ([batch, dirs, H]), LSTM's P [dirs, 3*H];
    outputs Y [seq, dirs, batch, H] ([batch, seq, dirs, H]), Y_h (and Y_c) like initial_h."""

    gates = 1
    default_activations = ("Tanh",)
    attributes = {"activation_alpha": None, "activation_beta": None, "activations": None, "clip": None,
                  "direction": "forward", "hidden_size": None, "layout": 0, "output_sequence": 0}
    params = "mlrt_rnn_params"
    tolerance = (1e-4, 1e-5)
    state_inputs = (5,)  # initial_h (and initial_c)
    max_outputs = 2

    def _shapes(self, inputs):
        x, w, r = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        opt = lambda i: inputs[i] if len(inputs) > i else None  # noqa: E731
        dtype = np.dtype(x.dtype)
        if dtype.kind != "f":
            raise self.fail(f"X has type {dtype.name}, expected a float type")
        direction = str(self.a.direction).lower()
        if direction not in DIRECTIONS:
            raise self.fail(f"direction {self.a.direction!r} is not forward, reverse or bidirectional")
        nd = 2 if direction == "bidirectional" else 1
        layout = int(self.a.layout)
        if layout not in (0, 1):
            raise self.fail(f"layout must be 0 or 1, got {layout}")
        if x.rank != 3 or w.rank != 3 or r.rank != 3:
            raise self.fail(f"X {tuple(x.shape)}, W {tuple(w.shape)} and R {tuple(r.shape)} must be 3-D")
        seq, batch = (x.shape[1], x.shape[0]) if layout else (x.shape[0], x.shape[1])
        hidden = int(self.a.hidden_size) if self.a.hidden_size is not None else r.shape[-1]
        g = self.gates
        expect = {1: (nd, g * hidden, x.shape[2]), 2: (nd, g * hidden, hidden), 3: (nd, 2 * g * hidden),
                  4: (batch,), 7: (nd, 3 * hidden)}
        for i in self.state_inputs:
            expect[i] = (batch, nd, hidden) if layout else (nd, batch, hidden)
        names = {1: "W", 2: "R", 3: "B", 4: "sequence_lens", 5: "initial_h", 6: "initial_c", 7: "P"}
        for i, shape in expect.items():
            t = opt(i)
            if t is None:
                continue
            if tuple(t.shape) != shape:
                raise self.fail(f"{names[i]} has shape {tuple(t.shape)}, expected {shape} (direction {direction}, "
                                f"hidden_size {hidden}, layout {layout})")
            want = np.dtype(np.int32) if i == 4 else dtype
            if np.dtype(t.dtype) != want:
                raise self.fail(f"{names[i]} has type {np.dtype(t.dtype).name}, expected {want.name}")
        y = (batch, seq, nd, hidden) if layout else (seq, nd, batch, hidden)
        state = (batch, nd, hidden) if layout else (nd, batch, hidden)
        return dtype, direction, nd, hidden, y, state

    def infer(self, inputs):
        dtype, _, _, _, y, state = self._shapes(inputs)
        n = min(max(1, len(self.node.output)), self.max_outputs)
        return [Info(dtype, y)] + [Info(dtype, state)] * (n - 1)

    def _activations(self, nd: int):
        names = list(self.a.activations) if self.a.activations else list(self.default_activations) * nd
        per_dir = len(self.default_activations)
        if len(names) == per_dir and nd == 2:
            names = names * 2  # one set given for both directions
        if len(names) != per_dir * nd:
            raise self.fail(f"activations has {len(names)} names, expected {per_dir * nd} "
                            f"({per_dir} per direction)")
        alphas = list(self.a.activation_alpha or [])
        betas = list(self.a.activation_beta or [])
        codes, alpha, beta = [0] * 6, [0.0] * 6, [0.0] * 6
        for k, name in enumerate(names):
            spec = ACTIVATIONS.get(str(name).lower())
            if spec is None:
                raise self.fail(f"unknown activation {name!r} (expected one of {', '.join(ACTIVATIONS)})")
            constant, takes_alpha, takes_beta, default_alpha, default_beta = spec
            slot = 3 * (k // per_dir) + k % per_dir
            codes[slot] = enum_value(constant)
            alpha[slot] = float(alphas.pop(0)) if takes_alpha and alphas else default_alpha
            beta[slot] = float(betas.pop(0)) if takes_beta and betas else default_beta
        return codes, alpha, beta

    def pack(self, inputs, outputs):
        _, direction, nd, hidden, _, _ = self._shapes(inputs)
        codes, alpha, beta = self._activations(nd)
        clip = self.a.clip
        if clip is not None and not float(clip) >= 0:
            raise self.fail(f"clip must be a non-negative threshold, got {clip}")
        return dict(hidden_size=hidden, direction=enum_value(DIRECTIONS[direction]), layout=int(self.a.layout),
                    linear_before_reset=int(getattr(self.a, "linear_before_reset", 0) or 0),
                    input_forget=int(getattr(self.a, "input_forget", 0) or 0),
                    has_clip=int(clip is not None), clip=float(clip) if clip is not None else 0.0,
                    activations=codes, alpha=alpha, beta=beta, w_transposed=0, w_packed=0, r_packed=0)

    def launch(self, inputs, outputs):
        launch = super().launch(inputs, outputs)
        x, w = inputs[0], inputs[1]
        if w.value is not None and x.shape[0] * x.shape[1] > 1:
            # a constant W made over once for the input projections (one row needs none):
            # float32 packed per direction in the GEMM's strips (its rows read in place would
            # be dirs * G * H floats apart, the same cache sets), else W^T [input, dirs * G * H]
            packed = [packed_strips(wd, True) for wd in w.value] if np.dtype(w.dtype) == np.float32 else [None]
            if all(p is not None for p in packed):
                launch.params["w_packed"] = len(inputs)
                launch.extra.append(np.concatenate(packed))
            else:
                launch.params["w_transposed"] = len(inputs)
                launch.extra.append(np.ascontiguousarray(w.value.reshape(-1, w.shape[2]).T))
        r = inputs[2]
        if r.value is not None and np.dtype(r.dtype) == np.float32 and x.shape[1 - int(self.a.layout)] > 1:
            # a constant R^T in strips for the steps of a batch of rows, made once (kernels/rnn.h)
            launch.params["r_packed"] = len(inputs) + len(launch.extra)
            launch.extra.append(self._strips(r.value))
        return launch

    def _strips(self, r: np.ndarray) -> np.ndarray:
        """R [dirs, G*H, H] as kernels/rnn.h's r_packed: per direction and gate, its H
        columns of R^T in strips of 32, strip[s][k][c] = R[g * H + 32 s + c][k], zeros
        past H."""
        hidden = r.shape[2]
        strips = -(-hidden // 32)
        padded = np.zeros((r.shape[0] * self.gates, strips * 32, hidden), np.float32)
        padded[:, :hidden] = r.reshape(-1, hidden, hidden)
        return np.ascontiguousarray(padded.reshape(-1, strips, 32, hidden).transpose(0, 1, 3, 2)).reshape(-1)
