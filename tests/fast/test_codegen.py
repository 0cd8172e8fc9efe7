"""Generated code is visible: the functions dualad generates from the formula table
(rules/elementwise.py) have their source in ``linecache`` under their own file names, so a
traceback through one shows the line, ``inspect.getsource`` reads it, and
``python -m dualad.codegen`` prints it."""

import gc
import inspect
import linecache
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad import _fastpaths, codegen
from dualad.rules import elementwise as E

try:  # (the fast layer; without it, the tests of its fast paths are skipped: conftest.py)
    from dualad.fast import elementwise as FE
except ModuleNotFoundError:
    FE = None

pytestmark = pytest.mark.fastpath()  # (every test here reads code the fast layer generates)


class _NoSine:
    """An element of an object array whose sine and cosine raise (a misbehaving input)."""

    def sin(self):
        raise LookupError("no sine here")

    def cos(self):
        raise LookupError("no cosine here")


def _frame_line(exc, filename):
    """The source line that ``traceback`` prints under the frame of ``filename``."""
    linecache.checkcache()  # (what a debugger or the traceback module may do first)
    lines = "".join(traceback.format_exception(exc)).splitlines()
    at = [i for i, ln in enumerate(lines) if ln.strip().startswith(f'File "{filename}"')]
    assert at, "\n".join(lines)
    return lines[at[0] + 1].strip()


@pytest.mark.fastpath("hot")
def test_a_traceback_through_the_generated_call_shows_its_line():
    x = da.tensor(np.array([_NoSine()], dtype=object))
    with pytest.raises(LookupError, match="no sine here") as info:
        dnp.sin(x)  # sin's "call" variant, which calls np.sin on the object array
    assert _frame_line(info.value, "<dualad call_sin>") == "y = impl(x)"


def test_a_traceback_through_a_generated_step_shows_its_line():
    step = E.PRIMS["sin"].steps[0]  # (made in both modes: DUALAD_GENERAL_PATH keeps it)
    bad = np.array([_NoSine()], dtype=object)
    with pytest.raises(LookupError, match="no cosine here") as info:
        step(np.ones(1), bad, None, None, np.dtype("float64"), None)
    assert _frame_line(info.value, "<dualad step_sin_0>") == "k = cos(x)"


@pytest.mark.fastpath("transpose")
def test_a_traceback_through_a_generated_transpose_shows_its_line():
    prim = E.PRIMS["multiply"]
    with pytest.raises(ValueError, match="expected 2") as info:  # one array for two inputs
        prim.transposed(prim, np.ones(2), (np.ones(2),), None, None, (True, True),
                        np.dtype("float64"))
    assert _frame_line(info.value, "<dualad transposed_multiply>") == "a, b = arrays"


def _generated_functions():
    """Every function alive whose code was generated (by its file name), the operator
    variants made for every primitive first."""
    for name in codegen.primitives():
        prim = codegen._prims()[name]
        if prim.hot is not None:
            for kind in ("call", "op", "rop") if prim.nin == 2 else ("call", "op"):
                FE.variant(prim, kind)
    gc.collect()  # (functions generated and dropped: the hot family off)
    return [f for f in gc.get_objects() if inspect.isfunction(f)
            and f.__code__.co_filename.startswith("<dualad ")]


def test_every_generated_function_has_its_source():
    fns = _generated_functions()
    # 50 formula primitives: hot, call and op for each, rop for the 17 binary ones, a
    # transpose for most, a step per nonzero derivative, a pair for most binary ones (290)
    assert len(fns) > (280 if not _fastpaths.OFF else 60)
    linecache.checkcache()
    for fn in fns:
        assert inspect.getsource(fn) == fn.source, fn.__code__.co_filename
    # and the command shows each of them
    shown = {id(f) for n in codegen.primitives() for f in codegen.generated(n).values()}
    assert {id(f) for f in fns} == shown


def test_regenerated_code_keeps_each_functions_own_lines():
    first = FE._compiled("def f_codegen_test():\n    return 1\n", "f_codegen_test")
    second = FE._compiled("def f_codegen_test():\n    return 2\n", "f_codegen_test")
    again = FE._compiled("def f_codegen_test():\n    return 2\n", "f_codegen_test")
    assert "return 1" in inspect.getsource(first) and "return 2" in inspect.getsource(second)
    assert second.__code__.co_filename == "<dualad f_codegen_test #2>"
    assert again.__code__.co_filename == second.__code__.co_filename  # same text, same name


def test_the_command_prints_a_primitives_code(capsys):
    assert codegen.main(["multiply"]) == 0
    out = capsys.readouterr().out
    assert "def step_multiply_0(ct, a, b, y, od, ix):" in out
    if _fastpaths.on("hot"):
        assert "# multiply: op (Tensor.__mul__), <dualad op_multiply>" in out
        assert "def hot_multiply(prim, args):" in out
    else:
        assert "the 'hot' fast paths are off" in out
    assert codegen.main([]) == 0
    listed = capsys.readouterr().out.split()
    assert "sin" in listed and "multiply" in listed and "clip" not in listed


def test_the_command_names_an_unknown_primitive(capsys):
    with pytest.raises(SystemExit) as info:
        codegen.main(["sin", "nosuch"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "'nosuch': no primitive of that name" in err and "with no name lists" in err


def test_the_command_runs_as_a_module():
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-m", "dualad.codegen", "sin"], cwd=root,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert "def step_sin_0(ct, x, _, y, od, ix):" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "dualad.codegen", "sine"], cwd=root,
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "'sine'" in bad.stderr
