"""App 2: a detector + recognizer pipeline that reads each model's metadata
(`get_modelmeta().custom_metadata_map`: input size, class names, normalisation), decodes
the detector's boxes (NonMaxSuppression inside the model), crops the regions with OpenCV
and names them with the recognizer in one batch."""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

cv2 = pytest.importorskip("cv2")

SIZE, STRIDE, CELLS = 128, 8, 16


def _meta(model: onnx.ModelProto, **props) -> onnx.ModelProto:
    helper.set_model_props(model, props)
    return model


def detector() -> onnx.ModelProto:
    """images[1,3,128,128] -> boxes[1,256,4] (cx,cy,w,h in input pixels), scores[1,2,256],
    selected_indices[K,3] from NonMaxSuppression."""
    rng = np.random.default_rng(21)
    ws = rng.normal(0, 0.02, (2, 3, STRIDE, STRIDE))
    ws[0] += 1.0 / 64  # class 0: a bright 8x8 cell
    bs = np.array([-1.2, -0.5])
    wb = rng.normal(0, 0.004, (4, 3, STRIDE, STRIDE))
    ys, xs = np.meshgrid(np.arange(CELLS), np.arange(CELLS), indexing="ij")
    grid = (np.stack([xs.ravel(), ys.ravel()], axis=1)[None] * STRIDE).astype(np.float32)  # [1,256,2]
    inits = [numpy_helper.from_array(ws.astype(np.float32), "ws"), numpy_helper.from_array(bs.astype(np.float32), "bs"),
             numpy_helper.from_array(wb.astype(np.float32), "wb"), numpy_helper.from_array(grid, "grid"),
             numpy_helper.from_array(np.array([1, 2, CELLS * CELLS], np.int64), "score_shape"),
             numpy_helper.from_array(np.array([1, 4, CELLS * CELLS], np.int64), "box_shape"),
             numpy_helper.from_array(np.array([2, 2], np.int64), "split"),
             numpy_helper.from_array(np.float32(STRIDE), "stride"),
             numpy_helper.from_array(np.float32(2 * STRIDE), "anchor"),
             numpy_helper.from_array(np.array([4], np.int64), "max_boxes"),
             numpy_helper.from_array(np.array([0.3], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.6], np.float32), "min_score")]
    n = helper.make_node
    nodes = [n("Conv", ["images", "ws", "bs"], ["s_logits"], kernel_shape=[STRIDE, STRIDE], strides=[STRIDE, STRIDE]),
             n("Sigmoid", ["s_logits"], ["s_map"]),
             n("Reshape", ["s_map", "score_shape"], ["scores"]),
             n("Conv", ["images", "wb"], ["b_map"], kernel_shape=[STRIDE, STRIDE], strides=[STRIDE, STRIDE]),
             n("Reshape", ["b_map", "box_shape"], ["b_flat"]),
             n("Transpose", ["b_flat"], ["b_raw"], perm=[0, 2, 1]),
             n("Split", ["b_raw", "split"], ["dxy", "dwh"], axis=2),
             n("Sigmoid", ["dxy"], ["sxy"]),
             n("Mul", ["sxy", "stride"], ["oxy"]),
             n("Add", ["grid", "oxy"], ["cxy"]),
             n("Exp", ["dwh"], ["ewh"]),
             n("Mul", ["ewh", "anchor"], ["wh"]),
             n("Concat", ["cxy", "wh"], ["boxes"], axis=2),
             n("NonMaxSuppression", ["boxes", "scores", "max_boxes", "iou", "min_score"], ["selected_indices"],
               center_point_box=1)]
    g = helper.make_graph(nodes, "tiny_detector",
                          [helper.make_tensor_value_info("images", T.FLOAT, [1, 3, SIZE, SIZE])],
                          [helper.make_tensor_value_info("boxes", T.FLOAT, [1, CELLS * CELLS, 4]),
                           helper.make_tensor_value_info("scores", T.FLOAT, [1, 2, CELLS * CELLS]),
                           helper.make_tensor_value_info("selected_indices", T.INT64, ["num_selected", 3])],
                          inits, doc_string="one-scale anchor-free detector")
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests/apps",
                          model_version=3, domain="example.detect", doc_string="finds bright patches")
    return _meta(m, input_size=str(SIZE), classes=json.dumps(["bright", "other"]), box_format="cxcywh")


def recognizer() -> onnx.ModelProto:
    """crops[N,1,32,32] -> probs[N,5]."""
    rng = np.random.default_rng(24)

    def r(name, std, *shape):
        return numpy_helper.from_array(rng.normal(0, std, shape).astype(np.float32), name)

    n = helper.make_node
    nodes = [n("Conv", ["crops", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("MaxPool", ["r1"], ["p1"], kernel_shape=[4, 4], strides=[4, 4]), n("Flatten", ["p1"], ["f"]),
             n("Gemm", ["f", "w3", "b3"], ["logits"], transB=1), n("Softmax", ["logits"], ["probs"], axis=-1)]
    g = helper.make_graph(nodes, "tiny_recognizer",
                          [helper.make_tensor_value_info("crops", T.FLOAT, ["batch", 1, 32, 32])],
                          [helper.make_tensor_value_info("probs", T.FLOAT, ["batch", 5])],
                          [r("w1", 0.3, 4, 1, 3, 3), r("b1", 0.1, 4), r("w3", 0.1, 5, 256), r("b3", 0.1, 5)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests/apps")
    return _meta(m, input_size="32", mean="0.45", std="0.25", labels="cat,dog,bird,fish,frog")


def scene(path) -> None:
    rng = np.random.default_rng(23)
    img = (rng.random((240, 320, 3)) * 50).astype(np.uint8)
    shapes = [(20, 30, 60, 50, 255), (150, 20, 40, 90, 235), (220, 150, 80, 60, 215), (40, 150, 45, 40, 250)]
    for k, (x, y, w, h, grey) in enumerate(shapes):
        cv2.rectangle(img, (x, y), (x + w, y + h), (grey, grey, grey), -1)
        if k % 2:
            cv2.circle(img, (x + w // 2, y + h // 2), min(w, h) // 3, (40, 40, 40), -1)
        else:
            for dx in range(4, w, 9 + 4 * k):
                cv2.line(img, (x + dx, y), (x + dx, y + h), (30, 30, 30), 2 + k)
    cv2.imwrite(str(path), img)


def test_detector_and_recognizer(tmp_path, run_app):
    det, rec, image = tmp_path / "det.onnx", tmp_path / "rec.onnx", tmp_path / "scene.png"
    onnx.save(detector(), det)
    onnx.save(recognizer(), rec)
    scene(image)
    ort, ours = run_app("detect_and_read.py", det, rec, image)
    found = [line for line in ort.lines if line.startswith(("bright", "other"))]
    assert len(found) >= 3 and len({f.split()[-1] for f in found}) >= 2, ort.lines  # several regions, read apart
    ours.assert_matches(ort)
