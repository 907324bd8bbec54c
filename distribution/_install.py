"""Copying runtimes: into an app's folder (bundle) or under a system prefix
(install, side by side per version), listing and removing installed ones.

System layout under PREFIX:
    lib/mlrt/<version>/           the runtime folder (library, BLAS, include/,
                                  kernels/*.h, opencl/*.cl and *.h, manifest.json)
    lib/pkgconfig/mlrt-<version>.pc
    lib/pkgconfig/mlrt.pc         the newest installed version
    include/mlrt/mlrt.h           the newest version's C header (+ kernels/*.h)
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .._errors import InvalidArgument, RuntimeLoadError
from ._runtime import (_BUNDLED_DIR, LIBRARY_NAME, MANIFEST_NAME, check_folder, read_manifest, system_prefix,
                       system_root, system_versions)


def bundled_folder() -> Path:
    return _BUNDLED_DIR


def _source(source=None) -> tuple[Path, dict]:
    folder = Path(source) if source else _BUNDLED_DIR
    if folder.is_file():
        folder = folder.parent
    kind = "bundled" if folder.resolve() == _BUNDLED_DIR.resolve() else "path"
    manifest = check_folder(folder, kind, require_manifest=True)
    return folder, manifest


def _copy_runtime(src: Path, manifest: dict, dest: Path) -> None:
    """Copy the manifest's files and the manifest into dest, atomically (a sibling
    temporary folder renamed into place)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for name in [*manifest["files"], MANIFEST_NAME]:
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / name, target)
    if dest.exists():
        old = dest.parent / f".{dest.name}.{os.getpid()}.old"
        os.replace(dest, old)
        os.replace(tmp, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, dest)


def _file_errors_named(fn):
    """A file-system failure (unwritable prefix, disk full, a file where a folder should
    be) comes out as InvalidArgument naming the path, like every other bad input."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            where = exc.filename or (args[0] if args else "")
            raise InvalidArgument(f"runtime {fn.__name__}: {exc.strerror or exc} ({where})") from None
    return wrapper


@_file_errors_named
def bundle(dest, source=None) -> Path:
    """Copy a runtime (default: the bundled one) into dest, an app's folder; the app
    then selects it with MLRT_RUNTIME=<dest> or select_runtime(<dest>)."""
    src, manifest = _source(source)
    dest = Path(dest).expanduser().resolve()
    if dest == src.resolve():
        raise InvalidArgument(f"{dest} is the source runtime itself")
    if dest.exists() and any(dest.iterdir()) and not (dest / MANIFEST_NAME).exists():
        raise InvalidArgument(f"{dest} exists and is not a runtime folder; choose an empty or new folder")
    _copy_runtime(src, manifest, dest)
    return dest


def _pc_text(prefix: Path, version: str, abi: int, libdir: str, includedir: str, extra_cflags: str) -> str:
    return (f"prefix={prefix}\n"
            f"libdir={libdir}\n"
            f"includedir={includedir}\n\n"
            "Name: mlrt\n"
            f"Description: mlrt native ONNX runtime (C ABI {abi})\n"
            f"Version: {version}\n"
            f"Cflags: -I${{includedir}}{extra_cflags}\n"
            "Libs: -L${libdir} -Wl,-rpath,${libdir} -lmlrt_core\n")


def _refresh_newest(prefix: Path) -> str | None:
    """Point mlrt.pc and include/mlrt/ at the newest installed version."""
    pc_dir = prefix / "lib" / "pkgconfig"
    inc = prefix / "include" / "mlrt"
    newest = next((d for d in system_versions(prefix) if (d / MANIFEST_NAME).exists()), None)
    shutil.rmtree(inc, ignore_errors=True)
    if newest is None:
        (pc_dir / "mlrt.pc").unlink(missing_ok=True)
        return None
    manifest = read_manifest(newest, "system") or {}
    (inc / "kernels").mkdir(parents=True, exist_ok=True)
    shutil.copy2(newest / "include" / "mlrt.h", inc / "mlrt.h")
    for h in (newest / "kernels").glob("*.h"):
        shutil.copy2(h, inc / "kernels" / h.name)
    pc_dir.mkdir(parents=True, exist_ok=True)
    (pc_dir / "mlrt.pc").write_text(_pc_text(prefix, newest.name, manifest.get("abi", 0),
                                             f"${{prefix}}/lib/mlrt/{newest.name}", "${prefix}/include/mlrt", ""))
    return newest.name


@_file_errors_named
def install(prefix=None, source=None) -> Path:
    """Install a runtime (default: the bundled one) as PREFIX/lib/mlrt/<version>/,
    with its pkg-config file; returns the runtime folder."""
    prefix = system_prefix(prefix).resolve()
    src, manifest = _source(source)
    version = str(manifest["version"])
    if not version or "/" in version or version.startswith("."):
        raise InvalidArgument(f"runtime at {src} has an unusable version {version!r} in its manifest")
    dest = prefix / "lib" / "mlrt" / version
    _copy_runtime(src, manifest, dest)
    check_folder(dest, "system")   # the copy is sound
    pc_dir = prefix / "lib" / "pkgconfig"
    pc_dir.mkdir(parents=True, exist_ok=True)
    (pc_dir / f"mlrt-{version}.pc").write_text(_pc_text(
        prefix, version, manifest["abi"], f"${{prefix}}/lib/mlrt/{version}", "${libdir}/include", " -I${libdir}"))
    _refresh_newest(prefix)
    return dest


@_file_errors_named
def uninstall(version: str, prefix=None) -> Path:
    """Remove PREFIX/lib/mlrt/<version>/ and its pkg-config file."""
    prefix = system_prefix(prefix).resolve()
    folder = prefix / "lib" / "mlrt" / version
    if not version or "/" in version or version.startswith(".") or not folder.is_dir():
        raise InvalidArgument(f"no runtime {version!r} installed under {prefix / 'lib' / 'mlrt'}")
    shutil.rmtree(folder)
    (prefix / "lib" / "pkgconfig" / f"mlrt-{version}.pc").unlink(missing_ok=True)
    _refresh_newest(prefix)
    return folder


@dataclass(frozen=True)
class Installed:
    version: str
    folder: Path
    ok: bool
    problem: str = ""
    abi: int | None = None


def installed(prefix=None) -> list[Installed]:
    """The runtimes under PREFIX/lib/mlrt, newest first, each checked (manifest,
    ABI number, checksums) without being loaded."""
    out = []
    for d in system_versions(prefix):
        try:
            manifest = check_folder(d, "system")
            out.append(Installed(d.name, d, True, abi=manifest.get("abi")))
        except RuntimeLoadError as exc:
            out.append(Installed(d.name, d, False, str(exc)))
    return out


__all__ = ["bundle", "install", "uninstall", "installed", "Installed", "bundled_folder", "system_root", "LIBRARY_NAME"]
