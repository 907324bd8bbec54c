"""CausalConvWithState: a causal depthwise 1-D convolution with carried state.  Each
channel of input [batch, channels, length] is filtered by its own k taps (weight
[channels, 1, k], optional bias [channels]) over past_state [batch, channels, k - 1]
(zeros if absent) followed by the input; output has the input's shape, optionally
through SiLU (activation "silu" or "swish"); present_state holds the last k - 1
values of that past ++ input sequence."""

from ._base import Info, Op


class CausalConvWithState(Op):
    attributes = {"activation": "none"}
    params = "mlrt_causal_conv_params"
    tolerance = (1e-5, 1e-6)

    def resolve(self, inputs):
        x, w = self.need(inputs, 0), self.need(inputs, 1)
        if self.a.activation not in ("none", "silu", "swish"):
            raise self.fail(f"activation must be 'none', 'silu' or 'swish', got {self.a.activation!r}")
        if x.rank != 3:
            raise self.fail(f"input must be [batch, channels, length], got shape {list(x.shape)}")
        b, c, _ = x.shape
        if w.rank != 3 or w.shape[0] != c or w.shape[1] != 1 or w.shape[2] < 1:
            raise self.fail(f"weight must be [{c}, 1, k] with k >= 1, got shape {list(w.shape)}")
        k = w.shape[2]
        bias = inputs[2] if len(inputs) > 2 else None
        past = inputs[3] if len(inputs) > 3 else None
        if bias is not None and bias.shape != (c,):
            raise self.fail(f"bias must be [{c}], got shape {list(bias.shape)}")
        if past is not None and past.shape != (b, c, k - 1):
            raise self.fail(f"past_state must be [{b}, {c}, {k - 1}], got shape {list(past.shape)}")
        if any(t is not None and t.dtype != x.dtype for t in (w, bias, past)):
            raise self.fail(f"weight, bias and past_state must have the input's type {x.dtype}")
        return x, k

    def infer(self, inputs):
        x, k = self.resolve(inputs)
        return [Info(x.dtype, x.shape), Info(x.dtype, (x.shape[0], x.shape[1], k - 1))]

    def pack(self, inputs, outputs):
        x, k = self.resolve(inputs)
        return {"batch": x.shape[0], "channels": x.shape[1], "length": x.shape[2], "k": k,
                "silu": int(self.a.activation != "none")}
