"""`python -m mlrt` (also the `mlrt` command): what this installation has.

Prints the SDK version, the native runtime in use (kind, version, ABI, path), the
execution providers, each device provider's devices as it surveys them (OpenCL: every
device with whether it passed its probe, built and run in a child process, and the one
in use), and operator coverage (C kernels, operator semantics files).

`mlrt runtime ...` manages native runtimes (DESIGN.md "Distribution"):
    mlrt runtime bundle DIR                 copy the bundled runtime into an app's folder
    mlrt runtime install [--prefix P]       install it as P/lib/mlrt/<version>/ (+ header, pkg-config)
    mlrt runtime list [--prefix P]          the runtimes installed under P, newest first
    mlrt runtime which                      the runtime this environment selects (MLRT_RUNTIME)
    mlrt runtime uninstall VERSION [--prefix P]
P defaults to $MLRT_SYSTEM_PREFIX, else /usr/local.

`mlrt profile MODEL [--runs N] [--providers A,B] [--dim NAME=N] [--top K]` runs a model
on generated inputs with profiling on, writes the Chrome trace (load it in Perfetto or
chrome://tracing) and prints the time per op type and the slowest nodes.

`mlrt batch MODEL INPUT OUTPUT [--engine local|ray] [--on-error raise|skip] ...` runs
a model over many images, video frames or table rows (mlrt.highlevel.batch).

The model commands (package/_cli.py):
    mlrt info MODEL [--providers A,B]       inputs, outputs, opsets, metadata, operators, node placement
    mlrt run MODEL [--input NAME=FILE.npy ...] [--image FILE] [--output-dir DIR]
    mlrt bench MODEL [--runs N] [--warmup N] [--threads N] [--dim NAME=N] [--providers A,B] [--quiet]
    mlrt optimize MODEL OUT [--level basic|extended|all] [--single-file]

Every command (`mlrt COMMAND --help` shows examples; `mlrt --version`): an error --
a usage mistake, a missing file, a bad model or input -- prints one line,
`mlrt COMMAND: what and where`, and exits with status 2, never a traceback; a warning
prints one line, `mlrt COMMAND: warning: ...`; progress bars are drawn only when
stderr is a terminal (`--quiet`: none).
"""

from __future__ import annotations

import argparse
import os
import sys


def info() -> str:
    from . import __version__
    from .lowlevel import get_available_providers
    from . import native
    from .native.ops import all_ops
    from .native.providers import device_classes, for_device

    rt = native.runtime()
    table = native.kernel_table()
    lines = [
        f"mlrt {__version__}",
        f"runtime: {rt.kind} {rt.version} (ABI {rt.abi}) at {rt.path}",
        f"build: {rt.ffi.string(rt.lib.mlrt_build_info()).decode()}",
        f"providers: {', '.join(get_available_providers())}",
        *(line for kind in device_classes() for line in for_device(kind).survey()),  # each device provider's
        f"C kernels: {len(table)} covering {len({(k['domain'], k['op_type']) for k in table})} operators",
        cpu_paths(rt),
        f"operator semantics files: {len(all_ops())}",
    ]
    return "\n".join(lines)


def cpu_paths(rt) -> str:
    """The instruction set the runtime's float32 kernels run on, and the CPU's features."""
    if not hasattr(rt.lib, "mlrt_cpu_isa_name"):  # a system runtime older than the question
        return "CPU kernel paths: not reported by this runtime"
    isa = rt.ffi.string(rt.lib.mlrt_cpu_isa_name()).decode()
    features = rt.ffi.string(rt.lib.mlrt_cpu_features()).decode() or "none read"
    asked = os.environ.get("MLRT_ISA", "")
    refused = f"; MLRT_ISA={asked} does not run here" if asked and asked != isa else ""
    return f"CPU kernel paths: {isa} (features: {features}; MLRT_ISA=portable|avx2|avx512|neon forces one{refused})"


def runtime_command(args) -> int:
    from . import distribution as d

    if args.action == "bundle":
        dest = d.bundle(args.dir)
        print(f"bundled runtime copied to {dest}; select it with MLRT_RUNTIME={dest}")
    elif args.action == "install":
        dest = d.install(args.prefix)
        print(f"installed {dest.name} at {dest}")
        print(f"  pkg-config: PKG_CONFIG_PATH={dest.parent.parent / 'pkgconfig'} pkg-config --cflags --libs mlrt")
    elif args.action == "uninstall":
        print(f"removed {d.uninstall(args.version, args.prefix)}")
    elif args.action == "list":
        found = d.installed(args.prefix)
        print(f"system runtimes under {d.system_root(args.prefix)}:" + ("" if found else " (none)"))
        for i, rt in enumerate(found):
            state = f"ABI {rt.abi}" if rt.ok else f"BROKEN: {rt.problem}"
            print(f"  {rt.version}  {state}{'  (newest)' if i == 0 and rt.ok else ''}  {rt.folder}")
    elif args.action == "which":
        rt = d.current_runtime()
        print(f"{rt.kind} {rt.version} (ABI {rt.abi}) at {rt.path}")
    return 0


EXAMPLES = """examples:
  mlrt                                     what this installation has (--ops: every C kernel)
  mlrt --version
  mlrt info model.onnx                     inputs, outputs, opsets, operators, node placement
  mlrt run model.onnx --input x=x.npy --output-dir out/
  mlrt run classifier.onnx --image cat.jpg
  mlrt bench model.onnx --runs 200 --threads 4
  mlrt optimize model.onnx model.opt.onnx --level extended
  mlrt profile model.onnx --runs 10
  mlrt batch classifier.onnx photos/ scores/
  mlrt runtime which

errors print one line and exit with status 2; `mlrt COMMAND --help` has examples."""

RUNTIME_EPILOG = """examples:
  mlrt runtime which                        the runtime this environment selects
  mlrt runtime bundle app/runtime           copy the bundled runtime into an app's folder
  mlrt runtime install --prefix ~/.local    a versioned copy under ~/.local/lib/mlrt/
  mlrt runtime list --prefix ~/.local
  mlrt runtime uninstall 0.1.0 --prefix ~/.local"""

PROFILE_EPILOG = """examples:
  mlrt profile model.onnx
  mlrt profile model.onnx --runs 50 --top 30
  mlrt profile model.onnx --dim batch=8 --dim seq=128
  mlrt profile model.onnx --providers OpenCLExecutionProvider --prefix traces/run

inputs are generated (floats normal, integers and bools zero) with free dimensions
1 unless --dim names them; the trace opens in Perfetto or chrome://tracing."""

BATCH_EPILOG = """examples:
  mlrt batch classifier.onnx photos/ scores/ --engine local
  mlrt batch classifier.onnx photos/ scores/ --on-error skip     (unreadable images listed in scores/_errors.jsonl)
  mlrt batch classifier.onnx photos/ scores/ --engine ray --actors 4
  mlrt batch model.onnx table.parquet out/ --engine ray --address 10.0.0.5:6379
  mlrt batch classifier.onnx s3://bucket/photos/ s3://bucket/scores/   (any filesystem pyarrow or fsspec opens)

the output is read back in row order with mlrt.highlevel.batch.read_results(OUTPUT)."""


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors in one line (status 2), as mlrt's own errors are."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """--version: the SDK's version (read from the metadata only when asked for)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from . import __version__
        print(f"mlrt {__version__}")
        parser.exit(0)


def _parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="mlrt", description="mlrt: what this installation has", epilog=EXAMPLES,
                     formatter_class=raw)
    parser.add_argument("--version", action=_Version, help="print mlrt's version and exit")
    parser.add_argument("--ops", action="store_true", help="also list every operator with a C kernel")
    sub = parser.add_subparsers(dest="command")
    rt = sub.add_parser("runtime", help="bundle, install, list, select or remove native runtimes",
                        description="native runtimes: bundled with the package or installed under a prefix "
                                    "(P defaults to $MLRT_SYSTEM_PREFIX, else /usr/local)",
                        epilog=RUNTIME_EPILOG, formatter_class=raw)
    rsub = rt.add_subparsers(dest="action", required=True)
    p = rsub.add_parser("bundle", help="copy the bundled runtime into an app's folder",
                        epilog="example:\n  mlrt runtime bundle app/runtime", formatter_class=raw)
    p.add_argument("dir")
    for name, text, example in (("install", "install the bundled runtime under a prefix",
                                 "mlrt runtime install --prefix ~/.local"),
                                ("list", "list the runtimes installed under a prefix",
                                 "mlrt runtime list --prefix ~/.local")):
        p = rsub.add_parser(name, help=text, epilog=f"example:\n  {example}", formatter_class=raw)
        p.add_argument("--prefix", default=None, help="default: $MLRT_SYSTEM_PREFIX, else /usr/local")
    rsub.add_parser("which", help="the runtime this environment selects (MLRT_RUNTIME, MLRT_SYSTEM_PREFIX)",
                    epilog="examples:\n  mlrt runtime which\n  MLRT_RUNTIME=system mlrt runtime which",
                    formatter_class=raw)
    p = rsub.add_parser("uninstall", help="remove one installed version",
                        epilog="example:\n  mlrt runtime uninstall 0.1.0 --prefix ~/.local", formatter_class=raw)
    p.add_argument("version")
    p.add_argument("--prefix", default=None, help="default: $MLRT_SYSTEM_PREFIX, else /usr/local")
    p = sub.add_parser("profile", help="run a model with profiling on: time per op type, slowest nodes, a trace",
                       description="run a model on generated inputs with profiling on: the time per op type, the "
                                   "slowest nodes, and a Chrome trace", epilog=PROFILE_EPILOG, formatter_class=raw)
    p.add_argument("model")
    p.add_argument("--runs", type=int, default=10, help="runs after the first (which plans), default 10")
    p.add_argument("--providers", default="", help="comma-separated, e.g. OpenCLExecutionProvider (CPU is added last)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="size of a named free dimension (default 1); repeat for several")
    p.add_argument("--top", type=int, default=15, help="how many nodes to list")
    p.add_argument("--prefix", default="mlrt_profile", help="trace file prefix")
    p = sub.add_parser("batch", help="run a model over many images, video frames or table rows; Parquet out",
                       description="Batch inference (mlrt.highlevel.batch): INPUT is a folder of images, a "
                                   "video, or a Parquet file or folder; OUTPUT a new folder of Parquet files, one "
                                   "row per input row with its number in column 'row'.",
                       epilog=BATCH_EPILOG, formatter_class=raw)
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="ray: Ray Data (the ray extra: pip install \".[ray]\" in a checkout of mlrt); local: a "
                        "process pool here (default)")
    p.add_argument("--address", default=None, help="a Ray cluster's address (default: a local Ray on 127.0.0.1)")
    p.add_argument("--actors", type=int, default=None, help="predictors, one session each (default: ray 1, "
                                                             "local one per core)")
    p.add_argument("--batch-size", type=int, default=32, help="rows evaluated together (default 32)")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu", help="each predictor's device")
    p.add_argument("--kind", choices=["image", "video", "table"], default=None, help="when the guess is wrong")
    p.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                   help="an input that cannot be read: raise stops the job naming it (default); skip leaves it out "
                        "and lists it in OUTPUT/_errors.jsonl")
    p.add_argument("--decode", choices=["actors", "tasks"], default="actors",
                   help="where images are decoded and tensorized: in the workers that evaluate (default) or apart, "
                        "before them (Ray Data's tasks; on the local engine, processes of their own)")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="no progress bar (there is one only when stderr is a terminal)")
    from . import _cli
    _cli.add_parsers(sub)
    return parser


def _one_line_warnings(command: str):
    """A warnings.showwarning that prints `mlrt COMMAND: warning: message` (one line, no
    source line), as the command's errors are printed."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"{command}: warning: {text}", file=file or sys.stderr)
    return show


def main(argv: list[str] | None = None) -> int:
    import warnings
    args = _parser().parse_args(argv)
    command = f"mlrt {args.command}" if args.command else "mlrt"
    if args.command == "runtime":
        command += f" {args.action}"
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warnings(command)
        try:
            return _dispatch(args)
        except KeyboardInterrupt:
            print(f"{command}: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - the CLI's contract: one line, status 2, never a traceback
            from ._errors import MlrtError
            text = " ".join(str(exc).split()) or "(no message)"
            if not isinstance(exc, (MlrtError, OSError, ValueError)):
                text = f"{type(exc).__name__}: {text}"
            print(f"{command}: {text}", file=sys.stderr)
            return 2


def _dispatch(args) -> int:
    from . import _cli
    if args.command in ("info", "run", "bench", "optimize"):
        return _cli.command(args)
    if args.command == "batch":
        return _cli.batch_command(args)
    if args.command == "profile":
        from ._profile import profile_command
        return profile_command(args)
    if args.command == "runtime":
        return runtime_command(args)
    print(info())
    if args.ops:
        from . import native
        for k in native.kernel_table():
            until = "" if k["until"] >= 2**31 - 1 else str(k["until"])
            print(f"  {k['domain'] or 'ai.onnx'}::{k['op_type']} opset {k['since']}-{until}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
