"""The seed models the atheris harness (`fuzz_harness.py`) mutates.

    python tests/fuzz/seeds.py [--out DIR]     # (re)make the seed file, print a count

A seed is (name, serialized ModelProto, [input arrays]).  Two sources:

- the ONNX node conformance cases (`onnx.backend.test.case.node.collect_testcases`)
  whose inputs are all tensors of at most SEED_INPUT_BYTES;
- the light models (`onnx/backend/test/data/light`), trimmed: their 1x3x224x224
  image input becomes 1x3x32x32 and the graph is cut after its first 3, 8 and 20
  compute nodes (the cut value becomes the output; the ConstantOfShape nodes that
  make their weights are kept), so a run costs milliseconds.

Collecting the conformance cases takes seconds, so the seeds are kept in one pickle
(`seeds.pkl` under `tests/fuzz/seeds/`, ignored by git) and remade when it is absent.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED_DIR = HERE / "seeds"
SEED_INPUT_BYTES = 1 << 16
LIGHT_CUTS = (3, 8, 20)
LIGHT_SIDE = 32


def _node_seeds() -> list[tuple[str, bytes, list[np.ndarray]]]:
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.case.node import collect_testcases

    out = []
    for case in collect_testcases():
        if case.model is None or not case.data_sets:
            continue
        inputs = case.data_sets[0][0]
        if not all(isinstance(x, (np.ndarray, TensorProto)) for x in inputs):
            continue
        arrays = [numpy_helper.to_array(x) if isinstance(x, TensorProto) else np.asarray(x) for x in inputs]
        if any(a.dtype.kind not in "biufc" or a.nbytes > SEED_INPUT_BYTES for a in arrays):
            continue
        out.append((case.name, case.model.SerializeToString(), arrays))
    return out


def _trim(model, cut: int):
    """The light model's first `cut` nodes, its image input shrunk, the last node's
    first output the graph output (typed, shape left to the runtime)."""
    import onnx
    from onnx import helper

    m = onnx.ModelProto()
    m.CopyFrom(model)
    compute = [n for n in m.graph.node if n.op_type != "ConstantOfShape"][:cut]
    needed = {i for n in compute for i in n.input}
    weights = [n for n in m.graph.node if n.op_type == "ConstantOfShape" and n.output[0] in needed]
    nodes = weights + compute
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    keep_init = [t for t in m.graph.initializer if t.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep_init)
    keep_in = [v for v in m.graph.input if v.name in used]
    for v in keep_in:
        for d in v.type.tensor_type.shape.dim:
            if d.dim_value == 224:
                d.dim_value = LIGHT_SIDE
    del m.graph.input[:]
    m.graph.input.extend(keep_in)
    del m.graph.value_info[:]
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(nodes[-1].output[0], onnx.TensorProto.FLOAT, None))
    return m


def _light_seeds() -> list[tuple[str, bytes, list[np.ndarray]]]:
    import onnx
    from onnx import helper

    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    rng = np.random.default_rng(0)
    out = []
    for path in sorted(light.glob("*.onnx")):
        model = onnx.load(str(path))
        for cut in LIGHT_CUTS:
            m = _trim(model, cut)
            inits = {t.name for t in m.graph.initializer}
            arrays = []
            for v in m.graph.input:
                if v.name in inits:
                    continue
                shape = [d.dim_value or 1 for d in v.type.tensor_type.shape.dim]
                dtype = helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)
                arrays.append(rng.standard_normal(shape).astype(dtype))
            out.append((f"{path.stem}_first{cut}", m.SerializeToString(), arrays))
    return out


def make_seeds(out_dir: Path = SEED_DIR) -> Path:
    warnings.simplefilter("ignore")
    seeds = _light_seeds() + _node_seeds()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "seeds.pkl"
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(seeds, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)
    return path


def load_seeds(out_dir: Path = SEED_DIR) -> list[tuple[str, bytes, list[np.ndarray]]]:
    path = out_dir / "seeds.pkl"
    if not path.exists():
        make_seeds(out_dir)
    return pickle.loads(path.read_bytes())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=SEED_DIR)
    args = ap.parse_args(argv)
    path = make_seeds(args.out)
    seeds = load_seeds(args.out)
    light = sum(1 for s in seeds if s[0].startswith("light_"))
    print(f"{path}: {len(seeds)} seeds ({light} trimmed light models, {len(seeds) - light} node cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
