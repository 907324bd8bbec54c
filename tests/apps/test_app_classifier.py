"""App 1: an image classifier with its own OpenCV preprocessing (resize, BGR->RGB,
mean/std, NCHW) on the light SqueezeNet from the onnx package, top-5 labels.

The light model's weights are ConstantOfShape fills (every channel alike, so every class
would tie); the test gives them seeded random values instead, keeping the graph."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

cv2 = pytest.importorskip("cv2")

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def squeezenet_with_weights(path: Path) -> None:
    m = onnx.load(str(LIGHT / "light_squeezenet.onnx"))
    rng = np.random.default_rng(5)
    shapes = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    inits, nodes = [], []
    for node in m.graph.node:
        if node.op_type == "ConstantOfShape":  # a weight: give it He-initialised values
            shape = tuple(int(d) for d in shapes[node.input[0]])
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            w = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in) if len(shape) > 1 else rng.normal(0, 0.05, shape)
            inits.append(numpy_helper.from_array(w.astype(np.float32), node.output[0]))
        else:
            nodes.append(node)
    for init in m.graph.initializer:
        if not init.name.endswith("__SHAPE"):
            arr = numpy_helper.to_array(init)
            inits.append(numpy_helper.from_array(rng.normal(0, 0.05, arr.shape).astype(arr.dtype), init.name))
    (data,) = [i for i in m.graph.input if i.name == "data_0"]
    g = helper.make_graph(nodes, "squeezenet", [data], list(m.graph.output), inits)
    out = helper.make_model(g, opset_imports=list(m.opset_import), producer_name="tests/apps")
    out.ir_version = 7
    onnx.checker.check_model(out)
    onnx.save(out, str(path))


def images(folder: Path) -> list[Path]:
    rng = np.random.default_rng(9)
    paths = []
    for k, (h, w) in enumerate([(300, 400), (224, 224), (181, 257)]):
        img = (rng.random((h, w, 3)) * 60).astype(np.uint8)
        cv2.circle(img, (w // 3, h // 2), min(h, w) // 4, (30 + 80 * k, 200, 255 - 70 * k), -1)
        cv2.rectangle(img, (w // 2, h // 5), (w - 10, h - 20), (255, 40 * k, 90), -1)
        cv2.line(img, (0, 0), (w - 1, h - 1), (0, 255 - 60 * k, 0), 5)
        paths.append(folder / f"photo{k}.png")
        cv2.imwrite(str(paths[-1]), img)
    return paths


def test_image_classifier(tmp_path, run_app):
    model, labels = tmp_path / "squeezenet.onnx", tmp_path / "labels.txt"
    squeezenet_with_weights(model)
    labels.write_text("".join(f"class_{i:04d}_{'abcdefghij'[i % 10]}\n" for i in range(1000)))
    ort, ours = run_app("classify_image.py", model, labels, *images(tmp_path))
    top6 = -np.sort(-ort.arrays["probs"], axis=1)[:, :6]  # the top-5 order is no near-tie
    assert (top6[:, :-1] - top6[:, 1:] > 1e-3 * top6[:, 1:]).all(), top6
    assert len(ort.lines) == 5 and ort.lines[2].startswith("photo0.png [(")
    ours.assert_matches(ort)
