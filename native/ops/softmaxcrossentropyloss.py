"""SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of log_softmax(scores) along the
class axis 1 (same weight, ignore_index and reduction); the optional second output
is that log_softmax."""

from .negativeloglikelihoodloss import _Loss


class SoftmaxCrossEntropyLoss(_Loss):
    max_outputs = 2
