"""The C ABI of libmlrt_core, called directly through cffi: version, kernel table,
plan create/run/destroy, thread pool, last-error, and refusal of bad records."""

import numpy as np
import pytest

from mlrt.native import _lib


@pytest.fixture(scope="module")
def capi():
    return _lib.ffi(), _lib.lib()


def test_version_and_abi(capi):
    ffi, lib = capi
    assert lib.mlrt_abi_version() == 2
    assert ffi.string(lib.mlrt_version()).decode().count(".") == 2
    assert b"-O3" in ffi.string(lib.mlrt_build_info())
    assert b"-march=native" not in ffi.string(lib.mlrt_build_info())


def test_kernel_table_is_sorted_and_findable(capi):
    ffi, lib = capi
    rows = _lib.kernel_table()
    keys = [(r["domain"], r["op_type"], r["since"]) for r in rows]
    assert keys == sorted(keys)
    k = lib.mlrt_kernel_find(b"", b"Add", 17, 1)
    assert k >= 0 and ffi.string(lib.mlrt_kernel_get(k).op_type) == b"Add"
    assert lib.mlrt_kernel_find(b"ai.onnx", b"Add", 17, 1) == k
    assert lib.mlrt_kernel_find(b"", b"Add", 17, 8) == -1  # no string Add
    assert lib.mlrt_kernel_find(b"", b"NoSuchOp", 17, 1) == -1
    assert lib.mlrt_kernel_get(-1) == ffi.NULL and lib.mlrt_kernel_get(10**6) == ffi.NULL


def _tensor(ffi, a: np.ndarray):
    t = ffi.new("mlrt_tensor *")
    _lib.fill_tensor(t, a.dtype, a.shape, None, _lib.array_pointer(a))
    return t


def test_kernel_run_and_last_error(capi):
    ffi, lib = capi
    a = np.arange(6, dtype=np.float32)
    b = np.ones(6, np.float32)
    y = np.empty(6, np.float32)
    ins = ffi.new("mlrt_tensor[2]")
    ins[0], ins[1] = _tensor(ffi, a)[0], _tensor(ffi, b)[0]
    k = lib.mlrt_kernel_find(b"", b"Add", 17, 1)
    assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 2, _tensor(ffi, y), 1, ffi.NULL, 0) == 0
    np.testing.assert_array_equal(y, a + 1)
    short = np.empty(5, np.float32)  # wrong output shape: refused, nothing written out of bounds
    assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 2, _tensor(ffi, short), 1, ffi.NULL, 0) == 1
    assert b"shape" in ffi.string(lib.mlrt_last_error())
    assert lib.mlrt_kernel_run(-5, ffi.NULL, ins, 2, _tensor(ffi, y), 1, ffi.NULL, 0) == 1
    bad = _tensor(ffi, y)
    bad.rank = 99
    assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 2, bad, 1, ffi.NULL, 0) == 1


def _record(ffi, kernel, n, slots_in, slot_out, keep, name=b"n"):
    ins = ffi.new("mlrt_tensor[2]")
    outs = ffi.new("mlrt_tensor[1]")
    sin = ffi.new("mlrt_slot[2]")
    sout = ffi.new("mlrt_slot[1]")
    for i in range(2):
        _lib.fill_tensor(ins[i], np.float32, (n,))
        sin[i].base, sin[i].offset = slots_in[i]
    _lib.fill_tensor(outs[0], np.float32, (n,))
    sout[0].base, sout[0].offset = slot_out
    cname = ffi.new("char[]", name)
    keep += [ins, outs, sin, sout, cname]
    return dict(kernel=kernel, n_inputs=2, n_outputs=1, inputs=ins, input_slots=sin, outputs=outs,
                output_slots=sout, params=ffi.NULL, params_size=0, name=cname)


def test_plan_runs_chain_through_arena(capi):
    """y = (a + b) * b, with a + b living in the arena."""
    ffi, lib = capi
    n = 1000
    add = lib.mlrt_kernel_find(b"", b"Add", 17, 1)
    mul = lib.mlrt_kernel_find(b"", b"Mul", 17, 1)
    keep = []
    recs = ffi.new("mlrt_node_record[2]")
    for r, fields in zip(recs, [_record(ffi, add, n, [(1, 0), (2, 0)], (0, 0), keep),
                                _record(ffi, mul, n, [(0, 0), (2, 0)], (3, 0), keep)]):
        for k, v in fields.items():
            setattr(r, k, v)
    plan = lib.mlrt_plan_create(recs, 2, 3, 4 * n)
    assert plan != ffi.NULL
    del keep  # the plan holds deep copies
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2, np.float32)
    y = np.empty(n, np.float32)
    ext = ffi.new("void *[3]", [_lib.array_pointer(a), _lib.array_pointer(b), _lib.array_pointer(y)])
    pool = lib.mlrt_threadpool_create(3)
    assert lib.mlrt_threadpool_size(pool) == 3
    assert lib.mlrt_plan_run(plan, pool, ext, ffi.NULL) == 0
    np.testing.assert_array_equal(y, (a + b) * b)
    assert lib.mlrt_plan_arena_bytes(plan) == 4 * n
    lib.mlrt_threadpool_destroy(pool)
    lib.mlrt_plan_destroy(plan)


@pytest.mark.parametrize("slot_out, arena", [((0, 8), 4 * 10), ((7, 0), 40), ((0, -4), 40)])
def test_plan_refuses_bad_slots(capi, slot_out, arena):
    ffi, lib = capi
    add = lib.mlrt_kernel_find(b"", b"Add", 17, 1)
    keep = []
    recs = ffi.new("mlrt_node_record[1]")
    for k, v in _record(ffi, add, 10, [(1, 0), (2, 0)], slot_out, keep).items():
        setattr(recs[0], k, v)
    assert lib.mlrt_plan_create(recs, 1, 3, arena) == ffi.NULL
    assert b"bad tensor or slot" in ffi.string(lib.mlrt_last_error())


def test_plan_error_names_node(capi):
    ffi, lib = capi
    add = lib.mlrt_kernel_find(b"", b"Add", 17, 1)
    keep = []
    recs = ffi.new("mlrt_node_record[1]")
    fields = _record(ffi, add, 4, [(1, 0), (2, 0)], (3, 0), keep, name=b"my_add")
    fields["inputs"][1].dtype = 11  # double vs float: the kernel refuses
    for k, v in fields.items():
        setattr(recs[0], k, v)
    plan = lib.mlrt_plan_create(recs, 1, 3, 0)
    a = np.zeros(4, np.float32)
    ext = ffi.new("void *[3]", [_lib.array_pointer(a)] * 3)
    assert lib.mlrt_plan_run(plan, ffi.NULL, ext, ffi.NULL) == 1
    assert b"node 'my_add' (Add)" in ffi.string(lib.mlrt_last_error())
    lib.mlrt_plan_destroy(plan)


def test_threadpool_many_sizes(capi):
    ffi, lib = capi
    for n in (0, 1, 2, 7):
        pool = lib.mlrt_threadpool_create(n)
        assert lib.mlrt_threadpool_size(pool) == max(n, 1)
        lib.mlrt_threadpool_destroy(pool)


def test_one_maximum_rank():
    """MAX_RANK (Python, and the OpenCL programs' build option) is the C header's MLRT_MAX_RANK."""
    from mlrt.native import _lib
    assert _lib.MAX_RANK == _lib.lib().MLRT_MAX_RANK
    assert _lib.ffi().sizeof("mlrt_tensor") >= 2 * 8 * _lib.MAX_RANK
