"""RNN: Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb), f = Tanh by default; forward, reverse or
bidirectional, layout 0 / 1 (opset 14), sequence_lens, initial_h, clip, activations
with alpha / beta.  Outputs Y (every step) and Y_h (last state), both optional."""

from ._rnn import _Recurrent


class RNN(_Recurrent):
    gates = 1
    default_activations = ("Tanh",)
