"""Random straight-line programs that write in place, against their twins that do not.

hypothesis draws a program over a few arrays: elementwise and binary operations, views
and copies (slices, transposes, reshapes, einsum's permutations and diagonals, advanced
indices, sort, tile, repeat, ``diagonal``: a read-only view), and in-place writes into
any of them that NumPy lets be written (``v[key] = s``, ``v += w``, ``v *= w``). Each
program runs three ways:

* on NumPy arrays: the values, and which results are views (NumPy decides);
* on dualad Tensors, as written (the writes in place);
* on dualad Tensors, written without any write: every array is a gather of positions of
  the memory it lives in, and a write is a ``where`` that makes that memory anew.

The two dualad runs must agree in their values (with NumPy's), their gradient (reverse
mode) and their tangent (forward mode). Where the in-place run raises torch's "modified by
an inplace operation" at backward, torch (if installed) must raise on the same program.
"""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import dualad as da  # noqa: E402
import dualad.numpy as dnp  # noqa: E402

X0 = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.6], [-0.9, 0.7, 1.1]])
T0 = np.array([[1.0, 0.5, -2.0], [0.25, -1.0, 1.5], [2.0, -0.5, 0.75]])
MAX_SIZE = 48


class _Np:
    """The operations, on one library's arrays (NumPy's, dualad's or torch's)."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        if lib == "torch":
            import torch

            self.m = torch
        else:
            self.m = np if lib == "numpy" else dnp

    def sort(self, v):
        return self.m.sort(v)[0] if self.lib == "torch" else self.m.sort(v)

    def tile(self, v):
        return self.m.tile(v, (2,) + (1,) * (v.ndim - 1))

    def repeat(self, v):
        if self.lib == "torch":
            return self.m.repeat_interleave(v, 2, dim=v.ndim - 1)
        return self.m.repeat(v, 2, axis=v.ndim - 1)

    def einsum(self, spec, v):
        return self.m.einsum(spec, v)

    def fn(self, name, v):
        if self.lib == "torch" and name == "abs":
            return self.m.abs(v)
        return getattr(self.m, name)(v)


UNARY = {
    "sin": lambda ns, v: ns.fn("sin", v),
    "exp": lambda ns, v: ns.fn("exp", ns.fn("sin", v)),
    "tanh": lambda ns, v: ns.fn("tanh", v),
    "abs": lambda ns, v: ns.fn("abs", v),
    "square": lambda ns, v: v * ns.fn("tanh", v),
    "ratio": lambda ns, v: v / (1.0 + v * v),
    # (rules that save nothing: a write after them leaves backward readable)
    "scale": lambda ns, v: v * 1.5 - 0.25,
    "neg": lambda ns, v: -v,
    "sign": lambda ns, v: ns.fn("sign", v) - 0.5 * v,  # (a real sign saves nothing)
}
BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - 0.5 * b,
}
# (name, applies to this shape, the operation): views and copies, as NumPy makes them
DERIVE = [
    ("T", lambda s: len(s) == 2, lambda ns, v: v.T),
    ("rows", lambda s: len(s) >= 1 and s[0] > 1, lambda ns, v: v[1:]),
    ("step", lambda s: len(s) == 2 and s[1] > 1, lambda ns, v: v[:, ::2]),
    ("first", lambda s: len(s) == 2, lambda ns, v: v[0]),
    ("flat", lambda s: len(s) >= 1, lambda ns, v: v.reshape(-1)),
    ("einsum T", lambda s: len(s) == 2, lambda ns, v: ns.einsum("ij->ji", v)),
    ("einsum diag", lambda s: len(s) == 2 and s[0] == s[1], lambda ns, v: ns.einsum("ii->i", v)),
    # (read-only in NumPy, as every view of it: not written, but it sees writes into v)
    ("diagonal", lambda s: len(s) == 2, lambda ns, v: ns.m.diagonal(v)),
    ("diagonal 1", lambda s: len(s) == 2 and s[1] > 1, lambda ns, v: ns.m.diagonal(v, 1)),
    ("fancy", lambda s: len(s) >= 1 and s[0] > 1, lambda ns, v: v[[v.shape[0] - 1, 0]]),
    ("sort", lambda s: len(s) >= 1, lambda ns, v: ns.sort(v)),
    ("tile", lambda s: len(s) >= 1, lambda ns, v: ns.tile(v)),
    ("repeat", lambda s: len(s) >= 1, lambda ns, v: ns.repeat(v)),
]
KEYS = [lambda s: (0,), lambda s: (slice(1, None),), lambda s: Ellipsis,
        lambda s: (slice(None, None, 2),), lambda s: ([s[0] - 1],)]

# (drawn more often: the operations that save nothing, so that more programs reach the
# end of backward instead of its error about a saved value written)
UNARY_DRAW = sorted(UNARY) + ["scale", "neg"] * 3
BINARY_DRAW = sorted(BINARY) + ["add", "sub"] * 2
op = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(UNARY_DRAW), st.integers(0, 99)),
    st.tuples(st.just("binary"), st.sampled_from(BINARY_DRAW), st.integers(0, 99),
              st.integers(0, 99)),
    st.tuples(st.just("derive"), st.integers(0, len(DERIVE) - 1), st.integers(0, 99)),
    st.tuples(st.just("setitem"), st.integers(0, len(KEYS) - 1), st.integers(0, 99),
              st.integers(0, 99)),
    st.tuples(st.just("iadd"), st.just(0), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("imul"), st.just(0), st.integers(0, 99), st.integers(0, 99)),
)


def _operand(w, shape):
    """``w`` where it has ``shape``, else a scalar made from it (a 0-d array)."""
    return w if tuple(w.shape) == tuple(shape) else (w * 0.1).sum()


def _inplace_run(ns, x, program, ro=None):
    """The program as written, on ``ns``'s arrays; returns its arrays, per derive step
    whether the result shares memory with its source, and which arrays are read-only
    (asked of NumPy only; the other runs are given ``ro`` and do not write into those)."""
    vs = [x * 1.0, UNARY["sin"](ns, x)]
    views = []
    if ro is None:
        ro = set()
    for step in program:
        kind = step[0]
        if kind == "unary":
            vs.append(UNARY[step[1]](ns, vs[step[2] % len(vs)]))
        elif kind == "binary":
            a, b = vs[step[2] % len(vs)], vs[step[3] % len(vs)]
            vs.append(BINARY[step[1]](a, _operand(b, a.shape)))
        elif kind == "derive":
            name, ok, f = DERIVE[step[1]]
            v = vs[step[2] % len(vs)]
            if not ok(tuple(v.shape)) or 2 * _size(v) > MAX_SIZE:
                views.append(None)
                continue
            r = f(ns, v)
            views.append(np.shares_memory(r, v) if ns.lib == "numpy" else None)
            if ns.lib == "numpy" and not r.flags.writeable:
                ro.add(len(vs))
            vs.append(r)
        else:
            v, w = vs[step[2] % len(vs)], vs[step[3] % len(vs)]
            if v.ndim == 0 or step[2] % len(vs) in ro:
                continue
            if kind == "setitem":
                v[KEYS[step[1]](tuple(v.shape))] = (w * 0.1).sum() + 0.25
            elif kind == "iadd":
                v += _operand(w, v.shape)
            else:
                v *= _operand(w, v.shape)
    return vs, views, ro


def _size(v):
    return int(np.prod(tuple(v.shape)))


def _twin_run(x, program, views, ro):
    """The program without a write: each array is (memory, positions in it)."""
    ns = _Np("dualad")
    mem = []  # each memory's value (a Tensor made anew at each write)

    def new(value):
        mem.append(value)
        return (len(mem) - 1, np.arange(_size(value)).reshape(tuple(value.shape)))

    def value(var):
        m, pos = var
        return dnp.reshape(mem[m], -1)[pos]

    def write(var, nv):
        m, pos = var
        if not pos.size:  # (an empty region: nothing written)
            return
        nv = dnp.broadcast_to(nv, pos.shape)
        size = _size(mem[m])
        at = np.zeros(size, bool)
        at[pos.ravel()] = True
        inv = np.zeros(size, int)
        inv[pos.ravel()] = np.arange(pos.size)
        new_flat = dnp.where(at, dnp.reshape(nv, -1)[inv], dnp.reshape(mem[m], -1))
        mem[m] = dnp.reshape(new_flat, tuple(mem[m].shape))

    vs = [new(x * 1.0), new(UNARY["sin"](ns, x))]
    k = 0
    for step in program:
        kind = step[0]
        if kind == "unary":
            vs.append(new(UNARY[step[1]](ns, value(vs[step[2] % len(vs)]))))
        elif kind == "binary":
            a, b = value(vs[step[2] % len(vs)]), value(vs[step[3] % len(vs)])
            vs.append(new(BINARY[step[1]](a, _operand(b, a.shape))))
        elif kind == "derive":
            view = views[k]
            k += 1
            if view is None:
                continue
            name, ok, f = DERIVE[step[1]]
            var = vs[step[2] % len(vs)]
            if view:  # the positions it reads, as NumPy's view reads them
                vs.append((var[0], f(_Np("numpy"), var[1])))
            else:
                vs.append(new(f(ns, value(var))))
        else:
            var, w = vs[step[2] % len(vs)], value(vs[step[3] % len(vs)])
            if var[1].ndim == 0 or step[2] % len(vs) in ro:
                continue
            if kind == "setitem":
                sub = (var[0], var[1][KEYS[step[1]](var[1].shape)])
                write(sub, (w * 0.1).sum() + 0.25)
            elif kind == "iadd":
                write(var, value(var) + _operand(w, var[1].shape))
            else:
                write(var, value(var) * _operand(w, var[1].shape))
    return [value(v) for v in vs]


def _loss(vs, conv=lambda w: w):
    total = 0.0
    for k, v in enumerate(vs):
        w = np.cos(np.arange(_size(v)) + k).reshape(tuple(v.shape))
        total = total + (v * conv(w)).sum()
    return total


def _raises_inplace(e: BaseException) -> bool:
    return isinstance(e, RuntimeError) and "modified by an inplace operation" in str(e)


@settings(derandomize=True, max_examples=100, deadline=None, database=None,
          phases=[hypothesis.Phase.generate])
@given(st.lists(op, min_size=1, max_size=14))
def test_random_programs_with_writes_equal_their_twins(program):
    ref, views, ro = _inplace_run(_Np("numpy"), X0.copy(), program)
    # values: as written, without writes, and NumPy's (and which are read-only)
    vs, _, _ = _inplace_run(_Np("dualad"), da.tensor(X0), program, ro)
    twin = _twin_run(da.tensor(X0), program, views, ro)
    for k, v in enumerate(vs):
        assert v.numpy().flags.writeable == (k not in ro)
    assert len(vs) == len(twin) == len(ref)
    for a, b, c in zip(vs, twin, ref, strict=True):
        np.testing.assert_allclose(a.numpy(), c, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b.numpy(), c, rtol=1e-12, atol=1e-12)
    # forward mode: the tangent of every array
    with da.dual_level():
        vs, _, _ = _inplace_run(_Np("dualad"), da.make_dual(da.tensor(X0), da.tensor(T0)),
                                program, ro)
        got = da.unpack_dual(_loss(vs)).tangent
        twin = _twin_run(da.make_dual(da.tensor(X0), da.tensor(T0)), program, views, ro)
        want = da.unpack_dual(_loss(twin)).tangent
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)
    # reverse mode: the gradient (or torch's error, where a saved value was written)
    x = da.tensor(X0, requires_grad=True)
    vs, _, _ = _inplace_run(_Np("dualad"), x, program, ro)
    try:
        _loss(vs).backward()
    except RuntimeError as e:
        if not _raises_inplace(e):
            raise
        _torch_raises_too(program, ro)
        return
    xt = da.tensor(X0, requires_grad=True)
    _loss(_twin_run(xt, program, views, ro)).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    _torch_agrees(program, x.grad.numpy(), ro)


def _torch_run(program, ro):
    import torch

    x = torch.tensor(X0, requires_grad=True)
    vs, _, _ = _inplace_run(_Np("torch"), x, program, ro)
    _loss(vs, torch.from_numpy).backward()
    return x.grad.numpy()


def _torch_raises_too(program, ro):
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    with pytest.raises(RuntimeError) as e:
        _torch_run(program, ro)
    # (or torch refused a write whose operand overlaps the memory written, first)
    assert _raises_inplace(e.value) or "single memory location" in str(e.value)


def _torch_agrees(program, grad, ro):
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    try:
        want = _torch_run(program, ro)
    except RuntimeError:
        # torch refuses some programs dualad computes: a write into a result torch saves
        # and dualad's rule does not read, an operand that overlaps the memory written
        # (NumPy reads it before the write); the twin has checked dualad's gradient
        return
    np.testing.assert_allclose(grad, want, rtol=1e-10, atol=1e-10)
