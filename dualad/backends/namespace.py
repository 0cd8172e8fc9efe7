"""Array namespaces: the kind of array that came in (invariant 5 of docs/architecture.md).

NumPy is the default; CuPy arrays (a GPU) and Dask arrays (larger than memory,
or spread over a cluster) are kept as they are, and computed on with their own
namespace. Namespace detection is array-api-compat's (``array_namespace``);
where the Array API has no equivalent, NumPy's own functions dispatch to the
array's library through NEP 18 (``__array_function__``) and NEP 35 (``like=``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from array_api_compat import is_cupy_array, is_dask_array

try:  # optional; never required
    import cupy as _cupy  # type: ignore[import-not-found]
except Exception:  # pragma: no cover - no GPU here
    _cupy = None


def is_dask(a: Any) -> bool:
    """Whether ``a`` is a Dask array (checked without importing dask)."""
    return is_dask_array(a)


def _kind(a: Any) -> str | None:
    """'numpy', 'cupy' or 'dask' for an array (a Dask array by its chunks' kind), else None."""
    if isinstance(a, np.ndarray):
        return "numpy"
    if is_cupy_array(a):
        return "cupy"
    if is_dask_array(a):
        if is_cupy_array(getattr(a, "_meta", None)):
            return "dask-cupy"
        return "dask"
    return None


def namespace(*arrays: Any) -> Any:
    """The array module that owns ``arrays`` (NumPy, CuPy or Dask); mixing devices raises.

    NumPy arrays and scalars mixed with Dask arrays are fine (constants of a lazy
    computation); NumPy mixed with CuPy, or CuPy-backed Dask with NumPy-backed Dask,
    is an error.
    """
    kinds = set()
    for a in arrays:
        k = _kind(a)
        if k is not None and k != "numpy":
            kinds.add(k)
    if not kinds:
        return np
    gpu = {"cupy", "dask-cupy"} & kinds
    if gpu and (any(_kind(a) == "numpy" for a in arrays) and "dask-cupy" not in kinds
                or kinds - gpu):
        raise RuntimeError(
            "dualad: expected all arrays on the same device, found both CPU (NumPy) and GPU "
            "(CuPy) arrays; move them to one device first (e.g. cupy.asarray or .get())"
        )
    if "dask" in kinds or "dask-cupy" in kinds:
        import dask.array as dask_array

        return dask_array
    return _cupy


def device_of(a: Any) -> str:
    if _cupy is not None and isinstance(a, _cupy.ndarray):
        return f"cuda:{a.device.id}"
    return "cpu"


def is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or _kind(a) is not None


def asarray(data: Any, dtype: Any = None, copy: bool | None = None) -> Any:
    if data.__class__ is np.ndarray:
        return np.array(data, dtype=dtype, copy=copy)
    if _cupy is not None and isinstance(data, _cupy.ndarray):
        return _cupy.array(data, dtype=dtype, copy=bool(copy))
    if is_dask(data):  # stays lazy (a Dask array is immutable: no copy needed)
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    return np.array(data, dtype=dtype, copy=copy)


def like(a: Any) -> Any:
    """What steers array creation to ``a``'s kind (NEP 35 ``like=``): ``a`` itself (NumPy,
    CuPy), a :class:`_DaskLike` for a Dask array, None for a scalar."""
    if a.__class__ is np.ndarray:
        return a
    if is_dask_array(a):
        return _DaskLike(a._meta)
    return a if hasattr(a, "__array_function__") and not isinstance(a, np.generic) else None


_ZEROS = ("shape", "dtype", "order")
_FULL = ("shape", "fill_value", "dtype", "order")


class _DaskLike:
    """``like=`` for a Dask array: Dask's own ``like=`` handler makes NumPy chunks whatever
    the array's chunks are (CuPy's, say); this one makes them of its chunks' kind (its
    ``_meta``). zeros/ones/empty/full are Dask's lazy constants; any other creation (eye,
    arange, tri, asarray of values: constants the size of a shape, not of the data) is
    made on the chunks' kind and wrapped as one block."""

    __slots__ = ("meta",)

    def __init__(self, meta: Any) -> None:
        self.meta = meta

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        import dask.array as dask_array

        if func in (np.zeros, np.ones, np.empty, np.full):
            # (by name: Dask's take the dtype as a keyword only, and ignore it given by place)
            kwargs.update(zip(_FULL if func is np.full else _ZEROS, args, strict=False))
            kwargs.pop("order", None)  # (Dask's chunks have no layout to choose)
            return getattr(dask_array, func.__name__)(meta=self.meta, **kwargs)
        return dask_array.from_array(func(*args, like=self.meta, **kwargs), chunks=-1)


def to_kind(a: Any, ref: Any) -> Any:
    """NumPy values ``a`` as an array of ``ref``'s kind: ``a`` itself for a NumPy ``ref``,
    a CuPy array for a CuPy one, a Dask array of ``ref``'s chunks' kind for a Dask one (in
    ``ref``'s chunks where the shapes agree). For values dualad makes on the host and feeds
    to a computation on ``ref`` (gradcheck's perturbed inputs, tangents and cotangents)."""
    if ref.__class__ is np.ndarray or not is_array(ref):
        return a
    if is_dask_array(ref):
        import dask.array as dask_array

        if is_dask_array(a):
            return a
        # (of the chunks' kind; a copy: a Dask array's blocks must not change under it)
        block = _created("array", ref._meta, (a,), {"copy": True})
        chunks = ref.chunks if np.shape(a) == ref.shape else "auto"
        return dask_array.from_array(block, chunks=chunks, meta=ref._meta)
    return _created("asarray", ref, (a,), {})


def copy_like(data: Any, like_: Any) -> Any:
    """A new array holding ``data`` in ``like_``'s dtype and kind (lazy stays lazy; the layout
    of a dense NumPy/CuPy ``like_``, C or Fortran, is kept)."""
    if is_dask_array(data) or is_dask_array(like_):
        import dask.array as dask_array

        return dask_array.asarray(data).astype(like_.dtype)
    order = "F" if like_.flags.f_contiguous and not like_.flags.c_contiguous else "C"
    return namespace(data, like_).array(data, dtype=like_.dtype, order=order, copy=True)


def writeable(a: Any) -> bool:
    """Whether ``a`` may be written in place (a Dask array never is: it is immutable; a
    CuPy array always is: its flags have no ``writeable``)."""
    if a.__class__ is np.ndarray:
        return a.flags.writeable
    flags = getattr(a, "flags", None)
    return flags is not None and getattr(flags, "writeable", True)


def _created(name: str, like: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """``numpy.<name>(*args, like=like, **kw)``: an array of ``like``'s kind (NEP 35). For
    CuPy the function is CuPy's own, on ``like``'s GPU: NumPy 2 hands the like array's
    function a ``device`` keyword that CuPy's creation functions do not take."""
    if _cupy is not None and isinstance(like, _cupy.ndarray):
        with like.device:
            return getattr(_cupy, name)(*args, **kw)
    return getattr(np, name)(*args, like=like, **kw)


def _creation(name: str) -> Any:
    def create(*args: Any, like: Any = None, **kw: Any) -> Any:
        return _created(name, like, args, kw)

    create.__name__ = create.__qualname__ = name
    create.__doc__ = f"``numpy.{name}`` on ``like``'s kind (see ``_created``)."
    return create


ones, zeros, empty, eye, full, arange, asarray_like = (
    _creation(n) for n in ("ones", "zeros", "empty", "eye", "full", "arange", "asarray"))


def to_host(a: Any) -> np.ndarray:
    """``a`` as a NumPy array: a CuPy array copied from its GPU (index arrays, which
    dualad keeps on the host), anything else through ``numpy.asarray``."""
    return a.get() if _cupy is not None and isinstance(a, _cupy.ndarray) else np.asarray(a)


def host_scalars(arrays: list[Any], e: Exception) -> list[Any] | None:
    """``arrays`` with each 0-d NumPy array made a NumPy scalar, where such a value met
    arrays of another kind (a GPU's) and the operation refused it (a TypeError): a 0-d
    host value (the log of a Python number, made by a rule) is a scalar beside a GPU's
    arrays, as torch takes a CPU 0-d tensor beside CUDA ones. None: not that case."""
    if e.__class__ is not TypeError or not any(
            a.__class__ is not np.ndarray and not isinstance(a, np.generic) and hasattr(a, "shape")
            for a in arrays):
        return None
    conv = [a[()] if a.__class__ is np.ndarray and not a.ndim else a for a in arrays]
    return conv if any(c is not a for c, a in zip(conv, arrays, strict=True)) else None


def as_array(a: Any) -> Any:
    """``a`` as an array: a CuPy or Dask array as it is (lazy stays lazy), anything else
    (NumPy scalars, Python numbers) through ``numpy.asarray``."""
    return a if is_dask_array(a) or is_cupy_array(a) else np.asarray(a)


def repr_body(a: Any) -> str:
    """What ``repr`` shows of an array that is not NumPy's, computing nothing."""
    if is_dask_array(a):
        return repr(a)
    return np.array2string(a.get() if hasattr(a, "get") else a, separator=", ",
                           prefix="tensor(")


def broadcast_to(a: Any, shape: tuple[int, ...]) -> Any:
    """``numpy.broadcast_to`` for any kind. A Dask array gets chunks of Dask's configured
    size (``array.chunk-size``) along the axes it is broadcast over, not one chunk of the
    whole shape (a loss's cotangent broadcast back over a large input: one chunk would be
    the whole array wherever it is sent or written)."""
    if not is_dask_array(a):
        return np.broadcast_to(a, shape)
    import dask.array as dask_array
    from dask.array.core import normalize_chunks

    lead = len(shape) - a.ndim
    chunks = tuple("auto" if i < lead or a.shape[i - lead] == 1 and n != 1
                   else a.chunks[i - lead] for i, n in enumerate(shape))
    return dask_array.broadcast_to(a, shape, chunks=normalize_chunks(chunks, shape,
                                                                     dtype=a.dtype))


def gather(a: Any, key: tuple[Any, ...]) -> Any:
    """``a[key]`` for a Dask array where Dask cannot index (several index arrays: n-d fancy
    indexing, as ``diagonal`` gathers): one lazy task over ``a`` as a single block, like
    :func:`add_at`, its transpose (lazy and correct, not spread over chunks). The shape comes
    from indexing a zero-stride proxy of ``a``'s shape: nothing is computed."""
    import dask
    import dask.array as dask_array

    shape = np.broadcast_to(np.False_, a.shape)[key].shape
    task = dask.delayed(_getitem_block, pure=True)(a, key)
    return dask_array.from_delayed(task, shape, dtype=a.dtype, meta=a._meta)


def _getitem_block(a: Any, key: Any) -> Any:
    return a[key]


def _add_at_block(a: Any, shape: tuple[int, ...], dtype: Any, key: Any) -> Any:
    z = np.zeros_like(a, dtype, shape=shape)  # (of the chunks' kind)
    np.add.at(z, key, a)
    return z


def add_at(z: Any, key: Any, a: Any) -> Any:
    """``numpy.add.at(z, key, a)`` on zeros ``z``, returning the sum. Dask has no
    scatter-add: there it is one lazy task over ``a`` as a single block (one block of
    ``z``'s size: lazy and correct, not spread over chunks)."""
    if _cupy is not None and isinstance(z, _cupy.ndarray):  # (CuPy has no ufunc.at)
        import cupyx  # type: ignore[import-not-found]

        if z.dtype.kind != "c":
            cupyx.scatter_add(z, key, a)
            return z
        # (its scatter_add takes real dtypes only: the real and imaginary parts apart)
        re, im = z.real.copy(), z.imag.copy()
        cupyx.scatter_add(re, key, _cupy.real(a))
        cupyx.scatter_add(im, key, _cupy.imag(a))
        return re + 1j * im
    if not (is_dask_array(z) or is_dask_array(a)):
        np.add.at(z, key, a)
        return z
    import dask
    import dask.array as dask_array

    task = dask.delayed(_add_at_block, pure=True)(a, z.shape, z.dtype, key)
    return dask_array.from_delayed(task, z.shape, dtype=z.dtype,
                                   meta=(z if is_dask_array(z) else a)._meta)
