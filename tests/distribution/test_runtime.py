"""Runtimes: bundled and system-installed, side by side, selected per process,
and refused with a clear RuntimeLoadError (never a crash) when broken.

Selection is per process, so every load runs in a subprocess.  The second version
is the first copied with another version string in its manifest (no recompile)."""

import json
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

import mlrt.distribution as dist
from mlrt import InvalidArgument, RuntimeLoadError
from mlrt.__main__ import main as cli
from mlrt.distribution._runtime import _BUNDLED_DIR, _expected_abi, sha256_file

ABI = _expected_abi()  # the C header's MLRT_ABI_VERSION

# prints kind, version, path, abi of the selected runtime, then runs a Relu model
CHILD = r"""
import json, sys
import numpy as np
from onnx import TensorProto, helper
import mlrt.distribution as dist
import mlrt.lowlevel as ml
if len(sys.argv) > 1:
    dist.select_runtime(sys.argv[1], prefix=sys.argv[2] if len(sys.argv) > 2 else None)
node = helper.make_node("Relu", ["x"], ["y"])
graph = helper.make_graph([node], "relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
y, = ml.InferenceSession(model.SerializeToString()).run(None, {"x": np.array([-1, 0, 2], np.float32)})
rt = dist.current_runtime()
print(json.dumps({"kind": rt.kind, "version": rt.version, "path": str(rt.path), "abi": rt.abi,
                  "opsets": rt.opsets, "providers": list(rt.providers), "y": y.tolist()}))
"""


def run_child(env_runtime=None, prefix=None, args=()):
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("MLRT_RUNTIME", "MLRT_SYSTEM_PREFIX")}
    if env_runtime is not None:
        env["MLRT_RUNTIME"] = env_runtime
    if prefix is not None:
        env["MLRT_SYSTEM_PREFIX"] = str(prefix)
    return subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def ok(proc):
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["y"] == [0.0, 0.0, 2.0]
    return data


def refused(proc, *words):
    assert proc.returncode == 1, (proc.returncode, proc.stderr)   # an exception, not a signal
    assert "RuntimeLoadError" in proc.stderr, proc.stderr
    for w in words:
        assert w in proc.stderr, proc.stderr


def make_version(prefix, version, base="0.1.0"):
    """A second installed runtime: a copy of base with another version string."""
    root = prefix / "lib" / "mlrt"
    shutil.copytree(root / base, root / version)
    manifest = json.loads((root / version / "manifest.json").read_text())
    manifest["version"] = version
    manifest["files"] = {n: sha256_file(root / version / n) for n in manifest["files"]}
    (root / version / "manifest.json").write_text(json.dumps(manifest))
    return root / version


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    assert cli(["runtime", "install", "--prefix", str(p)]) == 0
    return p


@pytest.fixture
def own_prefix(tmp_path, prefix):
    """A private copy of the installed prefix, for tests that break or change it."""
    p = tmp_path / "prefix"
    shutil.copytree(prefix, p, symlinks=True)
    return p


def test_bundled_manifest():
    m = dist.read_manifest(_BUNDLED_DIR)
    assert m is not None, "native/manifest.json missing: rebuild with python native/_build.py"
    assert m["abi"] == ABI and m["providers"] == ["CPUExecutionProvider", "OpenCLExecutionProvider"]
    assert {"opencl/_common.cl", "opencl/conv.cl", "opencl/gemm.cl"} <= set(m["files"])
    assert {"libmlrt_core.so", "libscipy_openblas.so", "include/mlrt.h"} <= set(m["files"])
    assert any(n.startswith("kernels/") and n.endswith(".h") for n in m["files"])
    assert m["opsets"]["ai.onnx"]["min"] == 1 and m["opsets"]["ai.onnx"]["max"] >= 13
    assert "-O3" in m["build"]


def test_install_layout(prefix):
    version = dist.read_manifest(_BUNDLED_DIR)["version"]
    folder = prefix / "lib" / "mlrt" / version
    assert dist.check_folder(folder, "system")["version"] == version
    assert (prefix / "include" / "mlrt" / "mlrt.h").read_bytes() == (_BUNDLED_DIR / "include" / "mlrt.h").read_bytes()
    pc = (prefix / "lib" / "pkgconfig" / f"mlrt-{version}.pc").read_text()
    assert "-lmlrt_core" in pc and f"Version: {version}" in pc
    assert (prefix / "lib" / "pkgconfig" / "mlrt.pc").exists()


def test_select_each_way(prefix):
    bundled = ok(run_child("bundled", prefix))
    assert bundled["kind"] == "bundled" and bundled["path"] == str(_BUNDLED_DIR / "libmlrt_core.so")
    system = ok(run_child("system", prefix))
    assert system["kind"] == "system" and system["path"].startswith(str(prefix))
    assert system["opsets"]["ai.onnx"]["max"] >= 13 and system["providers"] == ["CPUExecutionProvider", "OpenCLExecutionProvider"]
    assert ok(run_child("auto", prefix))["kind"] == "system"
    path = ok(run_child(str(prefix / "lib" / "mlrt" / "0.1.0")))
    assert path["kind"] == "path"
    via_api = ok(run_child(None, None, args=("system", str(prefix))))   # select_runtime(..., prefix=...)
    assert via_api["kind"] == "system" and via_api["path"] == system["path"]


def test_auto_without_system_runtime_is_bundled(tmp_path):
    assert ok(run_child("auto", tmp_path))["kind"] == "bundled"
    refused(run_child("system", tmp_path), "none installed", str(tmp_path))


def test_side_by_side(own_prefix, capsys):
    make_version(own_prefix, "0.10.0")
    assert [r.version for r in dist.installed(own_prefix)] == ["0.10.0", "0.1.0"]   # numeric order
    assert all(r.ok for r in dist.installed(own_prefix))
    newest = ok(run_child("system", own_prefix))
    assert newest["version"] == "0.10.0" and "/0.10.0/" in newest["path"]
    older = ok(run_child("system:0.1.0", own_prefix))
    assert older["version"] == "0.1.0" and "/0.1.0/" in older["path"]
    assert cli(["runtime", "list", "--prefix", str(own_prefix)]) == 0
    out = capsys.readouterr().out
    assert f"0.10.0  ABI {ABI}  (newest)" in out and f"0.1.0  ABI {ABI}" in out
    assert cli(["runtime", "uninstall", "0.10.0", "--prefix", str(own_prefix)]) == 0
    assert [r.version for r in dist.installed(own_prefix)] == ["0.1.0"]
    assert "Version: 0.1.0" in (own_prefix / "lib" / "pkgconfig" / "mlrt.pc").read_text()
    assert cli(["runtime", "uninstall", "9.9.9", "--prefix", str(own_prefix)]) == 2


def test_truncated_library_refused(own_prefix, capsys):
    lib = own_prefix / "lib" / "mlrt" / "0.1.0" / "libmlrt_core.so"
    lib.write_bytes(lib.read_bytes()[:4096])
    refused(run_child("system", own_prefix), "checksum mismatch", str(lib))
    assert ok(run_child("auto", own_prefix))["kind"] == "bundled"    # auto tries the next candidate
    assert cli(["runtime", "list", "--prefix", str(own_prefix)]) == 0
    assert "BROKEN" in capsys.readouterr().out


def test_truncated_library_without_manifest_is_an_error_not_a_crash(tmp_path):
    folder = dist.bundle(tmp_path / "app" / "runtime")
    (folder / "manifest.json").unlink()
    lib = folder / "libmlrt_core.so"
    lib.write_bytes(lib.read_bytes()[:4096])
    refused(run_child(str(folder)), "cannot be loaded", str(lib))


def test_wrong_abi_refused(own_prefix):
    folder = own_prefix / "lib" / "mlrt" / "0.1.0"
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["abi"] = 999
    (folder / "manifest.json").write_text(json.dumps(manifest))
    refused(run_child("system", own_prefix), "ABI 999", f"needs ABI {ABI}", str(folder))
    with pytest.raises(RuntimeLoadError, match="ABI 999"):
        dist.check_folder(folder, "system")


def test_bad_checksum_refused(own_prefix):
    folder = own_prefix / "lib" / "mlrt" / "0.1.0"
    with open(folder / "include" / "mlrt.h", "a") as f:
        f.write("/* changed */\n")
    refused(run_child("system", own_prefix), "checksum mismatch", "mlrt.h")


def test_missing_library_refused(own_prefix):
    (own_prefix / "lib" / "mlrt" / "0.1.0" / "libmlrt_core.so").unlink()
    refused(run_child("system", own_prefix), "no library")


def test_bundle_into_app_folder(tmp_path):
    dest = tmp_path / "app" / "mlrt-runtime"
    assert cli(["runtime", "bundle", str(dest)]) == 0
    assert dist.check_folder(dest, "path")["files"] == dist.read_manifest(_BUNDLED_DIR)["files"]
    assert ok(run_child(str(dest)))["path"] == str(dest / "libmlrt_core.so")


def test_select_after_load_must_match():
    rt = dist.current_runtime()                       # this test process: the bundled runtime
    assert rt.kind == "bundled"
    assert dist.select_runtime("bundled") is rt
    with pytest.raises(RuntimeLoadError, match="already in use"):
        dist.select_runtime(str(_BUNDLED_DIR.parent / "elsewhere"))


def test_c_program_links_installed_runtime(prefix, tmp_path):
    cc, pkg = shutil.which("cc") or shutil.which("gcc"), shutil.which("pkg-config")
    if not cc or not pkg:
        pytest.skip("needs a C compiler and pkg-config")
    import os
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run([pkg, "--cflags", "--libs", "mlrt"], env=env, capture_output=True, text=True,
                           check=True).stdout.split()
    exe = tmp_path / "add"
    main_c = Path(__file__).resolve().parents[2] / "samples" / "c_api" / "main.c"  # the source checkout
    subprocess.run([cc, "-Wall", "-Werror", str(main_c), *flags, "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Add: 11 22 33 44" in out.stdout


def test_model_newer_than_the_runtime_is_refused_with_the_way_out(own_prefix):
    """A system runtime frozen at ai.onnx opset 11 refuses the opset-14 model, naming
    itself and pointing at the bundled runtime; the bundled one runs it."""
    folder = make_version(own_prefix, "0.0.5")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["opsets"]["ai.onnx"]["max"] = 11
    (folder / "manifest.json").write_text(json.dumps(manifest))
    proc = run_child("system:0.0.5", own_prefix)
    assert proc.returncode == 1, proc.stderr
    for words in ("NotImplemented", "ai.onnx opset 14", "system runtime 0.0.5", "supports opsets 1-11",
                  "MLRT_RUNTIME=bundled"):
        assert words in proc.stderr, proc.stderr
    assert ok(run_child("bundled"))["kind"] == "bundled"


def test_unwritable_prefix_is_a_named_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(InvalidArgument, match="runtime install: .*a-file"):
        dist.install(prefix=blocker / "prefix")
    assert cli(["runtime", "install", "--prefix", str(blocker / "prefix")]) == 2


def test_system_runtime_serves_its_own_opencl_kernels(own_prefix):
    """The OpenCL sources are part of the runtime: a system runtime's provider reads the
    .cl files installed beside its library, and a changed one is refused at load."""
    pytest.importorskip("mlrt.native.opencl", reason="the OpenCL provider is not installed here")
    import os
    folder = own_prefix / "lib" / "mlrt" / "0.1.0"
    assert (folder / "opencl" / "conv.cl").read_bytes() == (_BUNDLED_DIR / "opencl" / "conv.cl").read_bytes()
    env = dict(os.environ, MLRT_RUNTIME="system", MLRT_SYSTEM_PREFIX=str(own_prefix))
    code = ("from mlrt.native.opencl import _programs; print(_programs.source_dir())\n"
            "for family in ('conv', 'tensorize'):  # their headers: beside them, and the C kernels'\n"
            "    print(any(line.startswith('#include') for line in _programs.program_source(_programs.source_dir(), family).splitlines()))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(folder / "opencl"), "False", "False"], out.stdout
    (folder / "opencl" / "conv.cl").write_text("__kernel void changed(void) {}\n")
    refused(run_child("system", own_prefix), "checksum mismatch", "conv.cl")
