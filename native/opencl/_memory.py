"""OpenCL device memory: each device's buffer pool, and the tensors that live in it.

Buffers come from a pool per device (pyopencl's MemoryPool over the device's queue):
a buffer given back is kept for a later allocation of its size class, so runs reuse
buffers instead of allocating them.  Allocations are checked against the session's
memory limit (plan/memory.py) and the device's largest allocation first.  A DeviceTensor is a
contiguous tensor in one such buffer; inside an OpenCL partition data never leaves the
device, and `numpy()` is the one way back.
"""

from __future__ import annotations

import numpy as np

from ..._errors import DeviceError
from ..plan.memory import check_size
from ._drivers import cl, cl_tools


class DeviceMemory:
    """The memory of a Device (_device.Device, which calls this __init__ once its queue
    is made): its buffer pool, allocations and uploads."""

    def __init__(self):
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.max_alloc = int(self.cl_device.max_mem_alloc_size)

    def allocate(self, nbytes: int):
        check_size(nbytes, f"OpenCL device {self.name}: a buffer")  # the session's memory limit
        if nbytes > self.max_alloc:
            raise DeviceError(f"OpenCL device {self.name}: a {nbytes:,}-byte buffer is over its "
                              f"{self.max_alloc:,}-byte allocation limit")
        try:
            return self.pool.allocate(max(int(nbytes), 4))
        except Exception as exc:
            raise DeviceError(f"OpenCL device {self.name}: cannot allocate {nbytes:,} bytes ({exc})") from None

    def upload(self, array: np.ndarray, blocking: bool = False) -> "DeviceTensor":
        """A device copy of a host array; non-blocking unless asked (the tensor then
        keeps the host array alive until it dies itself)."""
        a = np.require(array, requirements="C")
        t = DeviceTensor(self.allocate(a.nbytes), a.dtype, a.shape, self)
        if a.nbytes:
            cl.enqueue_copy(self.queue, t.buffer, a, is_blocking=blocking)
        if not blocking:
            t._keep = a
        return t


class DeviceTensor:
    """A tensor in OpenCL device memory: buffer, dtype, shape (contiguous)."""

    __slots__ = ("buffer", "dtype", "shape", "device", "_keep")

    def __init__(self, buffer, dtype, shape, device):
        self.buffer = buffer
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(d) for d in shape)
        self.device = device
        self._keep = None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def numpy(self) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        if out.nbytes:
            try:
                cl.enqueue_copy(self.device.queue, out, self.buffer)
            except Exception as exc:
                raise DeviceError(f"OpenCL device {self.device.name}: reading a result back failed ({exc})") from None
        return out

    def write(self, source) -> None:
        """Copy a same-sized host array or device tensor into this tensor's buffer."""
        nbytes = self.nbytes
        if source.nbytes != nbytes:
            raise DeviceError(f"cannot write {source.nbytes} bytes into a {nbytes}-byte device tensor")
        if not nbytes:
            return
        if isinstance(source, DeviceTensor):
            cl.enqueue_copy(self.device.queue, self.buffer, source.buffer, byte_count=nbytes)
        else:
            cl.enqueue_copy(self.device.queue, self.buffer, np.require(source, requirements="C"))

    def __repr__(self) -> str:
        return f"DeviceTensor({self.dtype.name}{list(self.shape)} on {self.device.name})"
