"""What loading a runtime keeps in the user's cache folder, so that a process start
does not repeat work whose inputs have not changed ($XDG_CACHE_HOME/mlrt/runtime,
default ~/.cache/mlrt/runtime; nothing is kept where that cannot be written).

- `DigestCache`: the sha256 of runtime files, by path and stat stamps.  A file is
  hashed again when its inode, size, mtime or ctime changed (ctime cannot be set
  back), and a file changed in the last few seconds is not remembered at all (a
  second change within the clock's resolution could leave every stamp as it was).
- `declarations(text)`: cffi's parsed form of the C declarations, keyed by their text
  and cffi's version.  cffi parses C with pycparser, about 0.1 s for mlrt's headers;
  its own "out-of-line ABI mode" writes the parsed form as a Python module of
  literals, which is read back here as literals (never run) into `_cffi_backend.FFI`.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import time
from pathlib import Path

RECENT_NS = 5_000_000_000  # files changed more recently than this are hashed every time


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlrt" / "runtime"


def _write_atomically(path: Path, text: str) -> None:
    """Write text to path so no reader sees half of it; quietly nothing if it cannot."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(text)
        os.replace(partial, path)
    except OSError:
        pass


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class DigestCache:
    """sha256 of files, remembered across processes while the files stay as they were."""

    def __init__(self):
        self.path = cache_dir() / "digests.json"
        try:
            entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            entries = {}
        self.entries = entries if isinstance(entries, dict) else {}
        self.changed = False

    def sha256(self, path: Path) -> str:
        st = os.stat(path)
        stamps = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        key = os.path.abspath(path)
        known = self.entries.get(key)
        if isinstance(known, list) and len(known) == 2 and known[0] == stamps and isinstance(known[1], str):
            return known[1]
        digest = sha256_file(path)
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RECENT_NS:
            self.entries[key] = [stamps, digest]
            self.changed = True
        return digest

    def save(self) -> None:
        if self.changed:  # (files that are gone are forgotten)
            entries = {k: v for k, v in self.entries.items() if os.path.exists(k)}
            _write_atomically(self.path, json.dumps(entries))


def declarations(text: str):
    """A cffi FFI holding the C declarations `text` (cffi.CDefError if they are not C
    cffi takes), parsed once and then read from the cache.  Either way it is the FFI
    of cffi's out-of-line ABI mode, so every process uses the same kind."""
    import cffi

    key = hashlib.sha256(f"{cffi.__version__}\n{text}".encode()).hexdigest()
    path = cache_dir() / f"cdef-{key}.py"
    try:
        checksum, body = path.read_text().split("\n", 1)
        if checksum == "# " + hashlib.sha256(body.encode()).hexdigest():  # the whole file, as written
            return _ffi_from(body)
    except (OSError, ValueError, SyntaxError, TypeError):
        pass  # not kept, or not usable: parsed again
    from cffi.recompiler import make_py_source
    parsed = cffi.FFI()
    parsed.cdef(text)
    emitted = io.StringIO()
    make_py_source(parsed, "_mlrt_cdef", emitted)  # (ABI mode: no C compiler involved)
    body = emitted.getvalue()
    _write_atomically(path, "# " + hashlib.sha256(body.encode()).hexdigest() + "\n" + body)
    return _ffi_from(body)


def _ffi_from(source: str):
    """The FFI that a module cffi emitted makes (`ffi = _cffi_backend.FFI(name, ...)`),
    made here from the call's arguments, every one a literal."""
    import _cffi_backend

    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            return _cffi_backend.FFI(ast.literal_eval(call.args[0]),
                                     **{k.arg: ast.literal_eval(k.value) for k in call.keywords})
    raise ValueError("no FFI call in the cached declarations")
