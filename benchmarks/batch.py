"""Batch inference throughput: images per second of mlrt.highlevel.batch.predict on the
local engine and on Ray Data (1 and 2 actors; decoding in the actors or in Ray Data's
tasks), beside a plain in-process loop.

    python benchmarks/batch.py [--images 600] [--batch-size 16] [--size 224] [--breakdown]

The model is MobileNetV2 (benchmarks/models.py, random weights) with a free batch
dimension; the pictures are generated PNGs of 320x240.  Each figure is the whole job
as a user waits for it (reading, decoding, tensorizing, inference, writing Parquet, and
the engine's start-up: worker processes or Ray actors; Ray itself is started once
before, as a cluster is), beside the marginal rate: the same job run over 32 pictures
and over all, (all - 32) / (time of all - time of 32), which leaves the start-up out.
The plain loop is the same job in one process (session, decode, evaluate, one Parquet
file).  The batch issue's acceptance runs `--images 10000`.
Ray runs locally on 127.0.0.1 (mlrt.highlevel.batch.ray_init).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))


def model_with_free_batch(size: int) -> onnx.ModelProto:
    from models import mobilenet_v2
    m, _ = mobilenet_v2("relu6", size)
    for v in (m.graph.input[0], m.graph.output[0]):
        v.type.tensor_type.shape.dim[0].dim_param = "N"
    m.graph.input[0].type.denotation = "IMAGE"
    return m


def write_pictures(folder: Path, n: int) -> list[Path]:
    from PIL import Image
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    paths = []
    for i in range(n):
        base = rng.integers(0, 255, 3)
        pixels = (base + rng.integers(-50, 50, (240, 320, 3))).clip(0, 255).astype(np.uint8)
        paths.append(folder / f"p{i:05d}.png")
        Image.fromarray(pixels).save(paths[-1])
    return paths


def plain_loop(model: Path, paths, batch_size: int, out: Path) -> float:
    """Images per second of the whole job in one process, as a user writes it without an
    engine: decode, evaluate, and the outputs (with their rows and paths) written to one
    Parquet file at the end."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from mlrt.highlevel import LearningModel, LearningModelSession, LearningModelSessionOptions
    from mlrt.media import VideoFrame
    start = time.monotonic()
    session = LearningModelSession(LearningModel.load(model), options=LearningModelSessionOptions(batch_size_override=0))
    probs = []
    for i in range(0, len(paths), batch_size):
        result = session.evaluate_features({"input": [VideoFrame.from_file(p) for p in paths[i:i + batch_size]]})
        probs.append(np.asarray(next(iter(result.outputs.values()))))
    prob = np.concatenate(probs)
    table = pa.table({"row": np.arange(len(paths)), "path": [str(p) for p in paths],
                      "prob": pa.FixedSizeListArray.from_arrays(pa.array(prob.reshape(-1)), prob.shape[1])})
    pq.write_table(table, out)
    return len(paths) / (time.monotonic() - start)


def breakdown(batch, model: Path, paths, out: Path, actors: int, decode: str, batch_size: int) -> None:
    """Where a Ray job's time goes, operator by operator (Ray Data's own stats): the job as
    predict(output=None) builds it, written as predict writes it."""
    from mlrt.highlevel._batch_ray import IO_CPUS
    ds = batch.predict(model, paths, None, engine="ray", actors=actors, decode=decode, batch_size=batch_size)
    start = time.monotonic()
    ds.write_parquet(str(out), ray_remote_args={"num_cpus": IO_CPUS})
    wall = time.monotonic() - start
    print(f"\n-- {actors} actor(s), decode in {decode}: {len(paths)} pictures in {wall:.1f} s; Ray Data's stats:")
    for line in ds.stats().splitlines():
        if line.startswith("Operator") or "* Remote wall time" in line or "* Remote cpu time" in line or \
                "* UDF time" in line or "* Output num rows" in line:
            print("  " + line.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=600)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--breakdown", action="store_true",
                    help="after the table, where a Ray batch's time goes: Ray Data's per-operator stats of each "
                         "decode mode, 2 actors (decode in the actors) and 1 actor (decode in tasks)")
    args = ap.parse_args()
    from mlrt.highlevel import batch
    work = Path(tempfile.mkdtemp(prefix="mlrt_batch_bench_"))
    try:
        model = work / "mobilenet_v2.onnx"
        onnx.save(model_with_free_batch(args.size), model)
        paths = write_pictures(work / "pictures", args.images)
        cores = os.cpu_count() or 1
        rows = [("plain loop, in process", f"{cores} threads",
                 plain_loop(model, paths, args.batch_size, work / "plain.parquet"), None)]
        configs = [("local", 1, "actors"), ("local", 2, "actors")] + \
            ([] if args.skip_ray else [("ray", 1, "actors"), ("ray", 2, "actors"), ("ray", 1, "tasks"),
                                       ("ray", 2, "tasks")])
        if not args.skip_ray:
            import logging
            ray = batch.ray_init(log_to_driver=False, logging_level=logging.WARNING)
            ray.data.DataContext.get_current().enable_progress_bars = False
            logging.getLogger("ray.data").setLevel(logging.WARNING)  # (its progress lines: the table is the output)
        few = 32
        for engine, actors, decode in configs:
            seconds = []
            for n in (few, len(paths)):
                out = work / f"out_{engine}_{actors}_{decode}_{n}"
                seconds.append(batch.predict(model, paths[:n], out, engine=engine, actors=actors, decode=decode,
                                             batch_size=args.batch_size, progress=False).seconds)
            threads = max(1, cores // actors) if engine == "local" else 1
            rows.append((f"{engine} engine, {actors} {'process' if engine == 'local' else 'actor'}"
                         f"{'es' if engine == 'local' and actors > 1 else 's' if actors > 1 else ''}"
                         f"{', decode in tasks' if decode == 'tasks' else ''}",
                         f"{threads} thread{'s' if threads > 1 else ''} each", len(paths) / seconds[1],
                         (len(paths) - few) / (seconds[1] - seconds[0])))
        print(f"\n{args.images} pictures 320x240 -> MobileNetV2 {args.size}x{args.size}, batch {args.batch_size}, "
              f"{cores} cores")
        print(f"{'engine':32} {'threads':18} {'whole job img/s':>16} {'marginal img/s':>15}")
        for name, threads, whole, steady in rows:
            w = f"{whole:.1f}" if whole is not None else "-"
            s = f"{steady:.1f}" if steady is not None else "-"
            print(f"{name:32} {threads:18} {w:>16} {s:>15}")
        if args.breakdown and not args.skip_ray:
            for actors, decode in ((2, "actors"), (1, "tasks")):
                breakdown(batch, model, paths, work / f"stats_{decode}", actors, decode, args.batch_size)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if "ray" in sys.modules:
            sys.modules["ray"].shutdown()


if __name__ == "__main__":
    main()
