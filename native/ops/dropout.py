"""Dropout, in inference: y = x and the optional mask is all true.

Training mode (opset 12+ `training_mode` input set to true) with a non-zero ratio
draws random numbers and is not supported: mlrt is an inference runtime."""

import numpy as np

from ..._errors import NotImplemented
from ._base import Alias, AliasKind, Info, Op
from ._shape import bits_of


class Dropout(Op):
    attributes = {"ratio": 0.5, "is_test": 0, "consumed_inputs": None}
    params = "mlrt_dropout_params"
    mask_is_bool = False  # before opset 10 the mask has the input's type
    aliases = (Alias(AliasKind.WHOLE, output=0, input=0),)  # y is x

    def node_aliases(self):
        """None where the node asks for the mask or has a training_mode input: the kernel runs."""
        outs, ins = self.node.output, self.node.input
        if len(outs) > 1 and outs[1] or len(ins) > 2 and ins[2]:
            return ()
        return self.aliases

    def check_mode(self, inputs):
        pass

    def infer(self, inputs):
        x = self.need(inputs, 0)
        self.check_mode(inputs)
        outs = [Info(x.dtype, x.shape)]
        if len(self.node.output) > 1:
            outs.append(Info(np.dtype(bool) if self.mask_is_bool else x.dtype, x.shape))
        return outs

    def pack(self, inputs, outputs):
        mask = outputs[1].dtype if len(outputs) > 1 else np.dtype(bool)
        return {"mask_bits": bits_of(1, mask)}


class Dropout_6(Dropout):
    attributes = {"ratio": 0.5, "is_test": 0}


class Dropout_7(Dropout):
    attributes = {"ratio": 0.5}


class Dropout_10(Dropout_7):
    mask_is_bool = True


class Dropout_12(Dropout):
    attributes = {"seed": None}
    mask_is_bool = True
    value_inputs = (1, 2)

    def check_mode(self, inputs):
        training = self.value_of(inputs, 2)
        if training is None or not bool(np.asarray(training).reshape(-1)[0]):
            return
        ratio = self.value_of(inputs, 1)
        if ratio is not None and float(np.asarray(ratio).reshape(-1)[0]) != 0.0:
            raise NotImplemented(f"{self.where}: Dropout in training mode (random masks) is not supported; "
                                 "set training_mode to false or drop the input")
