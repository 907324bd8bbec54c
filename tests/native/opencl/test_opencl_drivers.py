"""OpenCL drivers: Intel's CPU runtime installed by pip (the opencl-cpu extra, which
the test extras include) is registered by mlrt itself, so a fresh machine has a device with no system OpenCL at all; the vendor
folder mlrt makes keeps every driver the loader would have read; and the device
order is GPUs, Intel's CPU runtime, other devices, PoCL."""

import os
import platform
import subprocess
import sys
from types import SimpleNamespace

import pytest

from mlrt.native.opencl import _drivers
from mlrt.native.opencl._device import preference

ON_LINUX_X86 = sys.platform == "linux" and platform.machine() == "x86_64"


@pytest.mark.skipif(not ON_LINUX_X86, reason="opencl-rt (mlrt[opencl-cpu], in the test extras) exists for x86-64 Linux only")
def test_a_device_from_pip_alone(tmp_path):
    """With the system's drivers hidden (OCL_ICD_VENDORS naming an empty folder, as on a
    machine with no OpenCL), a new process still finds a device that builds and runs."""
    assert _drivers.pip_runtimes(), "opencl-rt (in mlrt's test extras) is installed but its libintelocl.so was not found"
    hidden = tmp_path / "no-drivers"
    hidden.mkdir()
    script = ("from mlrt.native.opencl import _device as r\n"
              "d = r.default_device()\n"
              "print(d.cl_device.platform.name.strip(), '|', d.name)\n")
    env = dict(os.environ, OCL_ICD_VENDORS=str(hidden), MLRT_OPENCL_CACHE=str(tmp_path / "cache"))
    env.pop("MLRT_OPENCL_DEVICE", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Intel(R) OpenCL |"), out.stdout


def test_the_vendor_folder_keeps_the_system_drivers(tmp_path, monkeypatch):
    system = tmp_path / "vendors"
    system.mkdir()
    (system / "gpu.icd").write_text("/opt/vendor/libgpu-ocl.so\n")
    (system / "README").write_text("not an icd file")
    runtime = tmp_path / "env" / "lib" / "libintelocl.so"
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "env"))  # a virtual environment's
    monkeypatch.setattr(_drivers, "_registered", None)
    monkeypatch.setattr(_drivers, "pip_runtimes", lambda: [runtime])
    monkeypatch.setenv("OCL_ICD_VENDORS", str(system))
    assert _drivers.register(tmp_path / "cache") == [str(runtime)]
    folder = os.environ["OCL_ICD_VENDORS"]
    assert folder.startswith(str(tmp_path / "env" / "etc" / "mlrt" / "opencl-vendors-"))  # inside the environment
    files = {p: open(os.path.join(folder, p)).read().strip() for p in os.listdir(folder)}
    assert files == {"gpu.icd": "/opt/vendor/libgpu-ocl.so", "mlrt-libintelocl-0.icd": str(runtime)}
    assert _drivers.register(tmp_path / "cache") == [str(runtime)]  # once per process

    # the same content gives the same folder; a runtime already named is not added twice
    monkeypatch.setattr(_drivers, "_registered", None)
    assert _drivers.register(tmp_path / "cache") == []
    assert os.environ["OCL_ICD_VENDORS"] == folder


@pytest.mark.parametrize("prefix, base", [("/proc/no-such-environment", "/usr"),  # read-only venv
                                          (None, None)])  # a system Python: never under its prefix
def test_otherwise_the_cache_folder_is_used(tmp_path, monkeypatch, prefix, base):
    prefix = prefix or str(tmp_path / "usr")
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "base_prefix", base or prefix)
    monkeypatch.setattr(_drivers, "_registered", None)
    monkeypatch.setattr(_drivers, "pip_runtimes", lambda: [tmp_path / "libintelocl.so"])
    monkeypatch.setenv("OCL_ICD_VENDORS", str(tmp_path / "empty"))
    assert _drivers.register(tmp_path / "cache")
    assert os.environ["OCL_ICD_VENDORS"].startswith(str(tmp_path / "cache" / "opencl-vendors-"))
    assert not (tmp_path / "usr").exists()


def _device(kind: str, platform_name: str):
    cl = _drivers.cl
    type_ = cl.device_type.GPU if kind == "gpu" else cl.device_type.CPU
    return SimpleNamespace(type=type_, platform=SimpleNamespace(name=platform_name))


@pytest.mark.skipif(_drivers.cl is None, reason="pyopencl is not importable")
def test_device_preference():
    devices = [_device("cpu", "Portable Computing Language"), _device("cpu", "AMD Accelerated Parallel Processing"),
               _device("cpu", "Intel(R) OpenCL"), _device("gpu", "NVIDIA CUDA")]
    ranked = sorted(devices, key=preference)
    assert [d.platform.name for d in ranked] == ["NVIDIA CUDA", "Intel(R) OpenCL",
                                                 "AMD Accelerated Parallel Processing", "Portable Computing Language"]
