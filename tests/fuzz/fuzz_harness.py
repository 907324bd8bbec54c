"""atheris harness: mutated models and mutated feeds must end in a result or an MlrtError.

    python tests/fuzz/fuzz_harness.py --mode models|inputs --provider cpu|opencl [libFuzzer flags] [corpus dirs]

(`run_fuzz.py` runs it and counts; a crash file reproduces with
`python tests/fuzz/fuzz_harness.py --mode M --provider P crash-<sha1>`.)

The fuzzer's bytes drive a FuzzedDataProvider that makes every choice:

- **models**: a seed (`seeds.py`: the node conformance cases and the trimmed light
  models), then one to four structured mutations (dims, element types, attributes,
  initializer dims and raw_data lengths, node inputs, op types, opset, dropped or
  doubled nodes) or raw byte flips of the serialized model; a session is made from
  the bytes and run with the seed's inputs or ones made from the declared inputs.
- **inputs**: a fixed set of sessions over the seeds; the feed's names (right, wrong,
  missing, extra), shapes, dtypes, values (nan, inf, huge), layouts (non-contiguous,
  Fortran, read-only, byte-swapped, 0-d), None, lists and scalars, and the output
  names asked for.

Whatever else escapes run() or the session's constructor (a non-MlrtError exception)
is raised, so atheris reports it and writes the input; a native crash kills the
process, and libFuzzer's -timeout catches hangs and -rss_limit_mb memory blow-ups.
mlrt's per-allocation limit is set to MEMORY_LIMIT here, so a model that asks for
100 GB must be refused with ResourceExhausted.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import atheris
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import seeds as seeds_mod  # noqa: E402

with atheris.instrument_imports(include=["mlrt"]):
    import mlrt  # noqa: E402
    import mlrt.lowlevel as ll  # noqa: E402
    from mlrt.native.plan import memory  # noqa: E402

import onnx  # noqa: E402
from onnx import AttributeProto, TensorProto, helper  # noqa: E402

DUMP = os.environ.get("MLRT_FUZZ_DUMP")  # a path: each mutated model is written there before it is run
MEMORY_LIMIT = 1 << 30  # bytes: any one tensor or arena over this must be refused
FEED_ELEMENTS = 1 << 18  # elements: the largest input the harness makes for a declared shape
DIMS = [0, 1, 2, 3, 7, 13, -1, -7, 2**31 - 1, 2**31, 2**40, 2**62, 2**63 - 1]
INTS = [0, 1, -1, 2, 3, -2, 7, 100, -100, 2**31, -(2**31), 2**40, 2**63 - 1, -(2**63)]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 1e30, -1e30, float("nan"), float("inf"), float("-inf")]
ELEM_TYPES = [t for t in range(1, 24) if t != TensorProto.UNDEFINED]
NP_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
             np.int64, np.uint64, np.bool_, np.complex64, np.object_, np.str_, np.dtype(">f4"), np.dtype(">i8")]
VALUES = [np.nan, np.inf, -np.inf, 1e38, -1e38, 3e38, 1e-45, 0.0, -0.0, 2**31, -(2**63), 2**64 - 1]


def pick(fdp, seq):
    return seq[fdp.ConsumeIntInRange(0, len(seq) - 1)]


def providers_for(name: str) -> list[str]:
    return ["OpenCLExecutionProvider", "CPUExecutionProvider"] if name == "opencl" else ["CPUExecutionProvider"]


# -- model mutations -----------------------------------------------------------------

def _dims(model):
    g = model.graph
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape"):
            yield v.type.tensor_type.shape


def mutate_dim(fdp, model):
    shapes = list(_dims(model))
    if not shapes:
        return
    shape = pick(fdp, shapes)
    action = fdp.ConsumeIntInRange(0, 3)
    if action == 0 and len(shape.dim):
        d = pick(fdp, list(shape.dim))
        if fdp.ConsumeBool():
            d.dim_value = pick(fdp, DIMS)
        else:
            d.dim_param = pick(fdp, ["N", "", "x" * 40, "batch"])
    elif action == 1:
        shape.dim.add().dim_value = pick(fdp, DIMS)
    elif action == 2 and len(shape.dim):
        del shape.dim[fdp.ConsumeIntInRange(0, len(shape.dim) - 1)]
    else:
        shape.Clear()


def mutate_elem_type(fdp, model):
    g = model.graph
    vals = [v.type.tensor_type for v in list(g.input) + list(g.output) if v.type.HasField("tensor_type")]
    targets = vals + list(g.initializer)
    if not targets:
        return
    t = pick(fdp, targets)
    if isinstance(t, TensorProto):
        t.data_type = pick(fdp, ELEM_TYPES + [0, 99])
    else:
        t.elem_type = pick(fdp, ELEM_TYPES + [0, 99])


def mutate_attribute(fdp, model):
    attrs = [a for n in model.graph.node for a in n.attribute]
    if not attrs:
        nodes = list(model.graph.node)
        if nodes:
            pick(fdp, nodes).attribute.append(helper.make_attribute(pick(fdp, ["axis", "perm", "bogus"]),
                                                                    pick(fdp, INTS)))
        return
    a = pick(fdp, attrs)
    action = fdp.ConsumeIntInRange(0, 5)
    if action == 0:
        a.type, a.i = AttributeProto.INT, pick(fdp, INTS)
    elif action == 1:
        n = fdp.ConsumeIntInRange(0, 6)
        del a.ints[:]
        a.ints.extend(pick(fdp, INTS) for _ in range(n))
        a.type = AttributeProto.INTS
    elif action == 2:
        a.type, a.f = AttributeProto.FLOAT, pick(fdp, FLOATS)
    elif action == 3:
        a.type, a.s = AttributeProto.STRING, pick(fdp, [b"", b"NOTSET", b"linear", b"\xff" * 8, b"constant"])
    elif action == 4 and a.type == AttributeProto.TENSOR:
        mutate_tensor(fdp, a.t)
    else:
        a.type = pick(fdp, list(range(0, 15)))


def mutate_tensor(fdp, t):
    action = fdp.ConsumeIntInRange(0, 3)
    if action == 0 and len(t.dims):
        t.dims[fdp.ConsumeIntInRange(0, len(t.dims) - 1)] = pick(fdp, DIMS)
    elif action == 1:
        t.dims.append(pick(fdp, [0, 1, 2, 3, 2**40]))
    elif action == 2:
        raw = t.raw_data
        keep = fdp.ConsumeIntInRange(0, max(0, len(raw) + 16))
        t.raw_data = raw[:keep] + fdp.ConsumeBytes(max(0, keep - len(raw)))
    else:
        t.data_type = pick(fdp, ELEM_TYPES)


def mutate_initializer(fdp, model):
    inits = list(model.graph.initializer)
    if inits:
        mutate_tensor(fdp, pick(fdp, inits))


def mutate_node_inputs(fdp, model):
    nodes = list(model.graph.node)
    if not nodes:
        return
    node = pick(fdp, nodes)
    names = [v.name for v in model.graph.input] + [t.name for t in model.graph.initializer] + \
        [o for n in nodes for o in n.output] + ["", "no_such_value"]
    action = fdp.ConsumeIntInRange(0, 4)
    if action == 0 and len(node.input):
        node.input[fdp.ConsumeIntInRange(0, len(node.input) - 1)] = pick(fdp, names)
    elif action == 1:
        node.input.append(pick(fdp, names))
    elif action == 2 and len(node.input):
        del node.input[fdp.ConsumeIntInRange(0, len(node.input) - 1)]
    elif action == 3 and len(node.output):
        node.output[fdp.ConsumeIntInRange(0, len(node.output) - 1)] = pick(fdp, names)
    else:
        node.output.append(pick(fdp, names + ["extra_out"]))


OP_TYPES = ["Add", "Relu", "Conv", "MatMul", "Gemm", "Reshape", "Transpose", "Concat", "Gather", "Slice", "Pad",
            "Resize", "Softmax", "MaxPool", "AveragePool", "ReduceSum", "Cast", "Expand", "Tile", "Where", "TopK",
            "NonZero", "Range", "ConstantOfShape", "Einsum", "Loop", "If", "Scan", "Split", "Squeeze", "Unsqueeze",
            "QLinearConv", "DequantizeLinear", "LSTM", "GRU", "CumSum", "ScatterND", "GatherND", "OneHot", "Identity"]


def mutate_op(fdp, model):
    nodes = list(model.graph.node)
    if not nodes:
        return
    node = pick(fdp, nodes)
    action = fdp.ConsumeIntInRange(0, 2)
    if action == 0:
        node.op_type = pick(fdp, OP_TYPES)
    elif action == 1:
        node.domain = pick(fdp, ["", "com.microsoft", "ai.onnx.ml", "bogus"])
    else:
        model.opset_import[0].version = pick(fdp, [1, 6, 7, 9, 11, 13, 17, 18, 21, 22, 99])


def mutate_nodes(fdp, model):
    nodes = list(model.graph.node)
    if not nodes:
        return
    i = fdp.ConsumeIntInRange(0, len(nodes) - 1)
    if fdp.ConsumeBool():
        del model.graph.node[i]
    else:
        model.graph.node.insert(fdp.ConsumeIntInRange(0, len(nodes)), nodes[i])


STRUCTURED = [mutate_dim, mutate_elem_type, mutate_attribute, mutate_initializer, mutate_node_inputs, mutate_op,
              mutate_nodes]


def flip_bytes(fdp, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(fdp.ConsumeIntInRange(1, 8)):
        if not b:
            break
        at = fdp.ConsumeIntInRange(0, len(b) - 1)
        action = fdp.ConsumeIntInRange(0, 3)
        if action == 0:
            b[at] = fdp.ConsumeInt(1) & 0xFF
        elif action == 1:
            del b[at:at + fdp.ConsumeIntInRange(1, 16)]
        elif action == 2:
            b[at:at] = fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 16))
        else:
            b[at] ^= 1 << fdp.ConsumeIntInRange(0, 7)
    return bytes(b)


# -- feeds -----------------------------------------------------------------------------

def _np_dtype(type_str: str):
    try:
        return helper.tensor_dtype_to_np_dtype(getattr(TensorProto, type_str[7:-1].upper()))
    except Exception:
        return np.float32


def make_feed(fdp, arg):
    """An input for a declared session input: dims that are not numbers become small ones."""
    shape = [min(d, 64) if isinstance(d, int) and 0 <= d else fdp.ConsumeIntInRange(0, 3) for d in (arg.shape or [])]
    if int(np.prod(shape, dtype=np.float64)) > FEED_ELEMENTS:
        shape = [min(d, 2) for d in shape]
        if 2 ** len(shape) > FEED_ELEMENTS:
            shape = [min(d, 1) for d in shape]
    dtype = _np_dtype(arg.type) if arg.type.startswith("tensor(") else np.float32
    if np.dtype(dtype).kind == "O":
        return np.full(shape, "a", dtype=object)
    return np.ones(shape, dtype)


def model_case(fdp, seeds, providers):
    name, data, inputs = pick(fdp, seeds)
    if fdp.ConsumeIntInRange(0, 4) == 0:
        data = flip_bytes(fdp, data)
    else:
        model = onnx.ModelProto()
        model.ParseFromString(data)
        for _ in range(fdp.ConsumeIntInRange(1, 4)):
            pick(fdp, STRUCTURED)(fdp, model)
        data = model.SerializeToString()
    if DUMP:  # (reproducing a finding: the model and seed it came from)
        Path(DUMP).write_bytes(data)
        print(f"fuzz_harness: seed {name}, model written to {DUMP}", file=sys.stderr, flush=True)
    try:
        sess = ll.InferenceSession(data, providers=providers)
    except mlrt.MlrtError:
        return
    by_name = dict(zip([v.name for v in sess.get_inputs()], inputs))
    feed = {}
    for arg in sess.get_inputs():
        x = by_name.get(arg.name)
        feed[arg.name] = x if x is not None and fdp.ConsumeIntInRange(0, 3) else make_feed(fdp, arg)
    try:
        sess.run(None, feed)
    except mlrt.MlrtError:
        pass


def mutate_value(fdp, x):
    """One feed made wrong, or odd but valid, from the right one `x`."""
    action = fdp.ConsumeIntInRange(0, 17)
    if action == 0:
        return None
    if action == 1:
        return x.tolist()
    if action == 2:
        return x.reshape(-1)[0].item() if x.size else 0
    if action == 3:  # a non-contiguous view with the same shape and values
        big = np.repeat(x[..., None], 2, axis=-1) if x.ndim else np.stack([x, x])
        return big[..., 0] if x.ndim else big[0]
    if action == 4:
        y = x.copy()
        y.setflags(write=False)
        return y
    if action == 5:
        return np.asfortranarray(x)
    if action == 6:
        return x.astype(x.dtype.newbyteorder(">")) if x.dtype.itemsize > 1 else x
    if action == 7:
        dtype = pick(fdp, NP_DTYPES)
        try:
            return x.astype(dtype)
        except (ValueError, TypeError, OverflowError):
            return np.zeros(x.shape, dtype)
    if action == 8:
        shape = tuple(pick(fdp, [0, 1, 2, 3, 5]) for _ in range(fdp.ConsumeIntInRange(0, 5)))
        return np.zeros(shape, x.dtype)
    if action == 9:
        return np.asarray(x.reshape(-1)[0] if x.size else 0, dtype=x.dtype)  # 0-d
    if action == 10 and x.size:
        y = x.copy().reshape(-1)
        v = pick(fdp, VALUES)
        try:
            with np.errstate(all="ignore"):
                y[fdp.ConsumeIntInRange(0, y.size - 1)] = v
        except (OverflowError, ValueError, TypeError):
            pass
        return y.reshape(x.shape)
    if action == 11 and x.dtype.kind in "iu" and x.size:  # wild indices, counts, axes
        y = x.copy().reshape(-1)
        info = np.iinfo(x.dtype)
        y[fdp.ConsumeIntInRange(0, y.size - 1)] = pick(fdp, [info.max, info.min, max(-1, int(info.min)), 0, 1, 2**15 % (int(info.max) + 1)])
        return y.reshape(x.shape)
    if action == 12:
        return x[::-1] if x.ndim else x  # negative strides
    if action == 13:
        return "not an array"
    if action == 14:
        return mlrt.lowlevel.OrtValue.ortvalue_from_numpy(x) if hasattr(mlrt.lowlevel, "OrtValue") else x
    if action == 15:
        return np.broadcast_to(x.reshape(-1)[:1], x.shape) if x.size and x.ndim else x  # zero strides, read-only
    if action == 16 and x.ndim:
        return np.expand_dims(x, 0)
    return x


def inputs_case(fdp, sessions):
    sess, inputs = pick(fdp, sessions)
    args = sess.get_inputs()
    feed = {}
    for arg, x in zip(args, inputs):
        action = fdp.ConsumeIntInRange(0, 9)
        if action == 0:
            continue  # missing
        name = arg.name if action != 1 else pick(fdp, ["", "wrong", arg.name + " ", arg.name.upper(), "\x00"])
        feed[name] = mutate_value(fdp, x) if action >= 5 else x
    if fdp.ConsumeIntInRange(0, 9) == 0:
        feed[pick(fdp, ["extra", "", "output"])] = np.zeros(2, np.float32)
    outs = [o.name for o in sess.get_outputs()]
    action = fdp.ConsumeIntInRange(0, 7)
    names = None if action < 4 else (outs[:1] if action == 4 else ["nope"] if action == 5 else outs + outs
                                    if action == 6 else [])
    try:
        got = sess.run(names, feed)
    except mlrt.MlrtError:
        return
    if not isinstance(got, list) or len(got) != len(names or outs):
        raise AssertionError(f"run gave {type(got).__name__} of {len(got)} outputs for {names or outs}")


def make_sessions(seeds, providers, every: int = 8):
    sessions = []
    for i, (name, data, inputs) in enumerate(seeds):
        if not (name.startswith("light_") or i % every == 0):
            continue
        try:
            sess = ll.InferenceSession(data, providers=providers)
            if len(sess.get_inputs()) != len(inputs):
                continue
            sess.run(None, {a.name: x for a, x in zip(sess.get_inputs(), inputs)})
            sessions.append((sess, inputs))
        except mlrt.MlrtError:
            continue
    return sessions


def keep_going(one, folder: Path):
    """`one` with each non-MlrtError exception recorded instead of raised: its input as
    `exception-<sha1>` and its traceback as `exception-<sha1>.txt` in `folder`, once per
    place it was raised from, so a long run is not ended by one known bug."""
    import hashlib
    import traceback

    seen = set()

    def wrapped(data: bytes) -> None:
        try:
            one(data)
        except Exception as exc:  # noqa: BLE001 - every one is written down as a finding
            frames = traceback.extract_tb(exc.__traceback__)
            key = (type(exc).__name__, frames[-1].filename, frames[-1].lineno)
            if key in seen:
                return
            seen.add(key)
            name = "exception-" + hashlib.sha1(repr(key).encode()).hexdigest()
            if not (folder / name).exists():
                (folder / name).write_bytes(data)
                (folder / f"{name}.txt").write_text("".join(traceback.format_exception(exc)))
            print(f"fuzz_harness: finding {name}: {type(exc).__name__} at {key[1]}:{key[2]}", file=sys.stderr)
    return wrapped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    ap.add_argument("--mode", choices=["models", "inputs"], required=True)
    ap.add_argument("--provider", choices=["cpu", "opencl"], default="cpu")
    ap.add_argument("--keep-going", type=Path, default=None,
                    help="record non-MlrtError exceptions in this folder and go on (crashes and hangs still stop)")
    args, rest = ap.parse_known_args()
    warnings.simplefilter("ignore")
    memory.MEMORY_LIMIT = MEMORY_LIMIT  # (read when an allocation is checked)
    providers = providers_for(args.provider)
    seeds = seeds_mod.load_seeds()
    if args.mode == "models":
        def one(data: bytes) -> None:
            model_case(atheris.FuzzedDataProvider(data), seeds, providers)
    else:
        sessions = make_sessions(seeds, providers)
        print(f"fuzz_harness: {len(sessions)} sessions", file=sys.stderr, flush=True)

        def one(data: bytes) -> None:
            inputs_case(atheris.FuzzedDataProvider(data), sessions)
    if args.keep_going is not None:
        args.keep_going.mkdir(parents=True, exist_ok=True)
        one = keep_going(one, args.keep_going)
    atheris.Setup([sys.argv[0]] + rest, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
