"""LSTM: gates i, o, f (f = Sigmoid, with optional peepholes P), cell c (g = Tanh),
output h (h = Tanh): Ct = ft * Ct-1 + it * ct, Ht = ot * h(Ct); input_forget couples
ft = 1 - it.  Directions, layouts, sequence_lens, initial_h / initial_c, clip and
activations as in RNN; outputs Y, Y_h and Y_c, each optional."""

from ._rnn import _Recurrent


class LSTM(_Recurrent):
    gates = 4
    default_activations = ("Sigmoid", "Tanh", "Tanh")
    attributes = {**_Recurrent.attributes, "input_forget": 0}
    state_inputs = (5, 6)
    max_outputs = 3
