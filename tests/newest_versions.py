"""Run the test suite against the newest versions of its dependencies, for whoever
moves the pins in constraints.txt.

    python tests/newest_versions.py [--write] [--keep] [-- PYTEST ARGS...]

Makes a fresh virtual environment in a temporary folder, installs this checkout with
its test extras and no constraints (so pip takes the newest of everything), prints
every version that differs from constraints.txt, runs `python -m pytest` there (with
the arguments after `--`, default the whole suite) and prints its closing line.
`--write` rewrites constraints.txt from that environment when the suite passed;
`--keep` leaves the environment in place and prints where.  The exit status is
pytest's.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"


def read_pins(text: str) -> dict[str, str]:
    """name (normalised) -> version, from `name==version` lines."""
    pins = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return pins


def moved(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """One line per package whose version differs, was added or was dropped."""
    lines = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a != b:
            lines.append(f"  {name}: {a or '(not pinned)'} -> {b or '(gone)'}")
    return lines


def header(text: str) -> str:
    return "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite constraints.txt when the suite passes")
    ap.add_argument("--keep", action="store_true", help="keep the virtual environment")
    ap.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="mlrt-newest-"))
    venv = folder / "venv"
    python = venv / "bin" / "python"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", f"{ROOT}[test]"], check=True)
        freeze = subprocess.run([python, "-m", "pip", "freeze", "--exclude-editable"], check=True,
                                capture_output=True, text=True).stdout
        freeze = "".join(line + "\n" for line in freeze.splitlines() if not line.lower().startswith("mlrt"))
        old_text = CONSTRAINTS.read_text()
        changes = moved(read_pins(old_text), read_pins(freeze))
        print("versions moved from constraints.txt:" if changes else "no version moved from constraints.txt")
        print("\n".join(changes))
        # the checkout's tests on the installed package (the checkout has no mlrt/
        # folder to shadow it)
        run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args],
                             cwd=ROOT)
        print(f"pytest on the newest versions exited {run.returncode}")
        if args.write:
            if run.returncode == 0:
                CONSTRAINTS.write_text(header(old_text) + freeze)
                print(f"rewrote {CONSTRAINTS} (update its 'Verified:' line)")
            else:
                print("constraints.txt left as it was: the suite did not pass")
        return run.returncode
    finally:
        if args.keep:
            print(f"environment kept in {venv}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
