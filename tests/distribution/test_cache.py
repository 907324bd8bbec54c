"""What runtime loading remembers between processes (distribution/_cache.py): digests of
unchanged files, and cffi's parsed headers -- never at the price of a changed runtime
being loaded."""

import json
import os
import time

import pytest

import mlrt.distribution as dist
from mlrt import RuntimeLoadError
from mlrt.distribution import _cache
from mlrt.distribution._runtime import _BUNDLED_DIR, cdef_text

TICK = 0.05  # longer than the file system clock's resolution


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(_cache, "RECENT_NS", int(TICK * 1e9 / 2))  # (the tests cannot wait seconds)
    return tmp_path / "cache" / "mlrt" / "runtime"


@pytest.fixture
def hashed(monkeypatch):
    """The files sha256_file reads."""
    read = []
    real = _cache.sha256_file
    monkeypatch.setattr(_cache, "sha256_file", lambda path: read.append(path) or real(path))
    return read


def test_unchanged_files_are_not_read_again(cache, hashed, tmp_path):
    folder = dist.bundle(tmp_path / "runtime")
    time.sleep(TICK)
    hashed.clear()  # (bundle checked the source folder)
    dist.check_folder(folder, "path")
    assert len(hashed) == len(dist.read_manifest(folder)["files"])
    hashed.clear()
    dist.check_folder(folder, "path")
    assert hashed == []


def test_a_changed_file_is_refused_even_with_its_size_and_mtime_put_back(cache, tmp_path):
    folder = dist.bundle(tmp_path / "runtime")
    header = folder / "include" / "mlrt.h"
    time.sleep(TICK)
    dist.check_folder(folder, "path")  # digests remembered
    before = header.stat()
    time.sleep(TICK)
    text = header.read_bytes()
    header.write_bytes(text[:-1] + (b" " if text[-1:] != b" " else b"\n"))  # same size
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(RuntimeLoadError, match="checksum mismatch"):
        dist.check_folder(folder, "path")


def test_recently_changed_files_are_not_remembered(cache, hashed, tmp_path, monkeypatch):
    monkeypatch.setattr(_cache, "RECENT_NS", 3600 * 10**9)
    folder = dist.bundle(tmp_path / "runtime")
    dist.check_folder(folder, "path")
    hashed.clear()
    dist.check_folder(folder, "path")
    assert len(hashed) == len(dist.read_manifest(folder)["files"])
    kept = json.loads((cache / "digests.json").read_text()) if (cache / "digests.json").exists() else {}
    assert not any(k.startswith(str(folder)) for k in kept)


def test_parsed_headers_are_kept_and_a_damaged_copy_is_not_used(cache):
    text = cdef_text(_BUNDLED_DIR)
    first = _cache.declarations(text)
    [kept] = cache.glob("cdef-*.py")
    again = _cache.declarations(text)
    for ffi in (first, again):
        assert ffi.sizeof("mlrt_tensor") == first.sizeof("mlrt_tensor") > 0
    kept.write_text(kept.read_text().replace("_types", "_typez", 1))
    damaged = _cache.declarations(text)  # parsed again, and the copy rewritten
    assert damaged.sizeof("mlrt_tensor") == first.sizeof("mlrt_tensor")
    assert "_typez" not in kept.read_text()
