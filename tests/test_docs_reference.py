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

DOCS = Path(__file__).resolve().parent.parent / "docs"

# every public callable of these modules has a page of its own
NAMESPACES = ("dualad.numpy", "dualad.numpy.linalg", "dualad.numpy.fft",
              "dualad.scipy.special", "dualad.profiler", "dualad.graph")


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
