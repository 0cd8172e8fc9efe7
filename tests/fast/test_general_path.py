"""The fast paths against the general path: every op-database entry, every composition.

A fast path is a second implementation of a rule (invariant 9 of docs/architecture.md).
This file computes, for the first sample of every entry in every dtype, the derivatives of every mode
and composition of two modes, once here (fast paths on) and once in a subprocess
with ``DUALAD_GENERAL_PATH=1`` (``dualad/fast/switch.py``: ``apply``'s general path
and the engine's general node VJP alone) — and once with each family of fast paths
alone switched off — and asks that they agree to a few units in the last place of
the result's scale.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp
from dualad import _fastpaths

from _support import opdb

DTYPES = opdb.ALL
ULPS = 4  # (of the result's largest magnitude: the paths sum and multiply in other orders)


def _duals(s: opdb.Sample, xs: list[da.Tensor], u: list[np.ndarray], batched: bool = False
           ) -> tuple[da.Tensor, ...]:
    args = list(s.args)
    for i, x, d in zip(s.diff, xs, u, strict=True):
        args[i] = da.make_dual(x, da.as_tensor(d), batched=batched)
    return tuple(args)


def _tangent(o: da.Tensor, lead: tuple[int, ...] = ()) -> np.ndarray:
    t = da.unpack_dual(o).tangent
    return np.zeros(lead + o.shape, o.dtype) if t is None else opdb.to_np(t)


def _grad(outs: list[da.Tensor], ws: list[np.ndarray], xs: list[da.Tensor]) -> list[np.ndarray]:
    pairs = [(o, w) for o, w in zip(outs, ws, strict=True) if o is not None and o.requires_grad]
    if not pairs:
        return [np.zeros(x.shape, x.dtype) for x in xs]
    g = da.grad([o for o, _ in pairs], xs, grad_outputs=[da.as_tensor(w) for _, w in pairs],
                allow_unused=True, materialize_grads=True)
    return [opdb.to_np(gi) for gi in g]


def compositions(op: opdb.OpInfo, dtype: str, s: opdb.Sample) -> dict[str, list[np.ndarray]]:
    """Every mode and composition of two modes of ``op`` at sample ``s``, as arrays."""
    rng = opdb.rng_for(op, dtype, s, "two ways")
    x0 = [s.args[i] for i in s.diff]
    u, u2, w = ([opdb.rand_like(rng, x) for x in x0] for _ in range(3))
    v = opdb.cotangents(op, s, rng)
    v2 = opdb.cotangents(op, s, rng)
    U = [opdb.rand_like(rng, x, (opdb.B,)) for x in x0]
    V = opdb.cotangents(op, s, rng, (opdb.B,))
    res: dict[str, list[np.ndarray]] = {}
    res["forward"] = opdb.jvp(op, s, u)[1]
    res["forward batched"] = opdb.jvp(op, s, U, batched=True)[1]
    res["reverse"] = opdb.vjp(op, s, v)[0]
    res["reverse batched"] = opdb.vjp(op, s, V, batched=True)[0]
    res["forward over reverse"] = opdb.grad_tangents(op, s, v, u)
    grads, xs, _ = opdb.vjp(op, s, v, create_graph=True)
    res["reverse over reverse"] = _grad(list(grads), w, xs)
    xs, _ = opdb.leaves(s)
    with da.dual_level():  # the tangents, recorded: then their gradient
        outs = opdb.run(op, s, _duals(s, xs, u))
        tans = [da.unpack_dual(o).tangent for o in outs]
    res["reverse over forward"] = _grad(tans, v2, xs)
    xs, _ = opdb.leaves(s, requires_grad=False)
    with da.dual_level():
        inner = _duals(s, xs, u)
        with da.dual_level():
            outs = opdb.run(op, s, _duals(s, [inner[i] for i in s.diff], u2))
            firsts = [da.unpack_dual(o).tangent for o in outs]
        res["forward over forward"] = [
            np.zeros(o.shape, o.dtype) if t is None else _tangent(t)
            for t, o in zip(firsts, outs, strict=True)]
    res.update(_functional(op, s, u, v))
    return res


def _functional(op: opdb.OpInfo, s: opdb.Sample, u: list[np.ndarray], v: list[np.ndarray]
                ) -> dict[str, list[np.ndarray]]:
    """hvp of Re<v, f(x)> (forward over reverse, its primals recorded and its tangents
    not), and the vectorized Jacobians of the first output (identity seeds)."""

    def call(*xs: da.Tensor) -> list[da.Tensor]:
        args = list(s.args)
        for i, x in zip(s.diff, xs, strict=True):
            args[i] = x
        return opdb.run(op, s, tuple(args))

    def loss(*xs: da.Tensor) -> da.Tensor:
        tot = da.tensor(0.0)
        for o, w in zip(call(*xs), v, strict=True):
            tot = tot + dnp.sum(dnp.real(o * np.conj(w)))
        return tot

    xs = tuple(da.as_tensor(s.args[i]) for i in s.diff)
    us = tuple(da.as_tensor(d) for d in u)
    res = {"hvp": [opdb.to_np(h) for h in F.hvp(loss, xs, us)[1]]}
    first = lambda *a: call(*a)[0]  # noqa: E731
    for strategy in ("forward-mode", "reverse-mode"):
        J = F.jacobian(first, xs, vectorize=True, strategy=strategy)
        res[f"jacobian {strategy}"] = [opdb.to_np(j) for j in J]
    return res


def _cases() -> list[tuple[opdb.OpInfo, str, opdb.Sample]]:
    return [(op, dtype, opdb.samples(op, dtype)[0]) for op in opdb.OPS
            for dtype in DTYPES if dtype in op.dtypes]


CASES = _cases()


def _key(op: opdb.OpInfo, dtype: str) -> str:
    return f"{op.name}|{dtype}"


def main(path: str) -> None:
    """Write every case's compositions to ``path`` (run with the fast paths off)."""
    out: dict[str, np.ndarray] = {}
    for op, dtype, s in CASES:
        try:
            res = compositions(op, dtype, s)
        except Exception as e:  # (recorded, and compared as an outcome)
            out[f"{_key(op, dtype)}|error"] = np.array(f"{type(e).__name__}: {e}")
            continue
        for mode, arrays in res.items():
            for j, a in enumerate(arrays):
                out[f"{_key(op, dtype)}|{mode}|{j}"] = np.asarray(a)
    np.savez(path, **out)


# every fast path off, and each family alone off (the others must not lean on it)
SWITCHES = ("1",) + _fastpaths.FAMILIES


@pytest.fixture(scope="module", params=SWITCHES, ids=[f"off={s}" for s in SWITCHES])
def general(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, np.ndarray]:
    path = tmp_path_factory.mktemp("general") / "general.npz"
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)  # (where ``_support`` is)
    root = os.path.dirname(tests)
    env = dict(os.environ, DUALAD_GENERAL_PATH=request.param, PYTHONPATH=os.pathsep.join(
        [here, tests, root, os.environ.get("PYTHONPATH", "")]))
    code = f"import sys; sys.path.insert(0, {here!r}); import test_general_path as t; " \
           f"t.main({str(path)!r})"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=root)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def _same(fast: np.ndarray, slow: np.ndarray, what: str) -> None:
    assert fast.shape == slow.shape and fast.dtype == slow.dtype, (
        f"{what}: {fast.shape} {fast.dtype} here, {slow.shape} {slow.dtype} on the general path")
    nan = np.isnan(fast)
    assert (nan == np.isnan(slow)).all(), f"{what}: NaN in other places"
    f, g = fast[~nan], slow[~nan]
    inf = np.isinf(g)
    assert (f[inf] == g[inf]).all(), f"{what}: infinities differ"
    f, g = f[~inf], g[~inf]
    scale = float(np.max(np.abs(g), initial=np.finfo(g.dtype).tiny))
    err = float(np.max(np.abs(f - g), initial=0.0))
    assert err <= ULPS * np.finfo(g.dtype).eps * scale, (
        f"{what}: the fast paths differ from the general path by {err:.3g} "
        f"({err / (np.finfo(g.dtype).eps * scale):.1f} ulps of {scale:.3g})")


@pytest.mark.fastpath(*_fastpaths.FAMILIES)  # (with them off there is nothing to compare)
@pytest.mark.parametrize(("op", "dtype", "sample"), CASES,
                         ids=[f"{op.name}-{dt}" for op, dt, _ in CASES])
def test_fast_paths_equal_the_general_path(general, op, dtype, sample):
    key = _key(op, dtype)
    err = general.get(f"{key}|error")
    try:
        here = compositions(op, dtype, sample)
    except Exception as e:
        assert err is not None and str(err) == f"{type(e).__name__}: {e}", (
            f"raises {type(e).__name__}: {e} here; on the general path: {err}")
        return
    assert err is None, f"the general path raised {err}"
    for mode, arrays in here.items():
        for j, a in enumerate(arrays):
            _same(np.asarray(a), general[f"{key}|{mode}|{j}"], f"{mode}, output {j}")
        opdb.record(op, dtype, f"fast = general path: {mode}")


# -- the fast layer stands apart ------------------------------------------------------------

# The one module outside dualad/fast/ that may import it: its door, which installs it and
# says which families run.
_FAST_IMPORTERS = {"dualad/_fastpaths.py"}


def _imports_fast(path: str, module: str) -> bool:
    """Whether the module ``module`` (dotted; a package's ``__init__`` named as such) at
    ``path`` imports ``dualad.fast``, at its top or inside a function."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".")[:-node.level] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            names = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        if any(n == "dualad.fast" or n.startswith("dualad.fast.") for n in names):
            return True
    return False


def test_nothing_outside_the_fast_layer_imports_it_but_its_installer():
    root = os.path.dirname(os.path.dirname(os.path.abspath(da.__file__)))
    found = set()
    for folder, _, files in os.walk(os.path.join(root, "dualad")):
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        if rel == "dualad/fast" or rel.startswith("dualad/fast/"):
            continue
        for name in files:
            if name.endswith(".py"):
                module = f"{rel.replace('/', '.')}.{name[:-3]}"
                if _imports_fast(os.path.join(folder, name), module):
                    found.add(f"{rel}/{name}")
    assert found <= _FAST_IMPORTERS, sorted(found - _FAST_IMPORTERS)
    assert "dualad/_fastpaths.py" in found
