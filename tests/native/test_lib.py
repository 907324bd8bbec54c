"""native/_lib.py: C constants read from the loaded runtime (the numbers live only in
the headers) and C statuses turned into the MlrtError tree."""

import ast
import re
from pathlib import Path

import pytest

from mlrt._errors import InvalidArgument, MlrtError, NotImplemented, ResourceExhausted, RuntimeLoadError
from mlrt.native import _lib

NATIVE = Path(_lib.__file__).resolve().parent
CONSTANT = re.compile(r"MLRT_[A-Z0-9_]+")


def _constants_named(folder: Path) -> set[str]:
    names = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CONSTANT.fullmatch(node.value):
                names.add(node.value)
    return names


def test_enum_value_is_the_headers_number():
    assert _lib.enum_value("MLRT_RESIZE_CUBIC") == _lib.lib().MLRT_RESIZE_CUBIC
    assert _lib.enum_value("MLRT_ERR_NOT_IMPLEMENTED") == _lib.lib().MLRT_ERR_NOT_IMPLEMENTED


def test_enum_value_of_an_unknown_constant():
    with pytest.raises(RuntimeLoadError, match="MLRT_NO_SUCH_MODE"):
        _lib.enum_value("MLRT_NO_SUCH_MODE")


def test_every_constant_the_operators_name_is_in_the_headers():
    names = _constants_named(NATIVE / "ops")
    assert len(names) > 50  # the mode tables of Resize, Pad, GridSample, the ML and RNN ops...
    missing = [n for n in sorted(names) if not hasattr(_lib.lib(), n)]
    assert not missing, f"named in native/ops but not in kernels/*.h: {missing}"


@pytest.mark.parametrize("name, error", [("MLRT_ERR_INVALID_ARGUMENT", InvalidArgument),
                                         ("MLRT_ERR_NOT_IMPLEMENTED", NotImplemented),
                                         ("MLRT_ERR_OUT_OF_MEMORY", ResourceExhausted),
                                         ("MLRT_ERR_INTERNAL", MlrtError)])
def test_raise_status(name, error):
    with pytest.raises(error, match="^here: "):
        _lib.raise_status(_lib.enum_value(name), "here")


def test_raise_status_ok():
    assert _lib.raise_status(_lib.enum_value("MLRT_OK")) is None
