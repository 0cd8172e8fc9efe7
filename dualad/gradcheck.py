"""Check derivatives against finite differences: ``gradcheck`` and ``gradgradcheck``.

The checks follow the "Gradcheck mechanics" note of torch.autograd:

* **Slow mode** builds the full Jacobian twice -- numerically by central
  differences, one input element at a time, and analytically, row by row with
  reverse mode (``da.grad`` with one-hot cotangents) and column by column with
  forward mode (``make_dual`` with one-hot tangents) -- and compares them
  entry by entry with ``allclose(analytical, numerical, rtol, atol)``.
* **Fast mode** compares the scalar ``v^T J u`` (reverse mode) or the vector
  ``J u`` (forward mode) for random ``u`` and ``v``; on a mismatch it re-runs
  slow mode for the failing pair so the error still shows full Jacobians.

Complex numbers use the seed's convention. For a complex input ``z = a + ib``
reverse mode returns ``2 * CW = dy/da + i dy/db`` (the conjugate Wirtinger
gradient); the numerical counterpart is assembled from a real perturbation
(``dy/da``) and an imaginary one (``dy/db``). A complex output is checked as
two real functions, its real and its imaginary part, selected with the
cotangents ``1`` and ``1j``. Forward mode propagates the R-linear differential,
so for a complex input it is checked separately along real (tangent ``e_j``)
and imaginary (tangent ``1j e_j``) directions against ``dy/da`` and ``dy/db``.

Jacobians are shown as ``M x N`` matrices (the seed's ``J_f``): row ``r`` is
the output element at C-order flat index ``r``, column ``c`` the input element
at C-order flat index ``c``. Output and input indices in messages are
positions in the tuples the function returns and receives.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import forward_ad as fwAD
from . import reverse
from .backends.namespace import to_kind as _to_kind
from .core.grad_mode import enable_grad
from .core.tensor import Tensor
from .numpy import creation

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

# Fast mode and gradgradcheck draw their random vectors from a private
# generator with this seed: runs are reproducible and the user's
# ``np.random`` state is never touched.
_SEED = 0x5EED
# How many mismatching Jacobian entries a message lists before "... more".
_MAX_ENTRIES = 10
# Batch size of the batched-gradient checks (two is enough to catch batch-axis mix-ups).
_BATCH = 2


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails.

    Examples
    --------
    >>> class Wrong(dualad.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * 3  # should be 2
    >>> try:
    ...     dualad.gradcheck(Wrong.apply, (dualad.tensor([1.0], requires_grad=True),))
    ... except dualad.GradcheckError as e:
    ...     print(type(e).__name__)
    GradcheckError
    """


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _is_inexact(t: Any) -> bool:
    return bool(np.issubdtype(np.dtype(t.dtype), np.inexact))


def _arr(t: Any) -> np.ndarray:
    """A private NumPy copy of a tensor's value (no tangent, no graph)."""
    return np.array(t.detach().numpy(), copy=True)


def _fmt(a: Any) -> str:
    # Local print options so the user's global numpy printing is untouched;
    # large Jacobians are summarised with edge items.
    return np.array2string(np.asarray(a), precision=6, threshold=400, edgeitems=4, max_line_width=100)


def _num(x: Any) -> str:
    x = complex(x)
    return f"{x.real:.6g}" if x.imag == 0 else f"{x:.6g}"


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random unit-norm real vector (uniform entries, like torch.rand, then normalised)."""
    u = rng.random(n)
    norm = np.linalg.norm(u)
    return u / norm if norm > 0 else u


def _mismatch_entries(
    a: np.ndarray,
    n: np.ndarray,
    rtol: float,
    atol: float,
    out_shape: tuple,
    in_shape: tuple,
) -> str:
    """List the Jacobian entries that fail ``isclose`` as (output index, input index)."""
    bad = np.argwhere(~np.isclose(a, n, rtol=rtol, atol=atol))
    lines = [
        f"mismatching entries ({len(bad)} of {a.size}; output index, input index: "
        "numerical vs analytical):"
    ]
    for r, c in bad[:_MAX_ENTRIES]:
        oi = tuple(int(q) for q in np.unravel_index(int(r), out_shape))
        ii = tuple(int(q) for q in np.unravel_index(int(c), in_shape))
        lines.append(f"  output{oi}, input{ii}: {_num(n[r, c])} vs {_num(a[r, c])}")
    if len(bad) > _MAX_ENTRIES:
        lines.append(f"  ... and {len(bad) - _MAX_ENTRIES} more")
    return "\n".join(lines) + "\n"


def _prefix(part: str, what: str, complex_: bool) -> str:
    name = "imaginary" if part == "imag" else "real"
    return f"While considering the {name} part of complex {what} only, " if complex_ else ""


class _Check:
    """One gradcheck run: the function, its inputs, and the derivative computations.

    ``part`` is ``"real"`` or ``"imag"``: in reverse mode it selects the real or
    imaginary part of a complex output (cotangent 1 or 1j); in forward mode it
    selects the real or imaginary direction of a complex input (tangent 1 or 1j).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        inputs: tuple,
        eps: float,
        atol: float,
        rtol: float,
        nondet_tol: float,
        check_grad_dtypes: bool,
    ) -> None:
        self.func = func
        self.inputs = inputs
        self.eps = eps
        self.atol = atol
        self.rtol = rtol
        self.nondet_tol = nondet_tol
        self.check_grad_dtypes = check_grad_dtypes
        self.rng = np.random.default_rng(_SEED)
        self.diff_in = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
        self.outs = _as_tuple(func(*inputs))
        for k, o in enumerate(self.outs):
            if isinstance(o, (float, complex, np.inexact)) or (
                    isinstance(o, np.ndarray) and _is_inexact(o)):
                # (a float or an array made from the inputs has dropped its derivative:
                # passing it over would report a check that checked nothing; an integer or
                # a label has no derivative to check)
                raise TypeError(
                    f"gradcheck: func returned a {type(o).__name__} as output {k}, not a Tensor, "
                    "so there is no derivative to check. Compute the output with dualad operations "
                    "(dualad.numpy, Tensor methods) instead of float(), math or np.asarray, "
                    "which drop the derivative"
                )
        self.float_out = [k for k, o in enumerate(self.outs) if _is_tensor(o) and _is_inexact(o)]
        # Like torch, only outputs that require grad take part in the comparison.
        self.diff_out = [k for k in self.float_out if self.outs[k].requires_grad]
        self.out_ref = {k: _arr(self.outs[k]) for k in self.float_out}
        self.base = {i: _arr(inputs[i]) for i in self.diff_in}
        # Working copies perturbed in place by the finite differences.
        self.work = {i: self.base[i].copy() for i in self.diff_in}

    def _in(self, i: int, a: np.ndarray) -> Any:
        """Values for input ``i`` (perturbed, a tangent) as an array of its kind: a Dask or
        CuPy input gets Dask or CuPy ones (invariant 5 of docs/architecture.md), a NumPy
        input ``a`` itself."""
        return _to_kind(a, self.inputs[i]._data)

    # ------------------------------------------------------------------ numerical
    def _call_at(self, i: int) -> dict[int, np.ndarray]:
        """Evaluate func with input ``i`` replaced by its (perturbed) working copy."""
        args = list(self.inputs)
        # A fresh leaf that still requires grad: functions that differentiate
        # internally (gradgradcheck's v^T J) need it; the user's tensor is untouched.
        args[i] = creation.tensor(self._in(i, self.work[i]), requires_grad=True)
        outs = _as_tuple(self.func(*args))
        res = {}
        for k in self.float_out:
            ref = self.out_ref[k]
            o = outs[k] if k < len(outs) else None
            if not _is_tensor(o):
                raise GradcheckError(
                    f"Expected func to return a tensor as output {k} when input {i} is "
                    f"perturbed by {self.eps}, got {type(o).__name__}."
                )
            a = _arr(o)
            if a.shape != ref.shape or a.dtype != ref.dtype:
                raise GradcheckError(
                    f"Expected func to return outputs with the same shape and dtype when "
                    f"input {i} is perturbed by {self.eps}, but output {k} changed from "
                    f"{ref.shape} {ref.dtype} to {a.shape} {a.dtype}."
                )
            res[k] = a
        return res

    def _fd_elem(self, i: int, j: int, d: complex) -> dict[int, np.ndarray]:
        """Central difference of every output along input ``i``'s element ``j`` by ``d``."""
        w = self.work[i]
        orig = w.flat[j]
        try:
            w.flat[j] = orig - d
            lo = self._call_at(i)
            w.flat[j] = orig + d
            hi = self._call_at(i)
        finally:
            w.flat[j] = orig
        return {k: ((hi[k] - lo[k]) / (2 * abs(d))).reshape(-1) for k in lo}

    def _fd_dir(self, i: int, delta: np.ndarray) -> dict[int, np.ndarray]:
        """Central difference of every output along the direction ``delta`` of input ``i``."""
        w, x = self.work[i], self.base[i]
        h = float(np.linalg.norm(delta)) or 1.0  # empty input: the numerator is 0 anyway
        try:
            w[...] = x - delta
            lo = self._call_at(i)
            w[...] = x + delta
            hi = self._call_at(i)
        finally:
            w[...] = x
        return {k: ((hi[k] - lo[k]) / (2 * h)).reshape(-1) for k in lo}

    def numerical(self, i: int) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray] | None]:
        """Slow numerical Jacobians of every float output w.r.t. input ``i``.

        Returns ``(Da, Db)``: ``Da[k]`` is ``dy_k/da`` (``M x N``), ``Db[k]`` is
        ``dy_k/db`` for a complex input ``a + ib`` (``None`` for a real input).
        """
        n = self.base[i].size
        cplx = np.iscomplexobj(self.base[i])
        da_: dict[int, np.ndarray] = {}
        db_: dict[int, np.ndarray] = {}
        for k in self.float_out:
            dt = np.complex128 if np.iscomplexobj(self.out_ref[k]) else np.float64
            da_[k] = np.zeros((self.out_ref[k].size, n), dt)
            db_[k] = np.zeros((self.out_ref[k].size, n), dt)
        for j in range(n):
            for k, col in self._fd_elem(i, j, self.eps).items():
                da_[k][:, j] = col
            if cplx:
                for k, col in self._fd_elem(i, j, 1j * self.eps).items():
                    db_[k][:, j] = col
        return da_, (db_ if cplx else None)

    @staticmethod
    def combine(da_: np.ndarray, db_: np.ndarray | None, part: str, complex_out: bool) -> np.ndarray:
        """The numerical ``2 * CW`` matrix of one (real) part of an output.

        For the real part ``hr`` of the output: ``d hr/da + i d hr/db``; the
        imaginary part likewise. A real input has no ``db`` term.
        """
        take = (np.real if part == "real" else np.imag) if complex_out else (lambda z: z)
        return take(da_) if db_ is None else take(da_) + 1j * take(db_)

    # ------------------------------------------------------------------ reverse
    def _grad_arrays(self, outs: Sequence[Any], gos: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``da.grad`` of ``outs`` with cotangents ``gos``, as arrays (None -> zeros)."""
        xs = [self.inputs[i] for i in self.diff_in]
        gs = reverse.grad(
            list(outs),
            xs,
            grad_outputs=[creation.as_tensor(_to_kind(g, o._data))
                          for o, g in zip(outs, gos, strict=True)],
            retain_graph=True,
            allow_unused=True,
        )
        res = []
        for i, x, g in zip(self.diff_in, xs, gs, strict=True):
            if g is None:
                res.append(np.zeros(x.shape, np.dtype(x.dtype)))
                continue
            ga = _arr(g)
            if ga.shape != tuple(x.shape):
                raise GradcheckError(
                    f"Analytical gradient has incorrect size: got shape {ga.shape} for "
                    f"input {i} of shape {tuple(x.shape)}."
                )
            if self.check_grad_dtypes and ga.dtype != np.dtype(x.dtype):
                raise GradcheckError(
                    f"Gradient has dtype mismatch: got {ga.dtype} for input {i} of dtype "
                    f"{np.dtype(x.dtype)}."
                )
            res.append(ga)
        return res

    def _cotangent(self, k: int, v: np.ndarray, part: str) -> np.ndarray:
        o = self.outs[k]
        # Cotangent 1j on a complex output selects its imaginary part:
        # Re(conj(1j) * y) = Im(y).
        return (v * (1 if part == "real" else 1j)).reshape(o.shape).astype(np.dtype(o.dtype))

    def _rows_once(self, k: int, part: str) -> dict[int, np.ndarray]:
        o = self.outs[k]
        m = int(np.prod(o.shape, dtype=np.int64))
        jac = {
            i: np.zeros(
                (m, self.base[i].size),
                np.complex128 if np.iscomplexobj(self.base[i]) else np.float64,
            )
            for i in self.diff_in
        }
        for r in range(m):
            e = np.zeros(m)
            e[r] = 1.0
            for i, g in zip(
                self.diff_in, self._grad_arrays([o], [self._cotangent(k, e, part)]), strict=True
            ):
                jac[i][r] = g.reshape(-1)
        return jac

    def _reentrant(self, j1: dict[int, np.ndarray], j2: dict[int, np.ndarray]) -> None:
        for i in self.diff_in:
            if j1[i].size and float(np.max(np.abs(j1[i] - j2[i]))) > self.nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with the same input "
                    "and grad_output multiple times gives different values (input "
                    f"{i}, max difference {float(np.max(np.abs(j1[i] - j2[i]))):.3g}), "
                    f"although the tolerance for nondeterminism is {self.nondet_tol}. If "
                    "this is expected (e.g. atomic adds), pass a larger nondet_tol."
                )

    def analytical_rows(self, k: int, part: str) -> dict[int, np.ndarray]:
        """Reverse-mode Jacobians (``M x N``) of output ``k``'s ``part`` w.r.t. each input."""
        # Computed twice to detect nondeterministic backward rules (nondet_tol).
        j1 = self._rows_once(k, part)
        j2 = self._rows_once(k, part)
        self._reentrant(j1, j2)
        return j1

    # ------------------------------------------------------------------ forward
    def jvp(self, i: int, t: np.ndarray, batched: bool = False) -> dict[int, np.ndarray]:
        """Output tangents when input ``i`` carries tangent ``t`` (None -> zeros)."""
        x = self.inputs[i]
        with fwAD.dual_level():
            args = list(self.inputs)
            # A fresh leaf requiring grad, so a function that runs reverse mode
            # inside (gradgradcheck's fwd-over-rev) can differentiate w.r.t. it.
            leaf = creation.tensor(self._in(i, self.base[i]), requires_grad=True)
            t = self._in(i, t.astype(np.dtype(x.dtype)))
            args[i] = fwAD.make_dual(leaf, creation.as_tensor(t), batched=batched)
            outs = _as_tuple(self.func(*args))
            res = {}
            for k in self.diff_out:
                shape = tuple(self.outs[k].shape)
                want = ((t.shape[0],) if batched else ()) + shape
                tan = fwAD.unpack_dual(outs[k]).tangent
                if tan is None:
                    res[k] = np.zeros(want, np.dtype(self.outs[k].dtype))
                    continue
                ta = _arr(tan)
                if ta.shape != want:
                    raise GradcheckError(
                        f"Forward-mode tangent of output {k} has shape {ta.shape}, expected "
                        f"{want} (tangent on input {i})."
                    )
                if self.check_grad_dtypes and ta.dtype != np.dtype(self.outs[k].dtype):
                    raise GradcheckError(
                        f"Forward grad has dtype mismatch: tangent of output {k} is "
                        f"{ta.dtype}, expected {np.dtype(self.outs[k].dtype)}."
                    )
                res[k] = ta
        return res

    def analytical_cols(self, i: int, part: str) -> dict[int, np.ndarray]:
        """Forward-mode Jacobians (``M x N``) of each output w.r.t. input ``i``.

        ``part`` picks the tangent direction: real ``e_j`` or imaginary ``1j e_j``.
        """
        n = self.base[i].size
        jac = {
            k: np.zeros(
                (self.out_ref[k].size, n),
                np.complex128 if np.iscomplexobj(self.out_ref[k]) else np.float64,
            )
            for k in self.diff_out
        }
        for j in range(n):
            t = np.zeros(self.base[i].shape, np.dtype(self.inputs[i].dtype))
            t.flat[j] = 1 if part == "real" else 1j
            for k, col in self.jvp(i, t).items():
                jac[k][:, j] = col.reshape(-1)
        return jac

    # ------------------------------------------------------------------ messages
    def _slow_msg(self, a: np.ndarray, n: np.ndarray, k: int, i: int, atol: float | None = None) -> str:
        atol = self.atol if atol is None else atol
        return (
            _mismatch_entries(
                a, n, self.rtol, atol, tuple(self.outs[k].shape), tuple(self.base[i].shape)
            )
            + "Jacobians (rows: output elements, columns: input elements, C order):\n"
            + f"numerical:\n{_fmt(n)}\nanalytical:\n{_fmt(a)}\n"
        )

    @staticmethod
    def _header(k: int, i: int, forward: bool, prefix: str) -> str:
        mode = "computed with forward mode " if forward else ""
        return f"{prefix}Jacobian {mode}mismatch for output {k} with respect to input {i},\n"

    def _compare(self, a: np.ndarray, n: np.ndarray, k: int, i: int, forward: bool, prefix: str) -> None:
        if not np.allclose(a, n, rtol=self.rtol, atol=self.atol):
            raise GradcheckError(self._header(k, i, forward, prefix) + self._slow_msg(a, n, k, i))

    # ------------------------------------------------------------------ slow mode
    def slow_backward(self) -> None:
        num = {i: self.numerical(i) for i in self.diff_in}
        for k in self.diff_out:
            cout = np.iscomplexobj(self.out_ref[k])
            for part in ("imag", "real") if cout else ("real",):
                rows = self.analytical_rows(k, part)
                for i in self.diff_in:
                    n = self.combine(
                        num[i][0][k], None if num[i][1] is None else num[i][1][k], part, cout
                    )
                    self._compare(rows[i], n, k, i, False, _prefix(part, "outputs", cout))

    def slow_forward(self) -> None:
        for i in self.diff_in:
            da_, db_ = self.numerical(i)
            cin = db_ is not None
            for part, ref in (("imag", db_), ("real", da_)) if cin else (("real", da_),):
                cols = self.analytical_cols(i, part)
                for k in self.diff_out:
                    self._compare(cols[k], ref[k], k, i, True, _prefix(part, "inputs", cin))

    def check_zero_numerical(self, fast: bool, forward: bool) -> None:
        """No output requires grad: then the function must not depend on the inputs."""
        for i in self.diff_in:
            if fast:
                pieces = [
                    self._fd_dir(
                        i, self.eps * _unit(self.rng, self.base[i].size).reshape(self.base[i].shape)
                    )
                ]
            else:
                da_, db_ = self.numerical(i)
                pieces = [da_] + ([db_] if db_ is not None else [])
            for p in pieces:
                for k, m in p.items():
                    if m.size and not np.allclose(m, 0, rtol=self.rtol, atol=self.atol):
                        mode = "forward" if forward else "backward"
                        raise GradcheckError(
                            f"Numerical gradient for function expected to be zero: no output "
                            f"requires grad ({mode} mode check), but output {k} changes with "
                            f"input {i}:\n{_fmt(m)}"
                        )

    # ------------------------------------------------------------------ fast mode
    def fast_vectors(
        self,
    ) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray | None], dict[int, np.ndarray]]:
        ur = {i: _unit(self.rng, self.base[i].size) for i in self.diff_in}
        ui = {
            i: _unit(self.rng, self.base[i].size) if np.iscomplexobj(self.base[i]) else None
            for i in self.diff_in
        }
        v = {k: _unit(self.rng, self.out_ref[k].size) for k in self.diff_out}
        return ur, ui, v

    def _fast_numerical(self, ur: dict, ui: dict) -> dict[int, tuple[dict, dict | None]]:
        """``J u`` by central differences along ``eps * ur`` (and ``1j * eps * ui``)."""
        res = {}
        for i in self.diff_in:
            shape = self.base[i].shape
            ja = self._fd_dir(i, self.eps * ur[i].reshape(shape))
            jb = None if ui[i] is None else self._fd_dir(i, 1j * self.eps * ui[i].reshape(shape))
            res[i] = (ja, jb)
        return res

    def _fast_fail(
        self, a: Any, n: Any, k: int, i: int, forward: bool, prefix: str, part: str
    ) -> GradcheckError:
        """The fast-mode error, with slow-mode Jacobians of the failing pair for debugging."""
        da_, db_ = self.numerical(i)
        if forward:
            sa = self.analytical_cols(i, part)[k]
            sn = db_[k] if (part == "imag" and db_ is not None) else da_[k]
        else:
            cout = np.iscomplexobj(self.out_ref[k])
            sa = self.analytical_rows(k, part)[i]
            sn = self.combine(da_[k], None if db_ is None else db_[k], part, cout)
        what = "J u" if forward else "v^T J u"
        msg = (
            self._header(k, i, forward, prefix)
            + f"fast mode compares {what} for random u"
            + ("" if forward else " and v")
            + f":\nnumerical: {_fmt(n)}\nanalytical: {_fmt(a)}\n\n"
            + "Recomputing the full Jacobians of this pair in slow mode:\n"
            + self._slow_msg(sa, sn, k, i)
        )
        if sa.size:
            diff = float(np.max(np.abs(sa - sn)))
            msg += f"The max per-element difference (slow mode) is: {diff:.6g}.\n"
        if np.allclose(sa, sn, rtol=self.rtol, atol=self.atol):
            msg += (
                "\nFast gradcheck failed but element-wise differences are small: slow mode "
                "would have passed. The fast-mode tolerance may be too tight for this "
                "function; try fast_mode=False or a larger atol/rtol.\n"
            )
        return GradcheckError(msg)

    def fast_backward(self) -> None:
        ur, ui, v = self.fast_vectors()
        num = self._fast_numerical(ur, ui)
        for k in self.diff_out:
            cout = np.iscomplexobj(self.out_ref[k])
            for part in ("imag", "real") if cout else ("real",):
                go = self._cotangent(k, v[k], part)
                vj1 = self._grad_arrays([self.outs[k]], [go])
                vj2 = self._grad_arrays([self.outs[k]], [go])
                self._reentrant(
                    {i: g.reshape(1, -1) for i, g in zip(self.diff_in, vj1, strict=True)},
                    {i: g.reshape(1, -1) for i, g in zip(self.diff_in, vj2, strict=True)},
                )
                for i, g in zip(self.diff_in, vj1, strict=True):
                    g = g.reshape(-1)
                    ja, jb = num[i]
                    take = (np.real if part == "real" else np.imag) if cout else (lambda z: z)
                    if ui[i] is None:  # R -> R
                        a = g @ ur[i]
                        n = v[k] @ take(ja[k])
                    else:  # C -> R: 2 v^T (Re(CW) ur + i Im(CW) ui)
                        a = g.real @ ur[i] + 1j * (g.imag @ ui[i])
                        n = v[k] @ take(ja[k]) + 1j * (v[k] @ take(jb[k]))
                    # v^T (atol * ones) u: the slow-mode tolerance seen through the reduction.
                    tol = self.atol * float(ur[i].sum()) * float(v[k].sum())
                    if not np.allclose(a, n, rtol=self.rtol, atol=tol):
                        raise self._fast_fail(a, n, k, i, False, _prefix(part, "outputs", cout), part)

    def fast_forward(self) -> None:
        ur, ui, _ = self.fast_vectors()
        num = self._fast_numerical(ur, ui)
        for i in self.diff_in:
            shape = self.base[i].shape
            cin = ui[i] is not None
            dirs = [("imag", 1j * ui[i], num[i][1])] if cin else []
            dirs.append(("real", ur[i], num[i][0]))
            for part, u, ref in dirs:
                ana = self.jvp(i, u.reshape(shape))
                tol = self.atol * float(np.real(u).sum() + np.imag(u).sum())
                for k in self.diff_out:
                    a = ana[k].reshape(-1)
                    if not np.allclose(a, ref[k], rtol=self.rtol, atol=tol):
                        raise self._fast_fail(a, ref[k], k, i, True, _prefix(part, "inputs", cin), part)

    # ------------------------------------------------------------------ extra checks
    def _random_like(self, shape: tuple, dtype: Any) -> np.ndarray:
        dt = np.dtype(dtype)
        x = self.rng.standard_normal(shape)
        if np.issubdtype(dt, np.complexfloating):
            x = x + 1j * self.rng.standard_normal(shape)
        return x.astype(dt)

    def batched_backward(self) -> None:
        """Batched cotangents (one ``is_grads_batched`` pass) vs separate passes."""
        xs = [self.inputs[i] for i in self.diff_in]
        for k in self.diff_out:
            o = self.outs[k]
            gos = self._random_like((_BATCH, *tuple(o.shape)), o.dtype)
            expected = [self._grad_arrays([o], [g]) for g in gos]
            try:
                got = reverse.grad(
                    o,
                    xs,
                    grad_outputs=creation.as_tensor(_to_kind(gos, o._data)),
                    retain_graph=True,
                    allow_unused=True,
                    is_grads_batched=True,
                )
            except (RuntimeError, ValueError, TypeError) as e:
                raise GradcheckError(f"Batched gradient computation failed for output {k}: {e}") from e
            for pos, (i, g) in enumerate(zip(self.diff_in, got, strict=True)):
                exp = np.stack([e[pos] for e in expected])
                res = np.zeros_like(exp) if g is None else _arr(g)
                if res.shape != exp.shape or not np.allclose(res, exp):
                    raise GradcheckError(
                        f"For output {k} and input {i}: batched gradient mismatch. Computing "
                        f"the gradients of {_BATCH} cotangents in one is_grads_batched=True "
                        "pass gave a different result than computing them one by one.\n\n"
                        f"Got:\n{_fmt(res)}\n\nExpected:\n{_fmt(exp)}\n"
                    )

    def batched_forward(self) -> None:
        """Batched tangents (``make_dual(..., batched=True)``) vs separate passes."""
        for i in self.diff_in:
            ts = self._random_like((_BATCH, *self.base[i].shape), self.inputs[i].dtype)
            expected = [self.jvp(i, t) for t in ts]
            try:
                got = self.jvp(i, ts, batched=True)
            except GradcheckError:  # already a precise report; don't re-wrap it below
                raise
            except (RuntimeError, ValueError, TypeError) as e:
                raise GradcheckError(
                    f"Batched forward gradient computation failed for input {i}: {e}"
                ) from e
            for k in self.diff_out:
                exp = np.stack([e[k] for e in expected])
                if not np.allclose(got[k], exp):
                    raise GradcheckError(
                        f"For output {k} and input {i}: batched forward gradient mismatch. "
                        f"Pushing {_BATCH} tangents in one make_dual(..., batched=True) pass "
                        "gave a different result than pushing them one by one.\n\n"
                        f"Got:\n{_fmt(got[k])}\n\nExpected:\n{_fmt(exp)}\n"
                    )

    def zero_cotangents(self) -> None:
        """Backward of zero cotangents must give zero (or no) gradients of the right kind."""
        outs = [self.outs[k] for k in self.diff_out]
        zeros = [np.zeros(tuple(o.shape), np.dtype(o.dtype)) for o in outs]
        for i, g in zip(self.diff_in, self._grad_arrays(outs, zeros), strict=True):
            if np.any(g != 0):
                raise GradcheckError(
                    f"backward not multiplied by grad_output: zero cotangents for every output "
                    f"gave a nonzero gradient for input {i}:\n{_fmt(g)}"
                )

    def undefined_backward(self) -> None:
        """Leaving an output out of ``da.grad`` (its cotangent undefined) must be handled.

        dualad's analogue of torch's undefined output gradients: the left-out
        output's backward sees no (or a zero) cotangent; with zero cotangents on
        the others, every input gradient must be zero or None.
        """
        if len(self.diff_out) < 2:
            return
        for skip in self.diff_out:
            keep = [k for k in self.diff_out if k != skip]
            outs = [self.outs[k] for k in keep]
            zeros = [np.zeros(tuple(o.shape), np.dtype(o.dtype)) for o in outs]
            try:
                grads = self._grad_arrays(outs, zeros)
            except GradcheckError:  # already a precise report; don't re-wrap it below
                raise
            except RuntimeError as e:
                raise GradcheckError(
                    f"Expected backward to handle an undefined grad for output {skip} (it "
                    f"was left out of da.grad), but it raised: {e}"
                ) from e
            for i, g in zip(self.diff_in, grads, strict=True):
                if np.any(g != 0):
                    raise GradcheckError(
                        "Expected all input grads to be undefined or zero when all output "
                        f"grads are undefined or zero (output {skip} undefined), but input "
                        f"{i} got:\n{_fmt(g)}"
                    )

    def undefined_forward(self) -> None:
        """A materialised zero tangent and no tangent must give the same output tangents."""
        us = {i: self._random_like(self.base[i].shape, self.inputs[i].dtype) for i in self.diff_in}
        for i in self.diff_in:
            results = []
            for zero_tangent in (True, False):
                with fwAD.dual_level():
                    args = list(self.inputs)
                    # Leaves requiring grad, as in jvp(): the function may run reverse mode.
                    for j in self.diff_in:
                        if j != i:
                            leaf = creation.tensor(self._in(j, self.base[j]), requires_grad=True)
                            args[j] = fwAD.make_dual(leaf, creation.as_tensor(self._in(j, us[j])))
                    args[i] = creation.tensor(self._in(i, self.base[i]), requires_grad=True)
                    if zero_tangent:
                        zero = self._in(i, np.zeros_like(us[i]))
                        args[i] = fwAD.make_dual(args[i], creation.as_tensor(zero))
                    outs = _as_tuple(self.func(*args))
                    tans = {}
                    for k in self.float_out:
                        t = fwAD.unpack_dual(outs[k]).tangent
                        tans[k] = np.zeros(self.out_ref[k].shape) if t is None else _arr(t)
                    results.append(tans)
            for k in self.float_out:
                if not np.allclose(results[0][k], results[1][k]):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output {k} when input {i} has an "
                        f"undefined tangent: a materialised zero tangent gave\n"
                        f"{_fmt(results[0][k])}\nbut no tangent gave\n{_fmt(results[1][k])}"
                    )


def _nonfinite_note(inputs: tuple) -> str | None:
    """Why a failed check may not be the function's fault: an input that requires grad
    holds NaN (or inf), where the finite differences, and the derivative, are NaN or
    meaningless. Read only when a check has failed (a function that handles NaN, such as
    nansum, is checked at such inputs as usual)."""
    for idx, x in enumerate(inputs):
        if not (_is_tensor(x) and x.requires_grad):
            continue
        v = np.asarray(x.detach().numpy())
        bad = ~np.isfinite(v)
        if not bad.any():
            continue
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        what = "NaN" if np.isnan(v).any() else "inf"
        return (
            f"Note: input #{idx} holds {what} (first at index {where}; {int(bad.sum())} of "
            f"{v.size} elements are not finite): the finite differences, and the derivative, "
            f"are {what} or meaningless there. Check at a point where the function and its "
            f"derivative are finite (replace the {what}, or pass that input without "
            "requires_grad if it is a constant).")
    return None


def _check_inputs(inputs: tuple) -> None:
    any_diff = False
    for idx, x in enumerate(inputs):
        if _is_tensor(x) and x.requires_grad:
            any_diff = True
            if np.dtype(x.dtype) not in (np.dtype(np.float64), np.dtype(np.complex128)):
                warnings.warn(
                    f"Input #{idx} requires gradient and is {np.dtype(x.dtype)}, not float64 or "
                    "complex128: finite differences at eps=1e-6 are unreliable in lower "
                    "precision, so this check will likely fail.",
                    UserWarning,
                    stacklevel=3,
                )
    if not any_diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of them have requires_grad=True."
        )


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    r"""Check analytical derivatives of ``func`` against finite differences.

    The numerical Jacobian is computed by central differences, perturbing each
    element of each input that requires grad by ``eps``; the analytical one by
    reverse mode (``check_backward_ad``) and/or forward mode
    (``check_forward_ad``). They must satisfy
    ``allclose(analytical, numerical, rtol, atol)``. Complex inputs and outputs
    follow the conjugate-Wirtinger (``2 * CW``) convention; see the module
    docstring.

    Parameters
    ----------
    func : callable
        Takes the inputs positionally and returns a Tensor or a tuple of
        Tensors. Only float/complex Tensor outputs that require grad are
        checked; other outputs are ignored.
    inputs : Tensor or tuple
        The arguments of ``func``. Tensors with ``requires_grad=True`` are
        differentiated; anything else is passed through unchanged. Use float64 /
        complex128: ``eps=1e-6`` is too small for float32.
    eps : float
        Finite-difference step.
    atol, rtol : float
        Absolute and relative tolerances of the comparison.
    raise_exception : bool
        If True a failure raises :class:`GradcheckError`; if False it returns
        False.
    nondet_tol : float
        Tolerance for nondeterminism: backward is run twice with the same
        cotangents and the results may differ by at most this much.
    check_undefined_grad : bool
        Check that backward handles outputs left out of ``da.grad`` (their
        cotangent undefined) by giving zero or no gradients, and that in
        forward mode a zero tangent and no tangent agree.
    check_grad_dtypes : bool
        Check that gradients (tangents) have the dtype of their input (output).
    check_batched_grad : bool
        Check that ``da.grad(..., is_grads_batched=True)`` matches separate
        backward passes. Requires ``check_backward_ad``.
    check_batched_forward_grad : bool
        Check that ``make_dual(..., batched=True)`` matches separate forward
        passes. Requires ``check_forward_ad``.
    check_forward_ad : bool
        Check forward-mode derivatives.
    check_backward_ad : bool
        Check reverse-mode derivatives.
    fast_mode : bool
        Compare ``v^T J u`` (reverse) and ``J u`` (forward) for random
        unit-norm ``u`` and ``v`` instead of full Jacobians. The vectors come
        from a private, fixed-seed generator (``np.random``'s global state is
        untouched). A failure re-runs slow mode for the failing pair so the
        error shows the full Jacobians.
    masked : bool or None
        Accepted for torch compatibility. torch uses it for sparse and masked
        tensors; dualad tensors are always dense, so every element is
        perturbed and compared and the flag has no effect.

    Returns
    -------
    bool
        True if every check passes; False on failure when
        ``raise_exception=False``.

    Raises
    ------
    GradcheckError
        On a failed check when ``raise_exception=True``. A Jacobian mismatch
        names the output and input (positions in the output and input tuples),
        lists the mismatching entries and prints both Jacobians (rows: output
        elements, columns: input elements, both in C order).
    ValueError
        If no input requires grad or the ``check_*`` flags are inconsistent.

    Notes
    -----
    Over 80 lines by its parameters' descriptions (torch's signature); the body
    checks the flags and hands the work to ``_gradcheck``.

    Examples
    --------
    >>> import dualad as da
    >>> import dualad.numpy as dnp
    >>> x = da.randn(3, dtype="float64", requires_grad=True)
    >>> da.gradcheck(lambda x: dnp.sin(x) * x, (x,), check_forward_ad=True)
    True
    >>> z = da.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    >>> da.gradcheck(lambda z: dnp.abs(z) ** 2, (z,), fast_mode=True)
    True
    """
    _check_flags(check_forward_ad, check_backward_ad, check_batched_grad,
                 check_batched_forward_grad)
    try:
        return _gradcheck(
            func, _as_tuple(inputs), eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
            check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
            check_batched_grad=check_batched_grad,
            check_batched_forward_grad=check_batched_forward_grad,
            check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad,
            fast_mode=fast_mode,
        )
    except GradcheckError as e:
        if not raise_exception:
            return False
        note = _nonfinite_note(_as_tuple(inputs))
        if note is None or note in str(e):
            raise
        raise GradcheckError(f"{e}\n{note}") from e


def _check_flags(check_forward_ad: bool, check_backward_ad: bool, check_batched_grad: bool,
                 check_batched_forward_grad: bool) -> None:
    """Raise ``ValueError`` for ``gradcheck``'s flags that contradict each other."""
    if not (check_forward_ad or check_backward_ad):
        raise ValueError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise ValueError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise ValueError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")


def _gradcheck(
    func: Callable[..., Any],
    inputs: tuple,
    *,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
    check_batched_grad: bool,
    check_batched_forward_grad: bool,
    check_forward_ad: bool,
    check_backward_ad: bool,
    fast_mode: bool,
) -> bool:
    _check_inputs(inputs)
    c = _Check(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    if not c.diff_out:
        # Nothing to differentiate: the function must then be locally constant.
        c.check_zero_numerical(fast_mode, forward=not check_backward_ad)
        return True
    if check_backward_ad:
        (c.fast_backward if fast_mode else c.slow_backward)()
    if check_forward_ad:
        (c.fast_forward if fast_mode else c.slow_forward)()
        if check_undefined_grad:
            c.undefined_forward()
    if check_batched_forward_grad:
        c.batched_forward()
    if not check_backward_ad:
        return True
    if check_batched_grad:
        c.batched_backward()
    c.zero_cotangents()
    if check_undefined_grad:
        c.undefined_backward()
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    r"""Check second derivatives of ``func`` against finite differences.

    Runs :func:`gradcheck` on ``F(x, v) = v^T J_f(x)``, the reverse-mode
    gradient of ``func`` computed with ``create_graph=True``. This checks that
    the backward pass is itself correctly differentiable, with respect to both
    the inputs ``x`` and the cotangents ``v``.

    Parameters
    ----------
    func, inputs
        As for :func:`gradcheck`.
    grad_outputs : Tensor or tuple, optional
        The cotangents ``v``, one per output of ``func`` that requires grad.
        Those with ``requires_grad=True`` are differentiated too. By default
        they are random (uniform in [-1, 1), from a private fixed-seed
        generator), have the outputs' shapes and dtypes, and require grad.
    gen_non_contig_grad_outputs : bool
        Make the random ``grad_outputs`` non-contiguous arrays.
    check_fwd_over_rev : bool
        Check forward mode through the backward pass (Hessian-vector products).
    check_rev_over_rev : bool
        Check reverse mode through the backward pass (double backward).
    eps, atol, rtol, raise_exception, nondet_tol
        As for :func:`gradcheck`.
    check_undefined_grad, check_grad_dtypes, check_batched_grad, fast_mode, masked
        As for :func:`gradcheck`.

    Returns
    -------
    bool
        True if every check passes; False on failure when
        ``raise_exception=False``.

    Examples
    --------
    >>> import dualad as da
    >>> import dualad.numpy as dnp
    >>> x = da.randn(4, dtype="float64", requires_grad=True)
    >>> da.gradgradcheck(lambda x: x**3 * dnp.sin(x), (x,), check_fwd_over_rev=True)
    True
    """
    _check_gradgrad_flags(check_fwd_over_rev, check_rev_over_rev, check_undefined_grad,
                          check_batched_grad)
    xs = _as_tuple(inputs)
    gos = _as_tuple(grad_outputs) if grad_outputs is not None else \
        _default_grad_outputs(func, xs, gen_non_contig_grad_outputs)
    return gradcheck(
        _backward_of(func, xs), xs + gos, eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev, fast_mode=fast_mode, masked=masked,
    )


def _check_gradgrad_flags(check_fwd_over_rev: bool, check_rev_over_rev: bool,
                          check_undefined_grad: bool, check_batched_grad: bool) -> None:
    """Raise ``ValueError`` for ``gradgradcheck``'s flags that contradict each other."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise ValueError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise ValueError(
            "Setting check_undefined_grad=True in gradgradcheck requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise ValueError(
            "Setting check_batched_grad=True in gradgradcheck requires check_rev_over_rev to be True"
        )


def _default_grad_outputs(func: Callable[..., Any], xs: tuple, noncontig: bool) -> tuple:
    """``gradgradcheck``'s cotangents when none are given: random, one per output of
    ``func`` that requires grad, from a private fixed-seed generator."""
    rng = np.random.default_rng(_SEED + 1)
    outs = [o for o in _as_tuple(func(*xs)) if _is_tensor(o) and o.requires_grad]
    return tuple(_random_cotangent(rng, o, noncontig) for o in outs)


def _backward_of(func: Callable[..., Any], xs: tuple) -> Callable[..., tuple]:
    """``F(x, v) = v^T J_func(x)``: the function ``gradgradcheck`` runs ``gradcheck`` on,
    of the inputs ``xs`` and then the cotangents, recorded (``create_graph``)."""
    n_in = len(xs)
    diff_in = [i for i, x in enumerate(xs) if _is_tensor(x) and x.requires_grad]

    def vjp(*args: Any) -> tuple:
        ins, vs = args[:n_in], args[n_in:]
        # gradcheck may call this in any grad mode; the inner backward must be recorded.
        with enable_grad():
            outs = [o for o in _as_tuple(func(*ins)) if _is_tensor(o) and o.requires_grad]
            gs = reverse.grad(outs, [ins[i] for i in diff_in], list(vs), create_graph=True,
                              allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return vjp


def _random_cotangent(rng: np.random.Generator, o: Any, noncontig: bool) -> Any:
    dt = np.dtype(o.dtype)
    shape = tuple(o.shape)
    v = rng.uniform(-1, 1, shape)
    if np.issubdtype(dt, np.complexfloating):
        v = v + 1j * rng.uniform(-1, 1, shape)
    v = v.astype(dt)
    if o._data.__class__ is not np.ndarray:  # of the output's kind (a Dask array has no strides)
        return creation.tensor(_to_kind(v, o._data), requires_grad=True)
    if noncontig and v.size > 1:
        # Every other element of a wider buffer: a strided, non-contiguous view.
        buf = np.zeros((*shape, 2), dt)
        buf[..., 0] = v
        v = buf[..., 0]
        return creation.as_tensor(v).requires_grad_()
    return creation.tensor(v, requires_grad=True)
