"""Arrows point down only (docs/layout.md): highlevel -> media -> lowlevel -> native ->
distribution, and the runtime never imports onnxruntime."""

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
