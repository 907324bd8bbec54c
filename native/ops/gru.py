"""GRU: gates z, r (f = Sigmoid) and the candidate h (g = Tanh):
zt = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz), rt likewise,
ht = g(Xt Wh^T + (rt * Ht-1) Rh^T + Rbh + Wbh), or with linear_before_reset
ht = g(Xt Wh^T + rt * (Ht-1 Rh^T + Rbh) + Wbh); Ht = (1 - zt) * ht + zt * Ht-1.
Directions, layouts, sequence_lens, initial_h, clip and activations as in RNN."""

from ._rnn import _Recurrent


class GRU(_Recurrent):
    gates = 3
    default_activations = ("Sigmoid", "Tanh")
    attributes = {**_Recurrent.attributes, "linear_before_reset": 0}
