"""dualad.scipy.signal: convolve and correlate against SciPy's values, torch's conv1d/conv2d
gradients (or central differences), the jvp/vjp identity and a Hessian."""

import numpy as np
import pytest

ss = pytest.importorskip("scipy.signal")
torch = pytest.importorskip("torch")

from _scipy_checks import check_hessian, check_modes  # noqa: E402

import dualad as da  # noqa: E402
from dualad.scipy import signal as S  # noqa: E402

SHAPES = [((7,), (3,)), ((6,), (4,)), ((3,), (7,)), ((4,), (6,)), ((5, 6), (2, 3)),
          ((2, 3), (5, 6)), ((8, 7), (3, 4)), ((5, 4, 3), (2, 3, 2)), ((3, 5), (4, 2))]
MODES = ["full", "same", "valid"]
METHODS = ["direct", "fft", "auto"]


def _data(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("complex_", [False, True])
def test_values_against_scipy(name, shapes, method, complex_):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(name))
    x, y = _data(rng, shapes[0], complex_), _data(rng, shapes[1], complex_)
    for mode in MODES:
        try:
            want = getattr(ss, name)(x, y, mode, method)
        except ValueError:  # valid mode, neither input the larger in every axis
            with pytest.raises(ValueError, match="at least as large"):
                getattr(S, name)(x, y, mode, method)
            continue
        got = getattr(S, name)(x, y, mode, method).numpy()
        rtol = 1e-12 if method == "direct" else 1e-10
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.max(np.abs(want)),
                                   err_msg=f"{name} {mode} {method}")
        assert got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_integer_inputs_keep_their_type(method):
    rng = np.random.default_rng(3)
    x, y = rng.integers(-5, 5, 9), rng.integers(-5, 5, 4)
    for name in ("convolve", "correlate"):
        for mode in MODES:
            got = getattr(S, name)(x, y, mode, method).numpy()
            want = getattr(ss, name)(x, y, mode, method)
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def test_errors_and_scalars():
    with pytest.raises(ValueError, match="same dimensionality"):
        S.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="mode"):
        S.convolve(np.ones(3), np.ones(2), mode="circular")
    assert S.convolve(2.0, 3.0).item() == 6.0
    assert S.correlate(2.0, 1j).item() == -2j
    assert S.choose_conv_method(np.ones(3), np.ones(2)) == ss.choose_conv_method(
        np.ones(3), np.ones(2))


def _centered(t, shape):
    start = [(c - n) // 2 for c, n in zip(t.shape, shape, strict=True)]
    return t[tuple(slice(s, s + n) for s, n in zip(start, shape, strict=True))]


def _torch_convolve(mode):
    """scipy.signal.convolve by torch's conv1d/conv2d (a correlation) of the flipped kernel."""
    def f(x, y):
        conv = torch.nn.functional.conv1d if x.ndim == 1 else torch.nn.functional.conv2d
        pad = tuple(k - 1 for k in y.shape)
        full = conv(x[None, None], torch.flip(y, tuple(range(y.ndim)))[None, None],
                    padding=pad)[0, 0]
        if mode == "full":
            return full
        if mode == "same":
            return _centered(full, x.shape)
        return _centered(full, tuple(i - j + 1 for i, j in zip(x.shape, y.shape, strict=True)))
    return f


@pytest.mark.parametrize("shapes", [((9,), (4,)), ((6, 5), (3, 2))], ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_derivatives_against_torch(shapes, mode, method):
    rng = np.random.default_rng(sum(shapes[0]))
    xs = [rng.standard_normal(s) for s in shapes]
    check_modes(lambda x, y: S.convolve(x, y, mode, method), xs, rng,
                torch_f=_torch_convolve(mode), rtol=1e-10)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_derivatives_against_differences(name, mode, method):
    rng = np.random.default_rng(len(mode) + len(method))
    # 3-D; complex; 'valid' with the inputs swapped (the second the larger)
    for shapes, complex_ in ((((4, 3, 5), (2, 2, 3)), False), (((7,), (3,)), True),
                             (((3, 4), (5, 6)), False)):
        xs = [_data(rng, s, complex_) for s in shapes]
        check_modes(lambda x, y: getattr(S, name)(x, y, mode, method), xs, rng)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_second_order(name, method):
    rng = np.random.default_rng(len(name))
    f = getattr(S, name)
    check_hessian(lambda t: f(t, t * t, "same", method), rng.standard_normal((3, 4)), rng)
    check_hessian(lambda t: f(da.tensor(np.ones((2, 2))) * t[:2, :2], t, "full", method),
                  rng.standard_normal((3, 4)), rng)


def test_large_direct_convolutions_sum_shifted_products(monkeypatch):
    # (the path taken where the gathered windows would be large, here forced on small inputs)
    monkeypatch.setattr(S, "_WINDOW_LIMIT", 0)
    rng = np.random.default_rng(5)
    for s1, s2 in (((6, 5), (3, 2)), ((3,), (7,)), ((4, 3, 5), (2, 2, 3))):
        x, y = _data(rng, s1, True), _data(rng, s2, False)
        for mode in ("full", "same"):
            for name in ("convolve", "correlate"):
                want = getattr(ss, name)(x, y, mode, "direct")
                got = getattr(S, name)(x, y, mode, "direct").numpy()
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        check_modes(lambda a, b: S.convolve(a, b, "same", "direct"), [x, y], rng)
    check_hessian(lambda t: S.convolve(t, t * t, "full", "direct"), rng.standard_normal((3, 4)),
                  rng)
