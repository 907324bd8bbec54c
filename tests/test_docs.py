"""Every repository path the docs name exists.

Docs checked: README.md, CONTRIBUTING.md and docs/*.md.

What counts as a path: the text of an inline code span (`...`) or the target of a
markdown link ([...](...)), outside fenced code blocks, when it is one token (no
spaces), is not a URL, and contains "/" or ends in .py .c .h .cl .md or .toml.
Globs (`native/opencl/*.cl`) are kept; spans with "=" (settings) or ending in ")"
(calls) are not paths.

Skipped as not naming repository paths: spans starting with "/", "~", "$", "-" or
"." (absolute, home, variables, options, suffixes such as `.onnx`),
and those whose first segment is a placeholder (`P/lib/mlrt/<version>/`,
`<sys.prefix>/etc/...`), plus the few listed in OUTSIDE with why.

How a path is resolved:
- a link target is read from the doc's own folder, as a markdown viewer reads it;
- a code span with "/" is read from the repository root;
- a code span that is a bare file name (no "/", e.g. `_plan.py` in a list of a
  folder's files) must be the name of some file in the repository;
- a placeholder -- `<...>` anywhere (`test_<op>.py`), or a whole segment in capitals
  with no dot (`NAME`, `P`) -- stands for "*": the path is globbed and must match at
  least one file or folder (`tests/native/ops/test_<op>.py` must match a test file);
- a span ending in "/" must be a folder;
- build outputs (build/, *.egg-info, __pycache__, hidden folders) and anything outside
  the repository (a link to `../shared/DESIGN.md`) do not count.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
EXTENSIONS = (".py", ".c", ".h", ".cl", ".md", ".toml")
SKIP_DIRS = {"build", "dist", "__pycache__"}

# (doc, span) -> why the span is a path outside the repository
OUTSIDE = {
    ("docs/opencl.md", "lib/"): "the Python environment's lib/ folder, where pip puts Intel's runtime",
}

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"<[^<>/]*>|(?:^|(?<=/))[A-Z][A-Z0-9_]*(?=/|$)")
ALL_PLACEHOLDER = re.compile(r"^(<[^<>/]*>|[A-Z][A-Z0-9_]*)$")


def prose(text: str) -> str:
    """The doc without its fenced code blocks (commands and code, not paths)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return "\n".join(out)


def looks_like_path(span: str) -> bool:
    if not span or any(c.isspace() for c in span) or "://" in span:
        return False
    if span.startswith(("/", "~", "$", "-", "#", "mailto:")) or span.endswith(")") or "=" in span:
        return False
    if span.startswith("."):  # `.libs`, `.onnx`, `.cl`: suffixes and hidden names, not paths
        return False
    return "/" in span or span.endswith(EXTENSIONS)


def outside_repo(span: str) -> bool:
    return bool(ALL_PLACEHOLDER.match(span.split("/")[0])) and "/" in span


def paths_in(doc: Path) -> list[tuple[str, str]]:
    """(span, how it is read: "code" or "link") for every path-like span of `doc`."""
    text = prose(doc.read_text())
    found = [(m.group(1).strip(), "code") for m in CODE_SPAN.finditer(text)]
    found += [(m.group(1).split("#")[0], "link") for m in LINK.finditer(text)]
    return [(s, how) for s, how in found if looks_like_path(s)]


def repo_files() -> set[str]:
    names = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames
                       if d not in SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info")]
        names.update(filenames)
    return names


def in_build_output(path: str) -> bool:
    """True for build outputs, and for anything outside the repository (`../shared/x.md`)."""
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(ROOT):
        return True
    parts = resolved.relative_to(ROOT).parts
    return any(p in SKIP_DIRS or p.startswith(".") or p.endswith(".egg-info") for p in parts)


def exists(span: str, base: Path | None, names: set[str]) -> bool:
    """Whether `span` names something in the repository: read from `base`, or with
    base None (a code span) from the root, a bare file name matching any file."""
    pattern = PLACEHOLDER.sub("*", span)
    if base is None and "/" not in span:
        return any(fnmatch.fnmatch(n, pattern) for n in names) if "*" in pattern else pattern in names
    hits = [h for h in glob.glob(str((base or ROOT) / pattern.rstrip("/"))) if not in_build_output(h)]
    if span.endswith("/"):
        hits = [h for h in hits if os.path.isdir(h)]
    return bool(hits)


def test_the_rule():
    assert outside_repo("P/lib/mlrt/<version>/") and outside_repo("<sys.prefix>/etc/mlrt")
    assert not outside_repo("native/ops/<op>.py")
    assert exists("native/ops/<op>.py", None, set())
    assert exists("tests/native/ops/test_<op>.py", None, set())
    assert not exists("tests/native/opencl/test_faults.py", None, set())
    assert not exists("test_faults.py", None, repo_files())
    assert exists("opencl.md", ROOT / "docs", set()) and not exists("opencl.md", ROOT, set())
    assert not exists("shared/DESIGN.md", None, set()) and not exists("../shared/DESIGN.md", ROOT / "docs", set())


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_paths_exist(doc):
    names = repo_files()
    rel = str(doc.relative_to(ROOT))
    missing = []
    for span, how in paths_in(doc):
        if (rel, span) in OUTSIDE or outside_repo(span):
            continue
        base = doc.parent if how == "link" else None
        if not exists(span, base, names):
            missing.append(span)
    assert not missing, f"{rel} names paths that are not in the repository: {sorted(set(missing))}"


# -- the other direction: every module is named in docs/layout.md ------------------------------------
LAYOUT = ROOT / "docs" / "layout.md"
CODE_FOLDERS = ("highlevel", "media", "lowlevel", "native", "distribution", "package")
C_FOLDERS = ("native/kernels", "native/src")


def code_files() -> list[str]:
    """The Python modules of the layers (package __init__ files aside: their folder is
    their name) and the C sources and headers of native/kernels and native/src."""
    found = [str(p.relative_to(ROOT)) for folder in CODE_FOLDERS for p in (ROOT / folder).rglob("*.py")
             if p.name != "__init__.py" and not in_build_output(str(p))]
    found += [str(p.relative_to(ROOT)) for folder in C_FOLDERS for p in (ROOT / folder).iterdir()
              if p.suffix in (".c", ".h")]
    return sorted(found)


def named_in(doc: Path, path: str) -> bool:
    """Whether `doc` names `path`: as a path from the root (`native/graph.py`), as a
    pattern with placeholders that covers it (`native/ops/<op>.py`: "one file per X"),
    or by its file name alone (`_model.py` in the list of its folder's files)."""
    for span, how in paths_in(doc):
        if how != "code":
            continue
        if "/" not in span:
            if fnmatch.fnmatch(os.path.basename(path), PLACEHOLDER.sub("*", span)):
                return True
        elif span == path or fnmatch.fnmatch(path, PLACEHOLDER.sub("*", span)):
            return True
    return False


def test_named_in_rule():
    assert named_in(LAYOUT, "native/graph.py") and named_in(LAYOUT, "native/ops/relu.py")
    assert not named_in(LAYOUT, "native/no_such_module.py")


def test_every_module_is_named_in_layout():
    missing = [p for p in code_files() if not named_in(LAYOUT, p)]
    assert not missing, f"docs/layout.md names no entry for: {missing}"
