"""Arrows point down only (docs/layout.md): highlevel -> media -> lowlevel -> native ->
distribution, the runtime never imports onnxruntime, and a layer uses another through
its public face only.

Layers are the folders in LAYER_OF_FOLDER: highlevel, media, lowlevel, native and
distribution (mlrt.<layer>), and package (the root package mlrt: backend, the CLI).  A
layer's public face is what has no "_"-led part in its dotted name: its __init__ and
__all__ (`from ..native import providers`, `from .. import native` then
`native.kernel_table()`), and its modules and subpackages without a leading "_"
(`mlrt.native.load`).  A module of one layer importing `mlrt.<other>._private` (or a
`_name` from one of its modules) fails.  The root package's own modules BASE are below
every layer and no layer's: the error classes (`mlrt.MlrtError` ...), the version and
the lazy-name helper of the layers' __init__ files."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# folder -> the mlrt subpackages it must never import
FORBIDDEN = {
    "distribution": {"native", "lowlevel", "media", "highlevel", "backend"},
    "native": {"lowlevel", "media", "highlevel", "backend"},
    "lowlevel": {"media", "highlevel", "backend"},
    "media": {"highlevel", "backend"},
}
BASE = {"_errors", "_version", "_lazy"}  # mlrt._errors, mlrt._version, mlrt._lazy (package/)
LAYER_OF_FOLDER = {"package": None, "lowlevel": "lowlevel", "highlevel": "highlevel", "media": "media",
                   "native": "native", "distribution": "distribution"}


def imported_layers(path: Path, folder: str) -> set[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    depth_in_pkg = len(path.relative_to(ROOT / folder).parts) - 1  # subfolders below the layer
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "mlrt" and len(parts) > 1:
                    found.add((parts[1], node.lineno))
                if parts[0] == "onnxruntime":
                    found.add(("onnxruntime", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0:
                parts = mod.split(".")
                if parts[0] == "mlrt" and len(parts) > 1:
                    found.add((parts[1], node.lineno))
                if parts[0] == "onnxruntime":
                    found.add(("onnxruntime", node.lineno))
            elif node.level > depth_in_pkg + 1:  # climbs out of the layer into mlrt.<x>
                target = mod.split(".")[0] if mod else None
                names = [target] if target else [a.name for a in node.names]
                for n in names:
                    found.add((n, node.lineno))
    return found


def test_layers_import_downward_only():
    bad = []
    for folder, forbidden in FORBIDDEN.items():
        for path in (ROOT / folder).rglob("*.py"):
            for layer, line in imported_layers(path, folder):
                if layer in forbidden:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports mlrt.{layer}")
    assert not bad, "\n".join(bad)


def test_runtime_never_imports_onnxruntime():
    bad = []
    for folder in LAYER_OF_FOLDER:
        for path in (ROOT / folder).rglob("*.py"):
            for layer, line in imported_layers(path, folder):
                if layer == "onnxruntime":
                    bad.append(f"{path.relative_to(ROOT)}:{line}")
    assert not bad, "\n".join(bad)


def module_parts(path: Path, folder: str) -> tuple[list[str], bool]:
    """The dotted name of `path` (["mlrt", "native", "load"]) and whether it is a package's __init__."""
    parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
    base = ["mlrt"] if folder == "package" else ["mlrt", folder]
    if parts[-1] == "__init__":
        return base + parts[:-1], True
    return base + parts, False


def layer_of(dotted: list[str]) -> str | None:
    if dotted[0] != "mlrt":
        return None
    if len(dotted) > 1 and dotted[1] in FORBIDDEN.keys() | {"highlevel"}:
        return dotted[1]
    if len(dotted) > 1 and dotted[1] in BASE:
        return None  # below every layer
    return "package"


def imported_names(path: Path, folder: str) -> list[tuple[list[str], int]]:
    """Every mlrt name `path` imports, resolved to its dotted parts: a module, or a module
    and the name taken from it."""
    me, is_package = module_parts(path, folder)
    here = me if is_package else me[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name.split("."), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".") if node.level == 0 else \
                here[:len(here) - node.level + 1] + ((node.module or "").split(".") if node.module else [])
            found += [([*base, alias.name], node.lineno) for alias in node.names if alias.name != "*"]
    return [(parts, line) for parts, line in found if parts and parts[0] == "mlrt"]


def test_layers_use_each_other_through_public_faces():
    bad = []
    for folder in LAYER_OF_FOLDER:
        for path in (ROOT / folder).rglob("*.py"):
            mine = layer_of(module_parts(path, folder)[0])
            for parts, line in imported_names(path, folder):
                other = layer_of(parts)
                if other is None or other == mine:
                    continue
                private = [p for p in parts[1:] if p.startswith("_") and not p.startswith("__")]
                if private:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {'.'.join(parts)} ({other}'s {private[0]})")
    assert not bad, "\n".join(sorted(bad))


def test_the_public_face_rule():
    assert layer_of(["mlrt", "native", "_lib"]) == "native" and layer_of(["mlrt", "_errors", "InvalidArgument"]) is None
    assert layer_of(["mlrt", "backend"]) == "package" and layer_of(["mlrt", "_cli"]) == "package"
    names = [p for p, _ in imported_names(ROOT / "lowlevel" / "_session.py", "lowlevel")]
    assert ["mlrt", "native", "load"] in names  # (`from ..native import load as native_load`)
