"""`mlrt info | run | bench | optimize MODEL`: the model commands onnxruntime users
expect, on mlrt.lowlevel (the onnxruntime-like API) and `onnx` for the model facts.

    info      inputs, outputs, opsets, metadata, operator counts, which provider runs what
    run       one run on .npy/.npz files or an image; prints each output, can save them
    bench     latency percentiles and throughput on generated inputs
    optimize  the graph optimizer's output, saved (SessionOptions.optimized_model_filepath)

    batch     (mlrt.highlevel.batch.predict, its options and its summary line)

A mistake of the caller (missing file, bad --input, wrong input name or shape, a --dim
naming no free dimension) is an `InvalidArgument`, `NoSuchFile` or other MlrtError;
`mlrt.__main__` prints it as one line and exits with status 2.  Only stdlib at
import: `python -m mlrt` stays light.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

EPILOGS = {
    "info": """examples:
  mlrt info model.onnx
  mlrt info model.onnx --providers OpenCLExecutionProvider""",
    "run": """examples:
  mlrt run model.onnx --input x=x.npy --output-dir out/
  mlrt run model.onnx --input feeds.npz             (arrays named as the inputs)
  mlrt run classifier.onnx --image cat.jpg

--image fills the model's one image-like input (4-D float32/float16/uint8, 1 or 3
channels first or last): centre-cropped to the input's aspect ratio, resized, BGR
(or gray) pixel values 0..255, no mean/std, as mlrt.media tensorizes by default.
Models that want RGB, 0..1 or normalized values: bind the frame through
mlrt.highlevel (it reads the model's Image.* metadata), or pass a .npy.""",
    "bench": """examples:
  mlrt bench model.onnx
  mlrt bench model.onnx --runs 500 --warmup 20 --threads 4
  mlrt bench model.onnx --dim batch=8 --providers OpenCLExecutionProvider
  mlrt bench model.onnx --quiet > bench.log

inputs are generated (floats normal, integers and bools zero) with free dimensions
1 unless --dim names them; a progress bar is drawn when stderr is a terminal.""",
    "optimize": """examples:
  mlrt optimize model.onnx model.opt.onnx
  mlrt optimize model.onnx model.basic.onnx --level basic
  mlrt optimize model.onnx model.opt.onnx --single-file

weights of 1 KB or more go to OUT.data beside OUT (ONNX external data, as
onnx.save_model writes it; keep the two files together) unless --single-file;
constant folding can make a model much larger than its input (it writes out
weights the model computed), and the summary line says how large.""",
}
LEVELS = {"basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def add_parsers(sub) -> None:
    """The four subcommands, on the `mlrt` parser's subparsers."""
    def parser(name, text):
        return sub.add_parser(name, help=text, description=text, epilog=EPILOGS[name],
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    providers = dict(default="", metavar="A,B", help="execution providers, comma-separated (CPU is added last)")
    p = parser("info", "a model's inputs, outputs, opsets, metadata, operators and node placement")
    p.add_argument("model")
    p.add_argument("--providers", **providers)
    p = parser("run", "run a model once on .npy/.npz files or an image and print (or save) its outputs")
    p.add_argument("model")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input from a .npy file (NAME= may be left out for a one-input model), or a .npz "
                        "holding inputs by name; repeat for several")
    p.add_argument("--image", metavar="FILE", help="an image file for the model's one image-like input")
    p.add_argument("--output-dir", metavar="DIR", help="write each output as DIR/<name>.npy")
    p.add_argument("--providers", **providers)
    p = parser("bench", "time a model on generated inputs: latency percentiles and throughput")
    p.add_argument("model")
    p.add_argument("--runs", type=int, default=100, help="timed runs, default 100")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs first (the first one plans), default 5")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads, default 0 (one per core)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="size of a named free dimension (default 1); repeat for several")
    p.add_argument("--providers", **providers)
    p.add_argument("--quiet", action="store_true", help="no progress bar (there is one only when stderr is a terminal)")
    p = parser("optimize", "write the model as the graph optimizer leaves it")
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--level", choices=list(LEVELS), default="all", help="optimization level, default all")
    p.add_argument("--single-file", action="store_true",
                   help="keep the weights inside OUT (default: weights of 1 KB or more go to OUT.data beside it)")


def command(args) -> int:
    return {"info": info_command, "run": run_command, "bench": bench_command,
            "optimize": optimize_command}[args.command](args)


# -- batch -----------------------------------------------------------------------------------
def batch_command(args) -> int:
    from .highlevel import batch
    if os.path.isdir(args.model):
        raise _error(f"{args.model} is a folder, not a model file")
    if args.engine == "ray":
        _quiet_ray(batch, args.address)
    summary = batch.predict(args.model, args.input, args.output, engine=args.engine, kind=args.kind,
                            actors=args.actors, batch_size=args.batch_size, device=args.device,
                            address=args.address, progress=False if args.quiet else None, on_error=args.on_error,
                            decode=args.decode)
    rows, skipped = f"{summary.rows} rows", ""
    if summary.errors:
        first, n = summary.errors[0], len(summary.errors)
        rows = f"{summary.rows - n} of {summary.rows} rows"
        skipped = (f"; {n} input{'s' if n > 1 else ''} skipped ({first['input']}{', ...' if n > 1 else ''}: "
                   f"{first['error']}), listed in {summary.errors_file}")
    print(f"{rows} ({summary.kind}) in {summary.seconds:.1f} s, {summary.rows_per_second:.1f} rows/s, "
          f"{summary.engine} engine, {summary.actors} actor(s): {summary.output}{skipped}")
    return 0


def _quiet_ray(batch, address) -> None:
    """Ray as the CLI runs it: its Python logs and progress lines kept off the console (they
    go to Ray's log files), so that an error ends in the one line the CLI prints (Ray's C++
    core may still say a line of its own as it starts).  The library leaves Ray's console
    as its user configured it."""
    import logging
    ray = batch.ray_init(address, logging_level=logging.CRITICAL, log_to_driver=False)
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    ray.data.DataContext.get_current().enable_progress_bars = False


# -- shared ----------------------------------------------------------------------------------
def _error(message: str):
    from ._errors import InvalidArgument
    return InvalidArgument(message)


def _session(args, options=None):
    from . import lowlevel
    from ._errors import NoSuchFile
    if os.path.isdir(args.model):
        raise _error(f"{args.model} is a folder, not a model file")
    if not os.path.isfile(args.model):
        raise NoSuchFile(f"no model file {args.model}")
    providers = [p for p in getattr(args, "providers", "").split(",") if p]
    if providers and "CPUExecutionProvider" not in providers:
        providers.append("CPUExecutionProvider")
    return lowlevel.InferenceSession(args.model, options or lowlevel.SessionOptions(), providers=providers or None)


def _shape(shape) -> str:
    return "[" + ", ".join(str(d) if d is not None else "?" for d in shape) + "]" if shape is not None else "?"


def _describe_inputs(session) -> str:
    return ", ".join(f"{a.name} {a.type} {_shape(a.shape)}" for a in session.get_inputs())


# -- info ------------------------------------------------------------------------------------
def info_command(args) -> int:
    import onnx
    session = _session(args)
    model = onnx.load(args.model, load_external_data=False)
    meta = session.get_modelmeta()
    print(f"model: {args.model}")
    for title, args_ in (("inputs", session.get_inputs()), ("outputs", session.get_outputs())):
        print(f"{title}:")
        for a in args_:
            print(f"  {a.name:<24} {a.type:<18} {_shape(a.shape)}")
    print("opsets: " + ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import))
    print(f"producer: {meta.producer_name or '-'} {model.producer_version}".rstrip())
    print(f"graph: {meta.graph_name or '-'}; model version {meta.version}; IR version {model.ir_version}")
    for key, value in sorted(meta.custom_metadata_map.items()):
        print(f"  metadata {key} = {value}")
    ops = _histogram(f"{n.domain}::{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type
                     for n in model.graph.node)
    print(f"operators ({len(model.graph.node)} nodes in the main graph):")
    for op, count in ops:
        print(f"  {op:<32}{count:>6}")
    assignment = session.get_node_assignment()
    print(f"node placement after optimization ({len(assignment)} nodes; providers "
          f"{', '.join(session.get_providers())}):")
    for provider in dict.fromkeys(p for _, _, p in assignment):
        placed = _histogram(op for _, op, p in assignment if p == provider)
        total = sum(c for _, c in placed)
        print(f"  {provider}: {total} nodes: " + ", ".join(f"{op} {c}" for op, c in placed))
    return 0


def _histogram(items) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


# -- run -------------------------------------------------------------------------------------
def run_command(args) -> int:
    import numpy as np
    session = _session(args)
    inputs = {a.name: a for a in session.get_inputs()}
    feeds = {}
    for item in args.input:
        name, sep, path = item.partition("=") if "=" in item else ("", "", item)
        if not sep and path.endswith(".npz"):
            with _load(path) as npz:
                feeds.update({k: npz[k] for k in npz.files})
            continue
        if not sep:
            if len(inputs) != 1:
                raise _error(f"--input {item}: write NAME=FILE.npy (the model's inputs: {_describe_inputs(session)})")
            name = next(iter(inputs))
        if not name or not path:
            raise _error(f"--input {item}: write NAME=FILE.npy")
        feeds[name] = _load(path)
        if not isinstance(feeds[name], np.ndarray):
            raise _error(f"--input {item}: a .npz holds several arrays; give it without NAME=")
    unknown = [n for n in feeds if n not in inputs]
    if unknown:
        raise _error(f"the model has no input {', '.join(unknown)} (its inputs: {_describe_inputs(session)})")
    if args.image:
        name = _image_input(session, set(feeds))
        feeds[name] = _image_tensor(args.image, inputs[name])
    missing = [n for n in inputs if n not in feeds]
    if missing:
        raise _error(f"inputs not given: {', '.join(missing)} (the model's inputs: {_describe_inputs(session)}; "
                     "use --input NAME=FILE.npy or --image FILE)")
    if args.output_dir:
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as exc:
            raise _error(f"cannot make --output-dir {args.output_dir}: {exc.strerror}") from None
    names = [o.name for o in session.get_outputs()]
    start = time.perf_counter()
    results = session.run(names, feeds)
    print(f"{args.model}: ran in {(time.perf_counter() - start) * 1000:.2f} ms on "
          f"{', '.join(session.get_providers())}")
    for name, value in zip(names, results):
        value = np.asarray(value)
        print(f"{name}: shape {_shape(value.shape)} {value.dtype}{_summary(value)}")
        if args.output_dir:
            path = os.path.join(args.output_dir, output_file(name))
            np.save(path, value)
            print(f"  saved {path}")
    return 0


def output_file(name: str) -> str:
    """The .npy file name of an output: its name with characters other than letters,
    digits, '.', '-' and '_' made '_'."""
    return re.sub(r"[^\w.-]", "_", name).lstrip(".") + ".npy"


def _load(path: str):
    import numpy as np
    if not os.path.isfile(path):
        raise _error(f"no file {path}")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise _error(f"{path} is not a .npy or .npz file ({exc})") from None


def _summary(value) -> str:
    import numpy as np
    if value.dtype == object or value.size == 0 or value.dtype.kind not in "biuf":
        return ""
    v = value.astype(np.float64)
    text = f"  min {v.min():.6g} max {v.max():.6g} mean {v.mean():.6g}"
    if value.dtype.kind == "f" and (value.ndim == 1 or (value.ndim == 2 and value.shape[0] == 1)):
        flat = v.ravel()
        top = np.argsort(-flat, kind="stable")[:5]
        text += "\n  top-5: " + ", ".join(f"{i} ({flat[i]:.4g})" for i in top)
    return text


def image_like(arg) -> tuple[int, bool] | None:
    """(channels, nhwc) for a 4-D float32/float16/uint8 input with 1 or 3 channels first
    (NCHW) or last (NHWC), as mlrt.highlevel guesses; None otherwise."""
    if arg.type not in ("tensor(float)", "tensor(float16)", "tensor(uint8)") or not arg.shape or len(arg.shape) != 4:
        return None
    if arg.shape[1] in (1, 3):
        return arg.shape[1], False
    if arg.shape[3] in (1, 3):
        return arg.shape[3], True
    return None


def _image_input(session, given: set) -> str:
    candidates = [a.name for a in session.get_inputs() if a.name not in given and image_like(a)]
    if len(candidates) != 1:
        found = f"{len(candidates)} ({', '.join(candidates)})" if candidates else "none"
        raise _error(f"--image needs exactly one image-like input (4-D, 1 or 3 channels) not given by --input; "
                     f"found {found} among {_describe_inputs(session)}")
    return candidates[0]


def _image_tensor(path: str, arg):
    """The image at `path` as `arg`'s tensor, by mlrt.media's default rule: centred crop
    to the input's aspect ratio, resized, BGR (or gray) order, values 0..255."""
    import numpy as np
    from .media import BitmapPixelFormat, ImageTarget, VideoFrame, tensorize
    if not os.path.isfile(path):
        raise _error(f"no image file {path}")
    try:
        frame = VideoFrame.from_file(path)
    except OSError as exc:
        raise _error(f"cannot read image {path}: {exc}") from None
    channels, nhwc = image_like(arg)
    h, w = (arg.shape[1], arg.shape[2]) if nhwc else (arg.shape[2], arg.shape[3])
    dtype = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(uint8)": np.uint8}[arg.type]
    target = ImageTarget(np.dtype(dtype), channels, h if isinstance(h, int) else None,
                         w if isinstance(w, int) else None, nhwc,
                         BitmapPixelFormat.GRAY8 if channels == 1 else BitmapPixelFormat.BGR8)
    tensor, _ = tensorize([frame], target)
    return tensor


# -- bench -----------------------------------------------------------------------------------
def bench_command(args) -> int:
    import numpy as np
    from . import lowlevel
    from ._profile import generated_inputs
    if args.runs < 1 or args.warmup < 0 or args.threads < 0:
        raise _error("--runs must be >= 1, --warmup and --threads >= 0")
    dims = _dims(args.dim)
    so = lowlevel.SessionOptions()
    so.intra_op_num_threads = args.threads
    session = _session(args, so)
    check_dims(session, dims)
    feeds = generated_inputs(session, dims)
    bar = Progress(args.warmup + args.runs, "bench", enabled=not args.quiet)
    first = first_run(session, feeds, dims)  # the first warm-up run, or the first timed one
    bar.step()
    for _ in range(args.warmup - 1):
        session.run(None, feeds)
        bar.step()
    times = [] if args.warmup else [first]
    for _ in range(args.runs - len(times)):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - start)
        bar.step()
    bar.close()
    ms = np.array(times) * 1000
    shapes = ", ".join(f"{k} {_shape(v.shape)}" for k, v in feeds.items())
    print(f"{args.model}: {args.runs} runs after {args.warmup} warm-up on {', '.join(session.get_providers())}, "
          f"threads {args.threads or 'default'}; inputs {shapes}")
    p50, p90, p99 = np.percentile(ms, [50, 90, 99])
    print(f"latency ms: p50 {p50:.3f}  p90 {p90:.3f}  p99 {p99:.3f}  mean {ms.mean():.3f}  "
          f"min {ms.min():.3f}  max {ms.max():.3f}")
    print(f"throughput: {args.runs / max(sum(times), 1e-12):.1f} runs/s")
    return 0


def _dims(items) -> dict[str, int]:
    dims = {}
    for item in items:
        name, _, value = item.partition("=")
        if not name or not value.isdigit() or int(value) < 1:
            raise _error(f"--dim {item}: write NAME=N with N a whole number >= 1")
        dims[name] = int(value)
    return dims


def free_dims(session) -> list[str]:
    """The names of the free (symbolic) dimensions of the model's inputs, in order."""
    found: dict[str, None] = {}
    for arg in session.get_inputs():
        found.update((d, None) for d in arg.shape or () if isinstance(d, str) and d)
    return list(found)


def check_dims(session, dims: dict) -> None:
    """InvalidArgument for a --dim that names no free dimension of the model's inputs."""
    free = free_dims(session)
    unknown = [name for name in dims if name not in free]
    if unknown:
        has = f"its free dimensions: {', '.join(free)}" if free else "it has none"
        raise _error(f"--dim {unknown[0]}: the model's inputs have no free dimension '{unknown[0]}' ({has}; "
                     f"inputs {_describe_inputs(session)})")


def first_run(session, feeds: dict, dims: dict) -> float:
    """Run once on the generated inputs (seconds it took); where that fails and free
    dimensions were left at 1, the error says which and how to size them."""
    from ._errors import MlrtError
    start = time.perf_counter()
    try:
        session.run(None, feeds)
    except MlrtError as exc:
        unsized = [d for d in free_dims(session) if d not in dims]
        if unsized:
            raise type(exc)(f"{exc} (on generated inputs whose free dimensions {', '.join(unsized)} were given 1: "
                            f"size them with {' '.join(f'--dim {d}=N' for d in unsized)})") from None
        raise
    return time.perf_counter() - start


class Progress:
    """A one-line bar on stderr, redrawn with \\r at most ~20 times a second; drawn only
    where the stream is a terminal (in a log, \\r frames are noise) and `enabled`."""

    def __init__(self, total: int, label: str, stream=None, width: int = 30, enabled: bool = True):
        self.total, self.label, self.width, self.done, self.drawn = total, label, width, 0, 0.0
        self.stream = stream or sys.stderr
        self.enabled = enabled and _is_terminal(self.stream)

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.drawn >= 0.05 or self.done == self.total:
            self.drawn = now
            filled = self.width * self.done // max(self.total, 1)
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# -- optimize --------------------------------------------------------------------------------
def optimize_command(args) -> int:
    import onnx
    from . import lowlevel
    from .native.save import EXTERNAL_FILE
    so = lowlevel.SessionOptions()
    so.graph_optimization_level = getattr(lowlevel.GraphOptimizationLevel, LEVELS[args.level])
    so.optimized_model_filepath = args.out
    data = os.path.basename(args.out) + ".data"
    if not args.single_file:
        so.add_session_config_entry(EXTERNAL_FILE, data)  # weights of 1 KB or more
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        raise _error(f"no folder {out_dir} to write {args.out} in")
    if os.path.isdir(args.out):
        raise _error(f"{args.out} is a folder: name the model file to write")
    _session(args, so)
    before = len(onnx.load(args.model, load_external_data=False).graph.node)
    after = len(onnx.load(args.out, load_external_data=False).graph.node)
    data_path = os.path.join(out_dir, data)
    weights = (f"; weights {_size(os.path.getsize(data_path))} in {os.path.join(os.path.dirname(args.out), data)}"
               if not args.single_file and os.path.isfile(data_path) else "")
    print(f"wrote {args.out} ({_size(os.path.getsize(args.out))}{weights}; the input "
          f"{_size(os.path.getsize(args.model))}): {before} nodes -> {after} nodes (level {args.level})")
    return 0


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return ""
