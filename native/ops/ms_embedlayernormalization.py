"""EmbedLayerNormalization (com.microsoft, as onnxruntime's CPU kernel): per token,
word_embedding[input_id] + position_embedding[position] (+ segment_embedding[segment_id]),
layer-normalised over hidden with gamma and beta.  Inputs input_ids, segment_ids
(optional), word / position / segment embeddings, gamma, beta, mask, position_ids
(int32 [batch or 1, seq]; positions 0, 1, ... without it).  Outputs output, mask_index
(int32 [batch]: the count of nonzero mask values, 0 without a mask) and embedding_sum.
An id outside its table fails when it runs.  The LayerNormalization kernel does the norm."""

import numpy as np

from ._base import Info, Launch, Op


class EmbedLayerNormalization(Op):
    domain = "com.microsoft"
    attributes = {"epsilon": 1e-12, "mask_index_type": 1}
    params = "mlrt_ms_embed_ln_params"
    tolerance = (1e-4, 1e-5)

    def _plan(self, inputs):
        ids, word, pos = self.need(inputs, 0), self.need(inputs, 2), self.need(inputs, 3)
        gamma, beta = self.need(inputs, 5), self.need(inputs, 6)
        seg, segemb = inputs[1] if len(inputs) > 1 else None, inputs[4] if len(inputs) > 4 else None
        mask, pids = (inputs[i] if len(inputs) > i else None for i in (7, 8))
        if np.dtype(ids.dtype) != np.int32 or ids.rank != 2:
            raise self.fail(f"input_ids must be int32 [batch, seq], not {np.dtype(ids.dtype).name} {ids.shape}")
        b, s = ids.shape
        if word.rank != 2 or np.dtype(word.dtype) != np.float32:
            raise self.fail(f"word_embedding must be float32 [vocab, hidden], not {word.shape}")
        h = word.shape[1]
        for name, t in (("position_embedding", pos), ("segment_embedding", segemb)):
            if t is not None and (t.rank != 2 or t.shape[1] != h or np.dtype(t.dtype) != np.float32):
                raise self.fail(f"{name} of shape {t.shape} must be float32 [rows, {h}]")
        for name, t in (("gamma", gamma), ("beta", beta)):
            if tuple(t.shape) != (h,) or np.dtype(t.dtype) != np.float32:
                raise self.fail(f"{name} of shape {t.shape} must be float32 [{h}]")
        if (seg is None) != (segemb is None):
            raise self.fail("segment_ids and segment_embedding come together")
        for name, t, shapes in (("segment_ids", seg, [(b, s)]), ("mask", mask, [(b, s)]),
                                ("position_ids", pids, [(b, s), (1, s)])):
            if t is not None and (np.dtype(t.dtype) != np.int32 or tuple(t.shape) not in shapes):
                raise self.fail(f"{name} of shape {t.shape} must be int32 {' or '.join(map(str, shapes))}")
        return b, s, h, pids is not None

    def infer(self, inputs):
        b, s, h, _ = self._plan(inputs)
        outs = [Info(np.dtype(np.float32), (b, s, h)), Info(np.dtype(np.int32), (b,)),
                Info(np.dtype(np.float32), (b, s, h))]
        return outs[:max(1, len(self.node.output))]

    def launch(self, inputs, outputs):
        *_, has_pos = self._plan(inputs)
        return Launch("EmbedLayerNormalization", {"has_position_ids": int(has_pos), "epsilon": float(self.a.epsilon)})
