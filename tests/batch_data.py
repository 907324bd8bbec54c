"""Models, data and plain-loop references for the batch inference tests
(tests/highlevel/test_batch*.py), and a check that Ray keeps to loopback."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper
from PIL import Image

import mlrt.lowlevel as ll
from mlrt.media import ImageTarget, VideoFrame, tensorize


def cnn_model() -> onnx.ModelProto:
    """A small image classifier: [N, 3, 32, 32] IMAGE (BGR, 0..255) -> 10 softmax scores."""
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("data", TP.FLOAT, ["N", 3, 32, 32])
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("prob", TP.FLOAT, ["N", 10])
    inits = [numpy_helper.from_array(rng.normal(0, 0.05, (16, 3, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.05, 16).astype(np.float32), "b1"),
             numpy_helper.from_array(rng.normal(0, 0.05, (10, 16)).astype(np.float32), "w2"),
             numpy_helper.from_array(rng.normal(0, 0.05, 10).astype(np.float32), "b2")]
    nodes = [helper.make_node("Conv", ["data", "w1", "b1"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]), helper.make_node("Gemm", ["f", "w2", "b2"], ["l"], transB=1),
             helper.make_node("Softmax", ["l"], ["prob"], axis=1)]
    return helper.make_model(helper.make_graph(nodes, "cnn", [x], [y], inits),
                             opset_imports=[helper.make_opsetid("", 17)])


TARGET = ImageTarget(np.dtype(np.float32), 3, 32, 32)  # what cnn_model's input takes


def write_images(folder: Path, n: int, seed: int = 1) -> list[Path]:
    """n PNG pictures of random sizes (20..80 a side) and content."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(n):
        h, w = rng.integers(20, 80, 2)
        base = rng.integers(0, 255, 3)
        pixels = (base + rng.integers(-40, 40, (h, w, 3))).clip(0, 255).astype(np.uint8)
        paths.append(folder / f"img{i:04d}.png")
        Image.fromarray(pixels).save(paths[-1])
    return paths


def image_job(tmp_path_factory, n: int = 200) -> tuple[Path, list[Path]]:
    """cnn_model saved, and n pictures for it: (model path, picture paths)."""
    folder = tmp_path_factory.mktemp("images")
    model = folder.parent / "cnn.onnx"
    onnx.save(cnn_model(), model)
    return model, write_images(folder, n)


def share_with_workers(ray, test_module) -> None:
    """Ray workers cannot import test modules: what `test_module` and this one define
    (predictors, helpers) travels to them by value."""
    ray.cloudpickle.register_pickle_by_value(test_module)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def loop_reference(model_path, paths, batch_size: int) -> np.ndarray:
    """A plain loop over the low-level API: each batch of `batch_size` files decoded,
    tensorized by mlrt.media and run by an InferenceSession."""
    session = ll.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    out = []
    for i in range(0, len(paths), batch_size):
        frames = [VideoFrame.from_file(p) for p in paths[i:i + batch_size]]
        tensor, _ = tensorize(frames, TARGET)
        out.append(session.run(None, {"data": tensor})[0])
    return np.concatenate(out)


def listening_sockets() -> dict:
    """{socket inode: (address, port)} of every listening TCP socket of the machine."""
    found = {}
    for name, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))  # host-order words
            found[int(fields[9])] = (socket.inet_ntop(family, raw), int(port, 16))
    return found


LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$")


def ray_listeners() -> list[tuple[str, str, tuple]]:
    """(pid, command, (address, port)) of each socket a Ray process listens on."""
    sockets = listening_sockets()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if "ray" not in command:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                m = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
                if m and int(m.group(1)) in sockets:
                    found.append((pid, command[:80], sockets[int(m.group(1))]))
        except OSError:
            continue
    return found
