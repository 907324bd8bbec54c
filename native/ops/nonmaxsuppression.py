"""NonMaxSuppression: per batch and class, boxes taken by descending score (ties: lower
index first), skipping those with score <= score_threshold (when given) and those
whose IoU with an already selected box is > iou_threshold, up to
max_output_boxes_per_class (default 0: none).  Boxes are [y1, x1, y2, x2] (any two
opposite corners; center_point_box = 0) or [x_center, y_center, width, height] (1).
Output: int64 [num_selected, 3] rows of (batch, class, box).  Boxes of zero area, or
that do not overlap, never suppress.

A host op for now, because its output shape depends on the data; the IoU of each
selected box against the remaining candidates is one vectorised numpy step, in
float32 like the reference.  The C kernel (select into a worst-case buffer, then
trim) comes later.
"""

import numpy as np

from ._host import _HostTensorOp


class NonMaxSuppression(_HostTensorOp):
    attributes = {"center_point_box": 0}

    def _scalar(self, values, index, what, default, kind):
        v = self.arg(values, index)
        if v is None or (isinstance(v, np.ndarray) and v.size == 0):
            return default
        v = np.asarray(v)
        if v.size != 1 or v.dtype.kind not in kind:
            raise self.bad(f"{what} must be a single value, got a {v.dtype.name} tensor of shape {list(v.shape)}")
        return v.reshape(-1)[0]

    def corners(self, boxes: np.ndarray):
        """(y_min, x_min, y_max, x_max) arrays in float32."""
        b = boxes.astype(np.float32, copy=False)
        if self.a.center_point_box:
            half_w, half_h = b[..., 2] / np.float32(2), b[..., 3] / np.float32(2)
            return b[..., 1] - half_h, b[..., 0] - half_w, b[..., 1] + half_h, b[..., 0] + half_w
        return (np.minimum(b[..., 0], b[..., 2]), np.minimum(b[..., 1], b[..., 3]),
                np.maximum(b[..., 0], b[..., 2]), np.maximum(b[..., 1], b[..., 3]))

    def run_host(self, values, runtime):
        boxes, scores = self.tensor(values, 0, "boxes"), self.tensor(values, 1, "scores")
        if boxes.ndim != 3 or boxes.shape[2] != 4:
            raise self.bad(f"boxes must be [num_batches, num_boxes, 4], got shape {list(boxes.shape)}")
        if scores.ndim != 3 or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
            raise self.bad(f"scores must be [num_batches, num_classes, num_boxes] = [{boxes.shape[0]}, *, "
                           f"{boxes.shape[1]}], got shape {list(scores.shape)}")
        if boxes.dtype != np.float32 or scores.dtype != np.float32:
            raise self.bad(f"boxes and scores must be float32, got {boxes.dtype} and {scores.dtype}")
        limit = int(self._scalar(values, 2, "max_output_boxes_per_class", 0, "iu"))
        iou_threshold = np.float32(self._scalar(values, 3, "iou_threshold", 0.0, "f"))
        score_threshold = self._scalar(values, 4, "score_threshold", None, "f")
        y0, x0, y1, x1 = self.corners(boxes)
        area = (y1 - y0) * (x1 - x0)
        picked = []
        for b in range(boxes.shape[0]):
            for c in range(scores.shape[1]):
                if limit <= 0:
                    break
                s = scores[b, c]
                cand = np.arange(s.shape[0])
                if score_threshold is not None:
                    cand = cand[s > np.float32(score_threshold)]
                cand = cand[np.lexsort((cand, -s[cand]))]  # score descending, then index ascending
                kept = 0
                while cand.size and kept < limit:
                    i, rest = cand[0], cand[1:]
                    picked.append((b, c, i))
                    kept += 1
                    ih = np.minimum(y1[b, i], y1[b, rest]) - np.maximum(y0[b, i], y0[b, rest])
                    iw = np.minimum(x1[b, i], x1[b, rest]) - np.maximum(x0[b, i], x0[b, rest])
                    inter = ih * iw
                    union = area[b, i] + area[b, rest] - inter
                    with np.errstate(divide="ignore", invalid="ignore"):
                        iou = inter / union
                    suppress = ((ih > 0) & (iw > 0) & (area[b, i] > 0) & (area[b, rest] > 0) & (union > 0)
                                & (iou > iou_threshold))
                    cand = rest[~suppress]
        return [np.array(picked, dtype=np.int64).reshape(-1, 3)]
