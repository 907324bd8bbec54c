"""Choosing the OpenCL device: MLRT_OPENCL_DEVICE by type, index or name, GPUs first,
and devices whose compiler fails the probe passed over with the reason kept."""

import pytest

from mlrt._errors import DeviceError
from mlrt.native.opencl import _device, _drivers
from opencl_check import opencl_device


@pytest.fixture
def fresh(monkeypatch):
    """A new device choice for the test (the process's own is restored after it)."""
    opencl_device()
    monkeypatch.setattr(_device, "_chosen", None)
    monkeypatch.setattr(_device, "_failures", [])
    return monkeypatch


def test_by_type_and_name(fresh):
    fresh.setenv("MLRT_OPENCL_DEVICE", "cpu")
    dev = _device.default_device()
    assert not dev.is_gpu
    fresh.setattr(_device, "_chosen", None)
    fresh.setenv("MLRT_OPENCL_DEVICE", dev.name[:6])
    assert _device.default_device().name.startswith(dev.name[:6])


def test_by_index(fresh):
    fresh.setenv("MLRT_OPENCL_DEVICE", "0:0")
    first = _drivers.cl.get_platforms()[0].get_devices()[0]
    try:
        dev = _device.default_device()
    except DeviceError as exc:  # platform 0 may be a driver that cannot compile here
        assert first.name.strip() in str(exc)
    else:
        assert dev.cl_device == first


def test_no_match_names_the_devices(fresh):
    fresh.setenv("MLRT_OPENCL_DEVICE", "no-such-device")
    with pytest.raises(DeviceError, match="matches no OpenCL device; devices: .+"):
        _device.default_device()


def test_failing_probe_is_passed_over(fresh):
    """A device whose compiler fails (as PoCL 3.0 does on CPUs newer than its LLVM) is
    skipped with its reason; the next device is used."""
    fresh.delenv("MLRT_OPENCL_DEVICE", raising=False)
    real_probe = _device.Device.probe
    calls = []

    def probe(self):
        calls.append(self.name)
        if len(calls) == 1:
            raise DeviceError("error: unknown target CPU 'generic' (injected)")
        real_probe(self)

    fresh.setattr(_device.Device, "probe", probe)
    try:
        dev = _device.default_device()
    except DeviceError as exc:  # every other device failed its real probe too
        assert "unknown target CPU 'generic' (injected)" in str(exc)
        return
    assert dev.name == calls[-1] and len(calls) >= 2
    assert "unknown target CPU 'generic' (injected)" in _device.passed_over()[0]
