"""The API reference (docs/api/*.md) has a page for every public name, and the site reads
offline.

A new public function of ``dualad.numpy`` (or of the other namespaces below) without an
entry in one of the reference's ``autosummary`` lists fails here, naming it; the docs build
(``-W``) then checks that its docstring renders.
"""

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

import dualad

DOCS = Path(__file__).resolve().parents[2] / "docs"

# every public callable of these modules has a page of its own
NAMESPACES = ("dualad.numpy", "dualad.numpy.linalg", "dualad.numpy.fft",
              "dualad.scipy.special", "dualad.scipy.linalg", "dualad.scipy.signal",
              "dualad.scipy.integrate", "dualad.scipy.stats", "dualad.profiler", "dualad.graph")


def documented():
    """The full names the reference's ``autosummary`` lists give pages: each entry under
    the ``.. currentmodule::`` before it."""
    names = set()
    for page in sorted((DOCS / "api").glob("*.md")):
        module, listing = None, False
        for line in page.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\.\. currentmodule:: (\S+)", line)
            if m:
                module = m.group(1)
            elif line.startswith(".. autosummary::"):
                listing = True
            elif listing and re.match(r"   [A-Za-z_][\w.]*$", line):
                names.add(f"{module}.{line.strip()}")
            elif listing and not (line.startswith("   :") or not line.strip()):
                listing = False
    return names


DOCUMENTED = documented()


def _public(modname):
    mod = importlib.import_module(modname)
    return [f"{modname}.{n}" for n in mod.__all__
            if not n.startswith("_") and callable(getattr(mod, n))
            and not inspect.ismodule(getattr(mod, n))]


PUBLIC = [n for m in NAMESPACES for n in _public(m)] + [
    f"dualad.{n}" for n in dualad.__all__
    if not n.startswith("_") and not inspect.ismodule(getattr(dualad, n))]


def test_the_reference_lists_are_read():
    # (the parser above finds the lists: a change of their markup must not make this vacuous)
    assert {"dualad.numpy.sin", "dualad.numpy.linalg.svd", "dualad.tensor"} <= DOCUMENTED
    assert len(DOCUMENTED) > 400


def _resolve(name):
    parts = name.split(".")
    for k in range(len(parts), 0, -1):  # the longest importable module, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for p in parts[k:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(name)


def _documented_as(name):
    """``name`` has a page, or the same object has one under the module it comes from
    (``dualad.make_dual`` is ``dualad.forward_ad.make_dual``)."""
    if name in DOCUMENTED:
        return True
    obj, short = _resolve(name), name.rsplit(".", 1)[1]
    return any(d.rsplit(".", 1)[1] == short and _resolve(d) is obj for d in DOCUMENTED)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_reference_page(name):
    assert _documented_as(name), (
        f"{name} is public but has no page in the API reference: add it to the autosummary "
        "list of its topic in docs/api/")


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_every_reference_entry_exists(name):
    _resolve(name)


def test_the_offline_check_finds_a_cdn_mathjax():
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from dualad_offline import _EXTERNAL
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    cdn = '<script defer="defer" src="https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js">'
    assert _EXTERNAL.findall(cdn)
    assert _EXTERNAL.findall('<link rel="stylesheet" href="//fonts.example.org/a.css" />')
    assert _EXTERNAL.findall('window.MathJax = {"loader": {"paths": {"mathjax": '
                             '"https://unpkg.com/mathjax@3"}}}')
    local = '<script defer="defer" src="../_static/mathjax/tex-chtml.js"></script>'
    assert not _EXTERNAL.findall(local)
    assert not _EXTERNAL.findall('<a href="https://numpy.org/doc/stable/">NumPy</a>')


EXAMPLES = sorted((DOCS.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_gallery_card_has_a_thumbnail(path):
    """A script draws a figure (sphinx-gallery's thumbnail) or names a picture of its own;
    else its card shows sphinx-gallery's blank placeholder."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"^# sphinx_gallery_thumbnail_path = '([^']+)'", text, re.M)
    if m:
        assert (DOCS / m.group(1)).is_file(), f"{path.name}: {m.group(1)} is missing"
    else:
        assert re.search(r"\bplt\.(subplots|figure|plot)\(", text), (
            f"{path.name} draws no figure: add a picture to docs/_static/thumbnails "
            "(docs/_ext/make_thumbnails.py) and name it with "
            "# sphinx_gallery_thumbnail_path = '_static/thumbnails/NAME.png'")


def test_the_gallery_is_a_learning_path():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from gallery_order import learning_path
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    names = sorted([p.name for p in EXAMPLES] + ["plot_99_not_in_the_path.py"], key=learning_path)
    assert names[0] == "quickstart.py"
    assert names[1].startswith("plot_01_")
    assert names.index("dask_gradient.py") > names.index("plot_05_logistic_regression.py")
    assert names[-1] == "plot_99_not_in_the_path.py"  # an unknown script: at the end


# a literal that holds math: a power, an arrow, a derivative, a square root, a Greek name
_MATH = re.compile(r"\^|->|\bd/d|\bd2|sqrt\(|\btheta\b|\bomega\b")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_the_gallery_writes_math_as_math(path):
    """The gallery's text (a script's docstring and its ``# %%`` blocks) writes formulas
    with :math: or .. math:: (rendered by MathJax), not as code literals."""
    parser = pytest.importorskip("sphinx_gallery.py_source_parser")
    _, blocks = parser.split_code_and_text_blocks(str(path))
    text = "\n".join(b.content for b in blocks if b.type == "text")
    literals = re.findall(r"``(.+?)``", text, re.S)  # (in order: each opening meets its close)
    assert not [lit for lit in literals if _MATH.search(lit)]
    assert "\f" not in text  # (\frac in a docstring that is not raw)


# -- the README's Limits say what is true: each claim, run ------------------------------


def test_limits_dnp_functions_take_lists_of_tensors_and_numpy_refuses_them():
    import numpy as np

    import dualad.numpy as dnp

    x = dualad.tensor(1.0, requires_grad=True)
    y = dualad.tensor(2.0, requires_grad=True)
    dnp.sin([x, y]).sum().backward()
    np.testing.assert_allclose([x.grad.item(), y.grad.item()], np.cos([1.0, 2.0]), rtol=1e-15)
    assert dnp.sum([x, y]).requires_grad
    with pytest.raises(RuntimeError, match="drop its derivatives"):
        np.sin([x, y])


def test_limits_numpy_functions_run_on_values_or_raise_naming_themselves():
    import numpy as np

    t = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    assert np.argsort(t).tolist() == [1, 2, 0]
    with pytest.raises(TypeError, match="numpy.histogram is not supported"):
        np.histogram(t)
    with pytest.raises(TypeError, match="numpy.apply_along_axis is not supported"):
        np.apply_along_axis(lambda v: v, 0, t)


def test_limits_one_batched_level_and_functions_at_every_level():
    import dualad.forward_ad as fwAD

    with fwAD.dual_level():
        a = fwAD.make_dual(dualad.tensor([1.0, 2.0]), dualad.ones((3, 2)), batched=True)
        with fwAD.dual_level(), pytest.raises(RuntimeError, match="only one batched level"):
            fwAD.make_dual(a, dualad.ones((4, 2)), batched=True)

    class Square(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t

    # a Function's jvp runs once per live level: d/da d/db (x * x) = 2
    with fwAD.dual_level():
        a = fwAD.make_dual(dualad.tensor(3.0), dualad.tensor(1.0))
        with fwAD.dual_level():
            y = Square.apply(fwAD.make_dual(a, dualad.tensor(1.0)))
            t = fwAD.unpack_dual(y).tangent
        assert fwAD.unpack_dual(t).tangent.item() == 2.0
        assert fwAD.unpack_dual(t).primal.item() == 6.0


def test_limits_inplace_writes_into_dask_tensors_raise():
    dask_array = pytest.importorskip("dask.array")
    x = dualad.tensor(dask_array.ones(4, chunks=2)) * 1.0
    with pytest.raises(NotImplementedError, match="use the out-of-place form"):
        x += 1.0
    with pytest.raises(NotImplementedError, match="use the out-of-place form"):
        x[0] = 5.0
