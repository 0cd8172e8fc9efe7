"""Unmodified NumPy code on Tensors: common idioms, each checked by gradcheck.

Every function below is written against ``np`` only; passing Tensors makes
NumPy dispatch to dualad, and gradcheck compares forward and reverse mode with
finite differences.
"""

import numpy as np
import pytest

import dualad as da

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3))
W = rng.standard_normal(3)
Y = rng.standard_normal(4)
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)


def _set0(x):
    z = x * 1.0
    z[0] = 0.0
    return z


IDIOMS = {
    "least squares": (lambda w: np.mean((X @ w - Y) ** 2), W),
    "logsumexp": (lambda x: np.log(np.sum(np.exp(x - np.max(x)))) + np.max(x), W),
    "softmax": (lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True), X),
    "row norms": (lambda x: np.linalg.norm(x, axis=1), X),
    "boolean mask": (lambda x: x[x > 0].sum(), X),
    "fancy index": (lambda x: x[[0, 2], 1:], X),
    "stack and concatenate": (lambda x: np.concatenate([np.stack([x, x * 2]), x[None] ** 2]), X),
    "leaky relu": (lambda x: np.where(x > 0, x, 0.1 * x), X),
    "gram": (lambda x: x.T @ x, X),
    "einsum": (lambda x: np.einsum("ij,ij->i", x, x), X),
    "diff": (lambda x: np.diff(x, axis=0), X),
    "sort": (lambda x: np.sort(x, axis=1), X),
    "kron of outer": (lambda x: np.kron(np.outer(x, x), np.eye(2)), W),
    "mlp": (lambda w: np.tanh(np.tanh(X @ w) * 2).sum(), W),
    "power spectrum": (lambda z: np.abs(np.fft.fft(z)) ** 2, W + 1j * W[::-1]),
    "solve": (lambda a: np.linalg.solve(a @ a.T + np.eye(3), W), SQ),
    "det times inverse": (lambda a: np.linalg.det(a) * np.linalg.inv(a).sum(), SQ),
    "std and var": (lambda x: np.std(x, axis=0) + np.var(x), X),
    "weighted average": (lambda x: np.average(x, axis=0, weights=np.arange(1, 5)), X),
    "max and argmax": (lambda x: x.max(axis=0) + x[np.argmax(x, axis=0), np.arange(3)], X),
    "reshape -1": (lambda x: x.reshape(-1, 2).sum(axis=1), X),
    "python sum of rows": (lambda x: sum([x[i] for i in range(len(x))]), X),
    "in-place assignment": (_set0, X),
    "centering": (lambda x: x - x.mean(axis=0, keepdims=True), X),
    "pad roll flip": (lambda x: np.roll(np.pad(x, 1, mode="reflect"), 1, axis=0)[::-1], X),
    "cross": (lambda x: np.cross(x, X[:3]), X[1:]),
    "append and column_stack": (lambda x: np.append(x, np.column_stack([x[:, 0], x[:, 1]])),
                                X),
    "eigenvalues": (lambda x: np.linalg.eigh(x @ x.T + np.diag(np.arange(4.0)))[0], X),
    "singular values": (lambda x: np.linalg.svd(x, compute_uv=False), X),
}


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_numpy_idiom(name):
    f, x0 = IDIOMS[name]
    x = da.tensor(x0, requires_grad=True)
    assert da.gradcheck(f, (x,), check_forward_ad=True, fast_mode=True)


def test_unsupported_numpy_function_names_itself():
    with pytest.raises(TypeError, match="numpy.*histogram_bin_edges"):
        np.histogram_bin_edges(da.tensor([0.5, 1.0], requires_grad=True))
