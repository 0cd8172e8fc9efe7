"""The Tensor: one array, optionally dual at a level, optionally recorded for reverse mode.

A Tensor is either *plain* (``_level == 0``: ``_data`` is its array) or *dual*
at a live level L (``_primal`` and ``_tangent``, each dual only at levels below
L). ``_data`` always holds the innermost primal array so that shape and dtype
queries cost nothing. ``_batch_ndim`` counts leading axes that are tangent-batch axes
(internal only: users never see a Tensor with ``_batch_ndim > 0``).

A dual's parts may be stored *unmade*: the primal as ``_data`` alone (the dual then
holds the primal's graph fields) and the tangent as a bare array. Only the forward fast
path (``dualad.fast``) makes such duals, one object per op instead of three (a chain of
elementwise ops runs 14% slower with three). ``_primal`` and ``_tangent`` make a part on
first use; the few operations other layers need without making them (an alias, the
graph fields, the primal chain) are Tensor methods, so nothing outside this class and
``dualad.fast`` knows the unmade form.

Reverse-mode state lives on the innermost primal: ``_requires_grad`` (requires grad),
``_node`` (grad_fn) and ``_out_nr``; dual wrappers copy them when made.
``_version_cell``, made on the first write or save, is a one-element list holding the
count of in-place writes (torch's version counter), shared by a view and its base. The
rarely used rest (``.grad``, hooks, ...) sits in ``_meta``, created on demand.
Operators, NumPy's array methods and the reverse-mode methods are declared in the
classes Tensor inherits (``dualad._tensor_methods``); the layers above give them meaning.
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np

from .._tensor_methods import ArrayMethods, AutogradMethods
from ..backends import namespace as _backend
from . import grad_mode as _gm
from .levels import LIN, live

_NO_HOOKS: Any = types.MappingProxyType({})


class _Meta:
    """The rarely used state of a Tensor.

    A *view* (the result of a view primitive that shares its input's memory: a basic
    slice, a reshape or transpose that does not copy, a broadcast) keeps ``base``, the
    Tensor at the root of its chain of views, and ``fns``, the ``(primitive, params)``
    steps that make the view from that base; ``nograd`` marks a view made while grad mode
    was off from a base that requires grad. A base keeps weak references to its views
    (``views``), so that writing into any of them rebases the base and regenerates the
    others (``dualad.rules.inplace``). A Tensor that is not a view and has none pays nothing.
    """

    # Defaults, read from the class until an instance sets its own (a view's sets three):
    # making one costs no __init__. The hook tables are shared and empty until
    # ``_table`` gives an instance dicts of its own to add to.
    grad: Tensor | None = None
    hooks: Any = _NO_HOOKS
    post_hooks: Any = _NO_HOOKS
    retains_grad = False
    acc: Any = None  # the AccumulateGrad node of a leaf
    inference = False
    name: str | None = None
    base: Tensor | None = None
    fns: tuple[Any, ...] = ()
    views: list[Any] | None = None
    nograd = False
    # A 0-d tensor made *as an array* (a factory, a copy, ``detach``): ``x op= y`` writes
    # into it. Other 0-d results stand for the scalars NumPy returns, and rebind
    # (``dualad.rules.inplace``); only 0-d tensors are marked, so the rest pay nothing.
    array = False

    def _table(self, name: str) -> dict[int, Any]:
        """``hooks`` or ``post_hooks``, as this meta's own dict (to add a hook to)."""
        d = self.__dict__.get(name)
        if d is None:
            d = self.__dict__[name] = {}
        return d


class Tensor(AutogradMethods, ArrayMethods):
    """An n-dimensional array that dualad can differentiate.

    ``dualad.Tensor(data)`` wraps ``data`` (sharing it when it is already an
    array of the right dtype); prefer ``dualad.tensor`` (copies) or
    ``dualad.as_tensor`` (shares).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "_data", "_level", "_stored_primal", "_stored_tangent", "_batch_ndim", "_requires_grad",
        "_node", "_out_nr",
        "_version_cell", "_meta", "_why", "__weakref__",
    )
    # _why (unset on almost every Tensor: setting it is the rare path's only cost): why a
    # Tensor with no grad_fn does not require grad although an input of the operation
    # that made it did — "no_grad", made while grad mode was off — for backward's error.
    __array_priority__ = 1000.0  # ndarray <op> Tensor defers to Tensor
    __hash__ = object.__hash__

    def __new__(cls, data: Any = (), dtype: Any = None, requires_grad: bool = False) -> Tensor:
        if isinstance(data, Tensor):
            data = data._data
        t = _made(_make(_backend.asarray(data, dtype=dtype, copy=None)))
        if requires_grad:
            t.requires_grad_(True)
        return t

    # -- the parts of a dual --------------------------------------------------------------
    @property
    def _primal(self) -> Tensor:
        p = self._stored_primal
        if p is None:  # unmade: the primal is the plain Tensor of _data
            p = self._stored_primal = _make(self._data)
            # (one counter: the same memory)
            p._batch_ndim, p._version_cell = self._batch_ndim, self._version_counter()
            if self._requires_grad:  # (recorded while unmade: the node is the primal's,
                # see graph._set_node)
                p._requires_grad, p._node, p._out_nr = True, self._node, self._out_nr
        return p

    @_primal.setter
    def _primal(self, p: Tensor) -> None:
        self._stored_primal = p

    @property
    def _tangent(self) -> Tensor:
        t = self._stored_tangent
        if t.__class__ is np.ndarray:  # unmade: a plain, unbatched tangent
            t = self._stored_tangent = _make(t)
        return t

    @_tangent.setter
    def _tangent(self, t: Tensor) -> None:
        self._stored_tangent = t

    # -- a dual's parts as stored, made or unmade (see the module's docstring) -----------
    def _made_parts(self) -> tuple[Tensor | None, Tensor | None]:
        """(primal, tangent) as Tensors where they exist (someone may hold them); None for
        a part still unmade."""
        t = self._stored_tangent
        return self._stored_primal, None if t.__class__ is np.ndarray else t

    def _tangent_array(self) -> Any:
        """The tangent's (innermost) array, without making the tangent Tensor."""
        t = self._stored_tangent
        return t if t.__class__ is np.ndarray else t._data

    def _primal_chain(self) -> list[Tensor]:
        """This Tensor and each primal Tensor below it that exists, outermost first: one
        memory, one version counter, one set of graph fields. An unmade primal is not in
        it: its dual stands for it (and so is the last, ``_graph_holder``)."""
        chain = [self]
        t = self
        while t._level and t._level < LIN and t._stored_primal is not None:
            t = t._stored_primal
            chain.append(t)
        return chain

    def _graph_holder(self) -> Tensor:
        """The Tensor that holds this one's graph fields and stands for it as a leaf: the
        last of ``_primal_chain``."""
        return self._primal_chain()[-1]

    def _set_graph_fields(self, requires_grad: bool, node: Any, out_nr: int) -> None:
        """Set the graph fields along ``_primal_chain`` (an unmade primal takes them from
        its dual when made: ``_primal``); ``out_nr`` only with a node."""
        for t in self._primal_chain():
            t._requires_grad, t._node = requires_grad, node
            if node is not None:
                t._out_nr = out_nr

    def _take_parts(self, other: Tensor) -> None:
        """Become dual as ``other`` is (its level, its parts as stored, made or not): for
        a view of ``other``, or a write of ``other`` into this Tensor's memory."""
        self._level, self._stored_primal = other._level, other._stored_primal
        self._stored_tangent = other._stored_tangent

    def _share_arrays(self, other: Tensor) -> None:
        """This Tensor, a same-shape alias of ``other`` made by an operation, takes
        ``other``'s arrays as its own objects (``_data``; at one level, the tangent where
        both store it unmade): what is known of an array by its identity, a seed identity
        or a known diagonal, stays known through the alias."""
        self._data = other._data
        if self._level and self._level == other._level and self._level < LIN and \
                self._stored_primal is None and other._stored_primal is None:
            self._stored_tangent = other._stored_tangent

    def _map_parts(self, primal_fn: Any, tangent_fn: Any) -> Tensor:
        """A new dual at this dual's level, sharing its memory, of ``primal_fn(primal)``
        and ``tangent_fn(tangent)`` (None: the tangent itself). An unmade part is taken
        unmade, no function called on it: it has no history of its own (an unmade
        primal's graph fields are this dual's), so the functions may only drop history."""
        t = self._stored_tangent
        if tangent_fn is not None and t.__class__ is not np.ndarray:
            t = tangent_fn(t)
        if self._stored_primal is not None:
            return dual(self._level, primal_fn(self._stored_primal), t)
        d = _make(self._data, self._batch_ndim)
        d._level, d._stored_primal, d._stored_tangent = self._level, None, t
        d._version_cell = self._version_counter()
        return d

    # -- array protocol -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape[self._batch_ndim :] if self._batch_ndim else self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim - self._batch_ndim

    @property
    def size(self) -> int:
        return int(math.prod(self.shape))  # (np.prod of a tuple costs 30 times more)

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def device(self) -> str:
        return _backend.device_of(self._data)

    @property
    def itemsize(self) -> int:
        return self._data.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number (no derivative).

        Examples
        --------
        >>> dualad.tensor([2.5], requires_grad=True).item()
        2.5
        """
        if self._data.size != 1:
            raise ValueError(
                f"item() needs a tensor with one element, this one has shape {self.shape}"
            )
        return self._data.item()

    def tolist(self) -> Any:
        """The values as nested Python lists (no derivative).

        Examples
        --------
        >>> dualad.eye(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        return self._data.tolist()

    def __bool__(self) -> bool:
        return bool(self._data)

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors can be used as an index")
        return int(self.item())

    def __repr__(self) -> str:
        if self._level >= LIN:  # a linearization's placeholder (a backward run on a
            d = self._data  # symbolic grad_output, reverse mode's tangents): no values
            return f"tensor(<symbolic>, shape={tuple(d.shape)}, dtype={d.dtype})"
        body = np.array2string(self._data, separator=", ", prefix="tensor(") if \
            self._data.__class__ is np.ndarray else _backend.repr_body(self._data)
        L = self._level
        if L and L < LIN:
            if L in live:  # torch's form: the primal, then its tangent (and the level, when
                p = self._primal  # the primal is itself dual at a live level: nested)
                nested = p._level and p._level < LIN and p._level in live
                return (f"{repr(p)[:-1]}, tangent={self._tangent!r}"
                        + (f", level={L}" if nested else "") + ")")
        extra = ""
        if self._data.dtype not in (np.float64, np.int64, np.bool_, np.complex128):
            extra += f", dtype={self._data.dtype}"
        if self._node is not None:
            extra += f", grad_fn=<{self._node.name()}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    # -- autograd state ---------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("can't delete requires_grad; set it instead: t.requires_grad_(False)")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` on a leaf in place; returns ``self``.

        Examples
        --------
        >>> w = dualad.zeros(2).requires_grad_()
        >>> w.requires_grad, w.is_leaf
        (True, True)
        """
        if self._node is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self._meta is not None and self._meta.inference and \
                not _gm.state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed; make a clone outside inference mode (t.copy()) and set it on that."
            )
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients "
                f"(this one is {self._data.dtype}); convert it first, e.g. "
                f"t.astype('float64').requires_grad_()"
            )
        self._set_graph_fields(bool(requires_grad), None, 0)  # (a leaf: no node)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self) -> Any:
        return self._node

    @grad_fn.deleter
    def grad_fn(self) -> None:
        raise RuntimeError("can't delete grad_fn; to cut this tensor from its history, use "
                           "t.detach() (a new tensor) or t.detach_()")

    @property
    def retains_grad(self) -> bool:
        return self._meta is not None and self._meta.retains_grad

    def is_inference(self) -> bool:
        """True if this tensor was made in inference mode.

        Examples
        --------
        >>> with dualad.inference_mode():
        ...     t = dualad.ones(2)
        >>> t.is_inference(), dualad.ones(2).is_inference()
        (True, False)
        """
        return self._meta is not None and self._meta.inference

    @property
    def _version(self) -> int:
        return 0 if self._version_cell is None else self._version_cell[0]

    def _version_counter(self) -> list[int]:
        if self._version_cell is None:
            self._version_cell = [0]
        return self._version_cell

    def _meta_(self) -> _Meta:
        if self._meta is None:
            self._meta = _Meta()
        return self._meta

    @property
    def data(self) -> Tensor:
        """A detached tensor sharing this one's array (torch's ``.data``)."""
        return self.detach()

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def detach(self) -> Tensor:
        """A new tensor sharing the data, with no grad_fn, no grad, and no tangent.

        Examples
        --------
        >>> x = dualad.tensor([1.0], requires_grad=True)
        >>> y = (x * 2).detach()
        >>> y, y.requires_grad, y.grad_fn
        (tensor([2.]), False, None)
        """
        t = _make(self._data)
        t._version_cell = self._version_counter()
        if not self._data.ndim:  # (torch's detach-and-write: x op= y writes into it)
            t._meta_().array = True
        return t

    def detach_(self) -> Tensor:
        """Detach in place: make this tensor a leaf that does not require grad.

        Examples
        --------
        >>> y = dualad.tensor([1.0], requires_grad=True) * 2
        >>> _ = y.detach_()
        >>> y.is_leaf, y.requires_grad
        (True, False)
        """
        if self._level and self._level >= LIN:
            raise RuntimeError("detach_() on a symbolic tangent; use detach() instead")
        if self._meta is not None and self._meta.base is not None:
            raise RuntimeError(
                "Can't detach views in-place: this tensor is a view of another one, whose "
                "history it shares. Use detach() instead, which returns a new tensor."
            )
        if self._level:  # a dual: its tangents go too (as torch's, detach_ is forward
            # non-differentiable as well)
            self._level, self._stored_primal, self._stored_tangent = 0, None, None
        self._node = None
        self._requires_grad = False
        return self


_new = object.__new__


def _made(t: Tensor) -> Tensor:
    """``t``, new from a factory: an inference tensor if made in inference mode (as torch),
    marked as an array if 0-d (see ``_Meta.array``)."""
    if _gm.inference_threads[0] and _gm.state.inference:
        t._meta_().inference = True
    if not t._data.ndim:  # a 0-d array made by the user: x op= y writes into it
        t._meta_().array = True
    return t


def _make(data: Any, batch_ndim: int = 0) -> Tensor:
    """The Tensor constructor: a plain Tensor around ``data`` (no copy, no checks), with
    ``batch_ndim`` leading tangent-batch axes. ``Tensor(...)`` and every primitive's
    result are made here (the fast layer's generated code writes the same fields inline:
    ``tests/fast/test_general_path.py`` holds its results to the general path's)."""
    t = _new(Tensor)
    t._data = data
    t._level = 0
    t._batch_ndim = batch_ndim
    t._requires_grad = False
    t._node = None
    t._version_cell = None
    t._meta = None
    return t


def dual(L: int, primal: Tensor, tangent: Tensor) -> Tensor:
    """Wrap (primal, tangent) as a Tensor that is dual at level ``L``."""
    d = _make(primal._data)
    d._level = L
    d._stored_primal = primal
    d._stored_tangent = tangent
    d._batch_ndim = primal._batch_ndim
    d._requires_grad = primal._requires_grad
    if primal._node is not None:
        d._node = primal._node
        d._out_nr = primal._out_nr
    d._version_cell = primal._version_cell
    return d


def innermost(t: Tensor) -> Tensor:
    """The plain Tensor inside ``t`` (its primal at every level)."""
    while t._level and t._level < LIN:
        t = t._primal
    return t
