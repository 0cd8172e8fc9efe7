"""Tensor's methods and operators: their names, signatures and documentation, in one place.

``class Tensor(AutogradMethods, ArrayMethods)`` (``dualad/core/tensor.py``) inherits the
two classes below. Their methods cannot be written in the core: an array method is
NumPy's argument handling (``dualad.numpy``) on primitives (``dualad.rules``), ``backward``
is reverse mode (``dualad.reverse``), and the core imports none of the layers above it.
So each method here is a stub that calls its meaning in ``methods``, a table the higher
layers fill by name where they define it::

    @tensor_method("backward")
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        ...

(``dualad/_tensor_autograd.py``; the operators' meanings are in ``dualad/rules/__init__.py``,
the array methods' in ``dualad/numpy/_methods.py``, ``__array_ufunc__`` and
``__array_function__`` in ``dualad/numpy/_interop.py``, ``compute`` in
``dualad/backends/dask.py``.) ``tests/core/test_layers.py`` checks that every stub has a
meaning and every meaning a stub. This module imports nothing of dualad: the core imports it.

The fast layer gives some operators a generated function of the same meaning, set on
``Tensor`` itself (``rules.register_operator``): it saves the stub's call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

methods: dict[str, Callable[..., Any]] = {}
"""Each method's meaning, by the method's name (``"__add__"``, ``"sum"``, ``"backward"``)."""


def tensor_method(name: str, document: bool = False) -> Callable[[_F], _F]:
    """Register the decorated function as the meaning of Tensor's method ``name``.

    Parameters
    ----------
    name : str
        The method's name, as declared in ``ArrayMethods`` or ``AutogradMethods``.
    document : bool
        Append the function's docstring to the method's: an array method is documented
        as the ``dualad.numpy`` function it calls (``help(t.sum)`` shows ``dnp.sum``'s).

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.
    """

    def register(fn: _F) -> _F:
        methods[name] = fn
        stub = _declared(name)
        if document and fn.__doc__ and callable(stub):
            stub.__doc__ = f"{stub.__doc__}\n\n{inspect.cleandoc(fn.__doc__)}"
        return fn

    return register


def _declared(name: str) -> Any:
    for cls in (AutogradMethods, ArrayMethods):
        if name in cls.__dict__:
            return cls.__dict__[name]
        if name.endswith(".setter") and isinstance(cls.__dict__.get(name[:-7]), property):
            return cls.__dict__[name[:-7]].fset
    raise KeyError(f"Tensor declares no method {name!r} (dualad._tensor_methods)")


def declared() -> set[str]:
    """The names of the methods declared here (each needs a meaning in ``methods``); an
    assignable property's setter is ``"<name>.setter"``."""
    names = set()
    for cls in (AutogradMethods, ArrayMethods):
        for n, v in cls.__dict__.items():
            if callable(v) or isinstance(v, property):
                names.add(n)
            if isinstance(v, property) and v.fset is not None:
                names.add(f"{n}.setter")
    return names


class AutogradMethods:
    """Tensor's reverse-mode methods, and copying, pickling, formatting and conversions
    (which must decide what becomes of a derivative); their meaning is in
    ``dualad/_tensor_autograd.py``."""

    __slots__ = ()

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor into the leaves' ``.grad``.

        Examples
        --------
        >>> x = dualad.tensor([3.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([6.])
        """
        return methods["backward"](self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook: Callable[[Any], Any]) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.

        Examples
        --------
        >>> x = dualad.tensor([1.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> (x * 3).sum().backward()
        >>> x.grad
        tensor([6.])
        """
        return methods["register_hook"](self, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Any], Any]) -> Any:
        """Call ``hook(tensor)`` after a leaf's ``.grad`` was accumulated.

        Examples
        --------
        >>> w = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> seen = []
        >>> h = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        >>> (w * 3).sum().backward(); seen
        [[3.0, 3.0]]
        """
        return methods["register_post_accumulate_grad_hook"](self, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for a non-leaf tensor after backward.

        Examples
        --------
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * x
        >>> y.retain_grad()
        >>> (y * 3).sum().backward(); y.grad
        tensor([3., 3.])
        """
        return methods["retain_grad"](self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle (any protocol) the array and ``requires_grad``; the graph, hooks and tangents
        stay behind (the copy is a leaf), as torch does."""
        return methods["__reduce_ex__"](self, protocol)

    def __copy__(self) -> Any:
        """``copy.copy(t)``: a copy of the data, as NumPy's ``copy.copy`` of an array (and
        ``t.copy()``), differentiable: the copy keeps ``t``'s history and tangents.

        torch's ``copy.copy`` shares the memory; NumPy code relies on getting its own
        (``scipy.integrate.odeint`` copies ``y0`` with it, then integrates in place).

        Examples
        --------
        >>> import copy
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> y = copy.copy(x); y
        tensor([1., 2.], grad_fn=<PositiveBackward0>)
        >>> (3 * y).sum().backward(); x.grad
        tensor([3., 3.])
        """
        return methods["__copy__"](self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """``copy.deepcopy(t)``: a copy of the data. A leaf gives a new leaf (torch's rule:
        the same ``requires_grad``, ``.grad`` deep-copied too, no hooks); a tensor with
        history or a tangent gives the differentiable copy of ``copy.copy`` (torch raises for
        the first and drops the tangent of the second; NumPy code expects the value, and
        dualad keeps its derivative).

        Examples
        --------
        >>> import copy
        >>> w = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> w2 = copy.deepcopy(w); w2.is_leaf, w2.requires_grad, w2 is w
        (True, True, False)
        """
        return methods["__deepcopy__"](self, memo)

    def __format__(self, format_spec: str) -> str:
        """``format(t, spec)`` and f-strings: a 0-d tensor formats its value, as NumPy's
        scalars and torch's 0-d tensors do (``f"{loss:.3f}"``; any derivative is left out of
        the text); a tensor of more dimensions takes only the empty spec (its ``str``), as
        NumPy's arrays and torch's tensors.

        Examples
        --------
        >>> loss = dualad.tensor([1.0, 2.0], requires_grad=True).sum()
        >>> f"{loss:.3f}"
        '3.000'
        """
        return methods["__format__"](self, format_spec)

    # -- leaving autodiff: a conversion that would drop a derivative warns or raises -------
    def __float__(self) -> float:
        """``float(t)``: a one-element tensor's value; warns if it carries a derivative."""
        return methods["__float__"](self)

    def __int__(self) -> int:
        """``int(t)``: a one-element tensor's value; warns if it carries a derivative."""
        return methods["__int__"](self)

    def __complex__(self) -> complex:
        """``complex(t)``: a one-element tensor's value; warns if it carries a derivative."""
        return methods["__complex__"](self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """``np.asarray(t)``: the array; raises if that would drop a derivative."""
        return methods["__array__"](self, dtype, copy)

    def numpy(self, *, force: bool = False) -> Any:
        """The array this tensor wraps (shared, not copied).

        Raises ``RuntimeError`` if the tensor requires grad or carries a
        tangent, as converting would silently drop its derivatives; call
        ``t.detach().numpy()`` (or pass ``force=True``) to mean it.

        Examples
        --------
        >>> dualad.tensor([1.0, 2.0]).numpy()
        array([1., 2.])
        >>> dualad.tensor([1.0], requires_grad=True).detach().numpy()
        array([1.])
        """
        return methods["numpy"](self, force)

    # -- the gradient: .grad ----------------------------------------------------------------
    @property
    def grad(self) -> Any:
        """The gradient backward accumulated into this tensor (a leaf's, or a non-leaf's
        that retains it), None before; assignable (a Tensor of this shape and dtype, or None).

        Examples
        --------
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward(); x.grad
        tensor([2., 4.])
        """
        return methods["grad"](self)

    @grad.setter
    def grad(self, value: Any) -> None:
        methods["grad.setter"](self, value)

    @grad.deleter
    def grad(self) -> None:
        methods["grad.setter"](self, None)


class ArrayMethods:
    """Tensor's operators and NumPy's array methods. An operator is one primitive's call
    (``x + y`` is ``apply(add, x, y)``; their meanings are in ``dualad/rules/__init__.py``);
    an array method is the ``dualad.numpy`` function of its name (``t.sum(0)`` is
    ``dnp.sum(t, 0)``; ``dualad/numpy/_methods.py``); ndarray's methods that would bypass
    derivative tracking (raw memory access, in-place resizing) raise ``TypeError`` with the
    reason the NumPy coverage table gives (``dualad/numpy/_coverage.py``)."""

    __slots__ = ()

    # -- arithmetic and comparison: one primitive each --------------------------------------
    def __add__(self, other: Any) -> Any:
        """``self + other`` (the primitive ``add``)."""
        return methods["__add__"](self, other)

    def __radd__(self, other: Any) -> Any:
        """``other + self`` (the primitive ``add``)."""
        return methods["__radd__"](self, other)

    def __sub__(self, other: Any) -> Any:
        """``self - other`` (the primitive ``subtract``)."""
        return methods["__sub__"](self, other)

    def __rsub__(self, other: Any) -> Any:
        """``other - self`` (the primitive ``subtract``)."""
        return methods["__rsub__"](self, other)

    def __mul__(self, other: Any) -> Any:
        """``self * other`` (the primitive ``multiply``)."""
        return methods["__mul__"](self, other)

    def __rmul__(self, other: Any) -> Any:
        """``other * self`` (the primitive ``multiply``)."""
        return methods["__rmul__"](self, other)

    def __truediv__(self, other: Any) -> Any:
        """``self / other`` (the primitive ``divide``)."""
        return methods["__truediv__"](self, other)

    def __rtruediv__(self, other: Any) -> Any:
        """``other / self`` (the primitive ``divide``)."""
        return methods["__rtruediv__"](self, other)

    def __floordiv__(self, other: Any) -> Any:
        """``self // other`` (the primitive ``floor_divide``: no derivative)."""
        return methods["__floordiv__"](self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        """``other // self`` (the primitive ``floor_divide``: no derivative)."""
        return methods["__rfloordiv__"](self, other)

    def __mod__(self, other: Any) -> Any:
        """``self % other`` (the primitive ``remainder``)."""
        return methods["__mod__"](self, other)

    def __rmod__(self, other: Any) -> Any:
        """``other % self`` (the primitive ``remainder``)."""
        return methods["__rmod__"](self, other)

    def __divmod__(self, other: Any) -> Any:
        """``divmod(self, other)``: ``(self // other, self % other)``, as ``dnp.divmod``."""
        return methods["__divmod__"](self, other)

    def __rdivmod__(self, other: Any) -> Any:
        """``divmod(other, self)``, as ``dnp.divmod``."""
        return methods["__rdivmod__"](self, other)

    def __pow__(self, other: Any) -> Any:
        """``self ** other`` (the primitive ``power``; ``square``, ``positive`` or
        ``reciprocal`` for a Python exponent 2, 1 or -1 on a float or complex tensor)."""
        return methods["__pow__"](self, other)

    def __rpow__(self, other: Any) -> Any:
        """``other ** self`` (the primitive ``power``)."""
        return methods["__rpow__"](self, other)

    def __matmul__(self, other: Any) -> Any:
        """``self @ other``, as ``dnp.matmul``."""
        return methods["__matmul__"](self, other)

    def __rmatmul__(self, other: Any) -> Any:
        """``other @ self``, as ``dnp.matmul``."""
        return methods["__rmatmul__"](self, other)

    def __neg__(self) -> Any:
        """``-self`` (the primitive ``negative``)."""
        return methods["__neg__"](self)

    def __pos__(self) -> Any:
        """``+self`` (the primitive ``positive``)."""
        return methods["__pos__"](self)

    def __abs__(self) -> Any:
        """``abs(self)`` (the primitive ``abs``)."""
        return methods["__abs__"](self)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        """``self == other``, elementwise (the primitive ``equal``: a boolean tensor)."""
        return methods["__eq__"](self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        """``self != other``, elementwise (the primitive ``not_equal``)."""
        return methods["__ne__"](self, other)

    def __lt__(self, other: Any) -> Any:
        """``self < other``, elementwise (the primitive ``less``)."""
        return methods["__lt__"](self, other)

    def __le__(self, other: Any) -> Any:
        """``self <= other``, elementwise (the primitive ``less_equal``)."""
        return methods["__le__"](self, other)

    def __gt__(self, other: Any) -> Any:
        """``self > other``, elementwise (the primitive ``greater``)."""
        return methods["__gt__"](self, other)

    def __ge__(self, other: Any) -> Any:
        """``self >= other``, elementwise (the primitive ``greater_equal``)."""
        return methods["__ge__"](self, other)

    # -- bitwise: integer and boolean tensors, no derivative ---------------------------------
    def __and__(self, other: Any) -> Any:
        """``self & other`` (the primitive ``bitwise_and``)."""
        return methods["__and__"](self, other)

    def __rand__(self, other: Any) -> Any:
        """``other & self`` (the primitive ``bitwise_and``)."""
        return methods["__rand__"](self, other)

    def __or__(self, other: Any) -> Any:
        """``self | other`` (the primitive ``bitwise_or``)."""
        return methods["__or__"](self, other)

    def __ror__(self, other: Any) -> Any:
        """``other | self`` (the primitive ``bitwise_or``)."""
        return methods["__ror__"](self, other)

    def __xor__(self, other: Any) -> Any:
        """``self ^ other`` (the primitive ``bitwise_xor``)."""
        return methods["__xor__"](self, other)

    def __rxor__(self, other: Any) -> Any:
        """``other ^ self`` (the primitive ``bitwise_xor``)."""
        return methods["__rxor__"](self, other)

    def __invert__(self) -> Any:
        """``~self`` (the primitive ``invert``)."""
        return methods["__invert__"](self)

    # -- in place: the result written into self (a tracked write: ``dualad.rules.inplace``);
    # on a 0-d tensor that stands for a NumPy scalar, ``self op other`` rebound instead
    def __iadd__(self, other: Any) -> Any:
        """``self += other``."""
        return methods["__iadd__"](self, other)

    def __isub__(self, other: Any) -> Any:
        """``self -= other``."""
        return methods["__isub__"](self, other)

    def __imul__(self, other: Any) -> Any:
        """``self *= other``."""
        return methods["__imul__"](self, other)

    def __itruediv__(self, other: Any) -> Any:
        """``self /= other``."""
        return methods["__itruediv__"](self, other)

    def __ifloordiv__(self, other: Any) -> Any:
        """``self //= other``."""
        return methods["__ifloordiv__"](self, other)

    def __imod__(self, other: Any) -> Any:
        """``self %= other``."""
        return methods["__imod__"](self, other)

    def __ipow__(self, other: Any) -> Any:
        """``self **= other``."""
        return methods["__ipow__"](self, other)

    def __imatmul__(self, other: Any) -> Any:
        """``self @= other``."""
        return methods["__imatmul__"](self, other)

    def __iand__(self, other: Any) -> Any:
        """``self &= other``: only on a 0-d tensor that stands for a NumPy scalar."""
        return methods["__iand__"](self, other)

    def __ior__(self, other: Any) -> Any:
        """``self |= other``: only on a 0-d tensor that stands for a NumPy scalar."""
        return methods["__ior__"](self, other)

    def __ixor__(self, other: Any) -> Any:
        """``self ^= other``: only on a 0-d tensor that stands for a NumPy scalar."""
        return methods["__ixor__"](self, other)

    # -- indexing -----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        """``self[key]``, NumPy's indexing (a basic index gives a view)."""
        return methods["__getitem__"](self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """``self[key] = value``: a tracked in-place write (``dualad.rules.inplace``)."""
        return methods["__setitem__"](self, key, value)

    # -- NumPy's protocols: NumPy's own functions called on a Tensor come to dualad.numpy ----
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.sin(t)``, ``np.add(t, 1)``, ...: NumPy's ufuncs on a Tensor (``dualad.numpy``'s)."""
        return methods["__array_ufunc__"](self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.sum(t)``, ``np.linalg.solve(A, t)``, ...: NumPy's functions on a Tensor."""
        return methods["__array_function__"](self, func, types, args, kwargs)

    # -- properties ---------------------------------------------------------------------------
    @property
    def T(self) -> Any:
        """The transpose (a view), as ``ndarray.T``."""
        return methods["T"](self)

    @property
    def mT(self) -> Any:
        """The transpose of the last two axes (a stack of matrices), as ``ndarray.mT``."""
        return methods["mT"](self)

    @property
    def real(self) -> Any:
        """The real part, as ``ndarray.real``."""
        return methods["real"](self)

    @property
    def imag(self) -> Any:
        """The imaginary part, as ``ndarray.imag``."""
        return methods["imag"](self)

    # -- array methods: the dualad.numpy function of the same name ------------------------------
    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.sum``: ``dualad.numpy.sum(self, ...)``."""
        return methods["sum"](self, axis, dtype, keepdims)

    def mean(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.mean``: ``dualad.numpy.mean(self, ...)``."""
        return methods["mean"](self, axis, dtype, keepdims)

    def prod(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.prod``: ``dualad.numpy.prod(self, ...)``."""
        return methods["prod"](self, axis, dtype, keepdims)

    def var(self, axis: Any = None, dtype: Any = None, ddof: float = 0,
            keepdims: bool = False) -> Any:
        """``ndarray.var``: ``dualad.numpy.var(self, ...)``."""
        return methods["var"](self, axis, dtype, ddof, keepdims)

    def std(self, axis: Any = None, dtype: Any = None, ddof: float = 0,
            keepdims: bool = False) -> Any:
        """``ndarray.std``: ``dualad.numpy.std(self, ...)``."""
        return methods["std"](self, axis, dtype, ddof, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.max``: ``dualad.numpy.amax(self, ...)``."""
        return methods["max"](self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.min``: ``dualad.numpy.amin(self, ...)``."""
        return methods["min"](self, axis, keepdims)

    def ptp(self, axis: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.ptp`` (NumPy 1's): ``dualad.numpy.ptp(self, ...)``."""
        return methods["ptp"](self, axis, keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None) -> Any:
        """``ndarray.cumsum``: ``dualad.numpy.cumsum(self, ...)``."""
        return methods["cumsum"](self, axis, dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None) -> Any:
        """``ndarray.cumprod``: ``dualad.numpy.cumprod(self, ...)``."""
        return methods["cumprod"](self, axis, dtype)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.all``: ``dualad.numpy.all(self, ...)``."""
        return methods["all"](self, axis, keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        """``ndarray.any``: ``dualad.numpy.any(self, ...)``."""
        return methods["any"](self, axis, keepdims)

    def argmax(self, *args: Any, **kwargs: Any) -> Any:
        """``ndarray.argmax``: ``dualad.numpy.argmax(self, ...)``."""
        return methods["argmax"](self, *args, **kwargs)

    def argmin(self, *args: Any, **kwargs: Any) -> Any:
        """``ndarray.argmin``: ``dualad.numpy.argmin(self, ...)``."""
        return methods["argmin"](self, *args, **kwargs)

    def argsort(self, *args: Any, **kwargs: Any) -> Any:
        """``ndarray.argsort``: ``dualad.numpy.argsort(self, ...)``."""
        return methods["argsort"](self, *args, **kwargs)

    def argpartition(self, kth: Any, axis: int = -1, **kwargs: Any) -> Any:
        """``ndarray.argpartition``: ``numpy.argpartition`` on the values (no derivative)."""
        return methods["argpartition"](self, kth, axis, **kwargs)

    def nonzero(self, *args: Any, **kwargs: Any) -> Any:
        """``ndarray.nonzero``: ``dualad.numpy.nonzero(self)``."""
        return methods["nonzero"](self, *args, **kwargs)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        """``ndarray.searchsorted``: ``numpy.searchsorted`` on the values (no derivative)."""
        return methods["searchsorted"](self, v, side, sorter)

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None) -> None:
        """``ndarray.sort``: sorts in place (a tracked in-place write of the sorted values)."""
        return methods["sort"](self, axis, kind, order)

    def partition(self, kth: Any, axis: int = -1, kind: str = "introselect",
                  order: Any = None) -> None:
        """``ndarray.partition``: partitions in place (a tracked in-place write)."""
        return methods["partition"](self, kth, axis, kind, order)

    def fill(self, value: Any) -> None:
        """``ndarray.fill``: every element set to ``value`` (a tracked in-place write)."""
        return methods["fill"](self, value)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """``ndarray.trace``: ``dualad.numpy.trace(self, ...)``."""
        return methods["trace"](self, offset, axis1, axis2)

    def dot(self, b: Any) -> Any:
        """``ndarray.dot``: ``dualad.numpy.dot(self, b)``."""
        return methods["dot"](self, b)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """``ndarray.diagonal``: ``dualad.numpy.diagonal(self, ...)``."""
        return methods["diagonal"](self, offset, axis1, axis2)

    def take(self, indices: Any, axis: int | None = None) -> Any:
        """``ndarray.take``: ``dualad.numpy.take(self, ...)``."""
        return methods["take"](self, indices, axis)

    def compress(self, condition: Any, axis: int | None = None) -> Any:
        """``ndarray.compress``: ``dualad.numpy.compress(condition, self, axis)``."""
        return methods["compress"](self, condition, axis)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        """``ndarray.choose``: ``dualad.numpy.choose(self, choices, ...)``."""
        return methods["choose"](self, choices, out, mode)

    def reshape(self, *shape: Any, order: str = "C") -> Any:
        """``t.reshape(2, 3)`` or ``t.reshape((2, 3))``, as ``ndarray.reshape`` (a view when
        NumPy's would be one): ``dualad.numpy.reshape(self, shape, order)``."""
        return methods["reshape"](self, shape[0] if len(shape) == 1 else shape, order)

    def transpose(self, *axes: Any) -> Any:
        """``t.transpose(1, 0)``, ``t.transpose((1, 0))`` or ``t.transpose()``, as
        ``ndarray.transpose`` (a view)."""
        return methods["transpose"](self, *axes)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        """``ndarray.swapaxes``: ``dualad.numpy.swapaxes(self, ...)``."""
        return methods["swapaxes"](self, axis1, axis2)

    def squeeze(self, axis: Any = None) -> Any:
        """``ndarray.squeeze``: ``dualad.numpy.squeeze(self, ...)``."""
        return methods["squeeze"](self, axis)

    def ravel(self, order: str = "C") -> Any:
        """``ndarray.ravel``: ``dualad.numpy.ravel(self, ...)``."""
        return methods["ravel"](self, order)

    def flatten(self) -> Any:
        """``ndarray.flatten``: a flat copy."""
        return methods["flatten"](self)

    def repeat(self, repeats: Any, axis: int | None = None) -> Any:
        """``ndarray.repeat``: ``dualad.numpy.repeat(self, ...)``."""
        return methods["repeat"](self, repeats, axis)

    def copy(self) -> Any:
        """``ndarray.copy``: a copy with ``self``'s history and tangents (the primitive
        ``positive``)."""
        return methods["copy"](self)

    def astype(self, dtype: Any, copy: bool = True) -> Any:
        """``ndarray.astype``: ``dualad.numpy.astype(self, ...)``."""
        return methods["astype"](self, dtype, copy)

    def clip(self, a_min: Any = None, a_max: Any = None) -> Any:
        """``ndarray.clip``: ``dualad.numpy.clip(self, ...)``."""
        return methods["clip"](self, a_min, a_max)

    def round(self, decimals: int = 0) -> Any:
        """``ndarray.round``: ``dualad.numpy.round(self, ...)``."""
        return methods["round"](self, decimals)

    def conj(self) -> Any:
        """``ndarray.conj``: ``dualad.numpy.conj(self)``."""
        return methods["conj"](self)

    def conjugate(self) -> Any:
        """``ndarray.conjugate``: ``dualad.numpy.conjugate(self)``."""
        return methods["conjugate"](self)

    # -- Dask ---------------------------------------------------------------------------------
    def compute(self, **kwargs: Any) -> Any:
        """A Tensor holding this tensor's computed array (detached; ``kwargs`` go to
        ``dask.compute``). A tensor of a NumPy or CuPy array comes back detached as it is.

        Examples
        --------
        >>> import dask.array
        >>> x = dualad.tensor(dask.array.arange(4.0, chunks=2))
        >>> (x * 2).compute()
        tensor([0., 2., 4., 6.])
        """
        return methods["compute"](self, **kwargs)

    # -- ndarray's methods a Tensor refuses: a TypeError with the coverage table's reason ------
    # (ndarray's attributes of this kind, such as ``flags`` or ``strides``, stay absent, so
    # that ``hasattr`` says no)
    def byteswap(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["byteswap"](self, *args, **kwargs)

    def getfield(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["getfield"](self, *args, **kwargs)

    def setfield(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["setfield"](self, *args, **kwargs)

    def setflags(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["setflags"](self, *args, **kwargs)

    def view(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["view"](self, *args, **kwargs)

    def tobytes(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["tobytes"](self, *args, **kwargs)

    def tofile(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["tofile"](self, *args, **kwargs)

    def dump(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["dump"](self, *args, **kwargs)

    def dumps(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["dumps"](self, *args, **kwargs)

    def to_device(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["to_device"](self, *args, **kwargs)

    def resize(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["resize"](self, *args, **kwargs)

    def put(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["put"](self, *args, **kwargs)

    def __lshift__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__lshift__"](self, *args, **kwargs)

    def __rlshift__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__rlshift__"](self, *args, **kwargs)

    def __rshift__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__rshift__"](self, *args, **kwargs)

    def __rrshift__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__rrshift__"](self, *args, **kwargs)

    def __ilshift__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__ilshift__"](self, *args, **kwargs)

    def __irshift__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__irshift__"](self, *args, **kwargs)

    def __delitem__(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: raises ``TypeError`` (the coverage table's reason follows)."""
        return methods["__delitem__"](self, *args, **kwargs)
