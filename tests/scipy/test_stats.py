"""dualad.scipy.stats: values against SciPy's (every method, grids with the tails,
parameters broadcast), gradients in the arguments and the parameters against
torch.distributions (central differences where torch has no such distribution), forward
mode against reverse mode, one Hessian against differences of the gradient."""

import warnings

import numpy as np
import pytest

ss = pytest.importorskip("scipy.stats")

import dualad as da  # noqa: E402
import dualad.functional as DF  # noqa: E402
from dualad.scipy import stats as ds  # noqa: E402

# name: (shape parameters, loc, scale, grid of x, a point (x, *shapes, loc, scale) for
# the derivatives)
CONTINUOUS = {
    "norm": ((), 0.3, 1.7, [-80.0, -40.0, -9.0, -1.0, 0.0, 0.5, 3.0, 9.0, 40.0], None),
    "t": ((3.5,), 0.3, 1.7, [-1e4, -30.0, -2.0, 0.0, 0.7, 5.0, 1e3], None),
    "gamma": ((2.5,), 0.3, 1.7, [-1.0, 0.3, 0.31, 1.0, 3.0, 20.0, 200.0], None),
    "beta": ((2.5, 0.7), 0.3, 1.7, [-1.0, 0.3, 0.31, 0.9, 1.5, 1.99, 2.0, 3.0], None),
    "expon": ((), 0.3, 1.7, [-1.0, 0.3, 0.30001, 1.0, 5.0, 100.0, 1000.0], None),
    "laplace": ((), 0.3, 1.7, [-800.0, -30.0, -1.0, 0.3, 0.5, 30.0, 800.0], None),
    "logistic": ((), 0.3, 1.7, [-800.0, -30.0, -1.0, 0.3, 0.5, 30.0, 800.0], None),
    "lognorm": ((0.6,), 0.3, 1.7, [-1.0, 0.3, 0.3001, 1.0, 3.0, 50.0, 1e6], None),
    "uniform": ((), 0.3, 1.7, [-1.0, 0.3, 0.5, 1.2, 1.99, 2.0, 3.0], None),
}
METHODS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

# name: (shape parameters, loc, grid of k)
DISCRETE = {
    "poisson": ((3.5,), 1.0, [-2.0, 0.0, 1.0, 2.5, 3.0, 6.0, 30.0, 60.0]),
    "bernoulli": ((0.3,), 1.0, [-1.0, 0.0, 1.0, 1.5, 2.0, 3.0]),
    "binom": ((12.0, 0.3), 1.0, [-1.0, 0.0, 1.0, 3.5, 5.0, 12.0, 13.0, 14.0]),
}
DMETHODS = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]


def _close(actual, expected, rtol=1e-12):
    actual = actual.numpy() if isinstance(actual, da.Tensor) else np.asarray(actual)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-300)
    assert actual.shape == np.shape(expected)


def _quiet(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kw)


# -- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_values_equal_scipy(name, method):
    shapes, loc, scale, grid, _ = CONTINUOUS[name]
    x = np.array(grid)
    got = _quiet(getattr(getattr(ds, name), method), x, *shapes, loc=loc, scale=scale)
    want = _quiet(getattr(getattr(ss, name), method), x, *shapes, loc=loc, scale=scale)
    _close(got, want)
    # positional loc and scale, and the standard form
    got = _quiet(getattr(getattr(ds, name), method), x, *shapes, loc, scale)
    _close(got, want)
    got = _quiet(getattr(getattr(ds, name), method), x / 3, *shapes)
    _close(got, _quiet(getattr(getattr(ss, name), method), x / 3, *shapes))


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_parameters_broadcast_as_scipy(name):
    shapes, loc, scale, grid, _ = CONTINUOUS[name]
    rng = np.random.default_rng(len(name))
    x = np.array(grid)[:5]
    shp = [s * rng.uniform(0.8, 1.25, (3, 1)) for s in shapes]
    scales = scale * rng.uniform(0.5, 2.0, (2, 1, 1))
    for method in METHODS:
        got = _quiet(getattr(getattr(ds, name), method), x, *shp, loc=loc, scale=scales)
        want = _quiet(getattr(getattr(ss, name), method), x, *shp, loc=loc, scale=scales)
        _close(got, want)


def test_invalid_parameters_give_nan_as_scipy():
    _close(_quiet(ds.norm.logpdf, [0.0, 1.0], 0.0, [-1.0, 1.0]),
           _quiet(ss.norm.logpdf, [0.0, 1.0], 0.0, [-1.0, 1.0]))
    _close(_quiet(ds.gamma.pdf, 1.0, -1.0), _quiet(ss.gamma.pdf, 1.0, -1.0))
    _close(_quiet(ds.binom.pmf, 1.0, 3, 1.5), _quiet(ss.binom.pmf, 1.0, 3, 1.5))


def test_call_forms():
    assert float(ds.gamma.logpdf(2.0, a=3.0, scale=2.0)) == pytest.approx(
        ss.gamma.logpdf(2.0, a=3.0, scale=2.0), rel=1e-14)
    with pytest.raises(TypeError, match="missing"):
        ds.gamma.logpdf(2.0)
    with pytest.raises(TypeError, match="multiple values"):
        ds.norm.logpdf(2.0, 1.0, loc=1.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ds.norm.logpdf(2.0, mu=1.0)


@pytest.mark.parametrize("method", DMETHODS)
@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_values_equal_scipy(name, method):
    shapes, loc, grid = DISCRETE[name]
    k = np.array(grid)
    got = _quiet(getattr(getattr(ds, name), method), k, *shapes, loc=loc)
    _close(got, _quiet(getattr(getattr(ss, name), method), k, *shapes, loc=loc))
    rng = np.random.default_rng(len(name))
    shp = [np.round(s * rng.uniform(1, 1.5, (3, 1))) if i == 0 and name == "binom"
           else s * rng.uniform(0.8, 1.1, (3, 1)) for i, s in enumerate(shapes)]
    got = _quiet(getattr(getattr(ds, name), method), k, *shp)
    _close(got, _quiet(getattr(getattr(ss, name), method), k, *shp))


def _spd(rng, d):
    a = rng.normal(size=(d, d))
    return a @ a.T + d * np.eye(d)


def test_multivariate_normal_values_equal_scipy():
    rng = np.random.default_rng(0)
    cov, mean = _spd(rng, 3), rng.normal(size=3)
    for x in [rng.normal(size=(4, 5, 3)), rng.normal(size=3), 30 * rng.normal(size=(2, 3))]:
        for method in ["logpdf", "pdf"]:
            _close(getattr(ds.multivariate_normal, method)(x, mean, cov),
                   getattr(ss.multivariate_normal, method)(x, mean, cov), rtol=1e-11)
    # SciPy's shorthands: no mean, a scalar or diagonal covariance, dimension 1
    for args in [([0.3, 0.5], None, 2.0), ([0.3, 0.5], 1.0, 2.0), ([0.3, 0.5], [1, 2], [1.5, 2]),
                 (0.3, None, 2.0), ([[0.3, 0.5]], [1, 2], [1.5, 2])]:
        _close(ds.multivariate_normal.logpdf(*args), ss.multivariate_normal.logpdf(*args))


def test_multivariate_normal_singular_covariance_raises_as_scipy():
    cov = [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(np.linalg.LinAlgError, match="allow_singular"):
        ss.multivariate_normal.logpdf([0.0, 0.0], None, cov)
    with pytest.raises(np.linalg.LinAlgError, match="allow_singular"):
        ds.multivariate_normal.logpdf([0.0, 0.0], None, cov)
    with pytest.raises(NotImplementedError, match="singular"):
        ds.multivariate_normal.logpdf([0.0, 0.0], None, cov, allow_singular=True)
    with pytest.raises(ValueError, match="semidefinite"):
        ds.multivariate_normal.logpdf([0.0, 0.0], None, [[1.0, 2.0], [2.0, 1.0]])


def test_dirichlet_values_and_checks_equal_scipy():
    rng = np.random.default_rng(1)
    alpha = np.array([0.5, 2.0, 3.0])
    x = rng.dirichlet(alpha, size=4).T
    for xx in [x, x[:2], x[:, 0]]:
        for method in ["logpdf", "pdf"]:
            _close(getattr(ds.dirichlet, method)(xx, alpha),
                   getattr(ss.dirichlet, method)(xx, alpha))
    for bad in [[0.5, 0.6, -0.1], [0.2, 0.2, 0.2], [0.0, 0.5, 0.5]]:
        with pytest.raises(ValueError) as want:
            ss.dirichlet.logpdf(bad, alpha)
        with pytest.raises(ValueError) as got:
            ds.dirichlet.logpdf(bad, alpha)
        assert str(got.value).split(".")[0] == str(want.value).split(".")[0]


# -- gradients against torch.distributions ----------------------------------------------------

try:
    import torch
    TD = torch.distributions
except ImportError:  # pragma: no cover - torch is a test dependency
    torch = TD = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

# name: (point: x, shapes..., loc, scale; the torch distribution of those, as tensors)
TORCH = {
    "norm": ((0.7, 0.3, 1.7), lambda x, loc, s: TD.Normal(loc, s).log_prob(x)),
    "t": ((0.7, 3.5, 0.3, 1.7), lambda x, df, loc, s: TD.StudentT(df, loc, s).log_prob(x)),
    "gamma": ((2.7, 2.5, 0.0, 1.7),
              lambda x, a, loc, s: TD.Gamma(a, 1 / s).log_prob(x - loc)),
    "beta": ((0.9, 2.5, 0.7, 0.3, 1.7),
             lambda x, a, b, loc, s: TD.Beta(a, b).log_prob((x - loc) / s) - torch.log(s)),
    "expon": ((2.1, 0.3, 1.7), lambda x, loc, s: TD.Exponential(1 / s).log_prob(x - loc)),
    "laplace": ((0.7, 0.3, 1.7), lambda x, loc, s: TD.Laplace(loc, s).log_prob(x)),
    "lognorm": ((2.7, 0.6, 0.3, 1.7),
                lambda x, sh, loc, s: TD.LogNormal(torch.log(s), sh).log_prob(x - loc)),
    "uniform": ((0.9, 0.3, 1.7), lambda x, loc, s: TD.Uniform(loc, loc + s).log_prob(x)),
}


def _torch_grad(f, point):
    ts = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in point]
    f(*ts).backward()
    return [0.0 if t.grad is None else t.grad.item() for t in ts]


def _dualad_grad(f, point):
    ts = [da.tensor(p, requires_grad=True) for p in point]
    f(*ts).backward()
    return [0.0 if t.grad is None else float(t.grad) for t in ts]


@pytest.mark.parametrize("name", sorted(TORCH))
@needs_torch
def test_logpdf_gradient_equals_torch(name):
    point, tf = TORCH[name]
    got = _dualad_grad(lambda x, *p: getattr(ds, name).logpdf(x, *p), point)
    np.testing.assert_allclose(got, _torch_grad(tf, point), rtol=1e-12, atol=1e-14)


@needs_torch
def test_cdf_gradients_equal_torch():
    pt = (0.7, 0.3, 1.7)
    for name, tf in [("norm", lambda x, m, s: TD.Normal(m, s).cdf(x)),
                     ("laplace", lambda x, m, s: TD.Laplace(m, s).cdf(x)),
                     ("expon", lambda x, m, s: TD.Exponential(1 / s).cdf(x - m)),
                     ("uniform", lambda x, m, s: TD.Uniform(m, m + s).cdf(x))]:
        got = _dualad_grad(getattr(ds, name).cdf, pt)
        np.testing.assert_allclose(got, _torch_grad(tf, pt), rtol=1e-12, err_msg=name)


@needs_torch
def test_discrete_gradients_equal_torch():
    cases = [("poisson", (3.0, 2.5), lambda k, mu: TD.Poisson(mu).log_prob(k)),
             ("bernoulli", (1.0, 0.3), lambda k, p: TD.Bernoulli(probs=p).log_prob(k)),
             ("bernoulli", (0.0, 0.3), lambda k, p: TD.Bernoulli(probs=p).log_prob(k)),
             ("binom", (4.0, 12.0, 0.3),
              lambda k, n, p: TD.Binomial(n, probs=p).log_prob(k))]
    for name, point, tf in cases:
        got = _dualad_grad(getattr(ds, name).logpmf, point)
        want = _torch_grad(lambda *a, tf=tf: tf(*[v.detach() if i < len(a) - 1 else v
                                                  for i, v in enumerate(a)]), point)
        # the parameter's derivative (the count's is a property of the formula only)
        np.testing.assert_allclose(got[-1], want[-1], rtol=1e-12, err_msg=name)


@needs_torch
def test_multivariate_normal_gradients_equal_torch():
    rng = np.random.default_rng(2)
    cov, mean, x = _spd(rng, 3), rng.normal(size=3), rng.normal(size=(4, 3))
    xs = [da.tensor(v, requires_grad=True) for v in (x, mean, cov)]
    ds.multivariate_normal.logpdf(*xs).sum().backward()
    ts = [torch.tensor(v, requires_grad=True) for v in (x, mean, cov)]
    TD.MultivariateNormal(ts[1], covariance_matrix=ts[2]).log_prob(ts[0]).sum().backward()
    for a, b in zip(xs[:2], ts[:2], strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11)
    # the covariance's: along symmetric directions (either reads one triangle, or both)
    sym = lambda g: g + g.T  # noqa: E731
    np.testing.assert_allclose(sym(xs[2].grad.numpy()), sym(ts[2].grad.numpy()), rtol=1e-10)


@needs_torch
def test_dirichlet_gradients_equal_torch():
    alpha, x = np.array([0.5, 2.0, 3.0]), np.array([0.2, 0.3, 0.5])
    xs = [da.tensor(v, requires_grad=True) for v in (x, alpha)]
    ds.dirichlet.logpdf(*xs).backward()
    ts = [torch.tensor(v, requires_grad=True) for v in (x, alpha)]
    TD.Dirichlet(ts[1]).log_prob(ts[0]).backward()
    for a, b in zip(xs, ts, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


# -- gradients against central differences ---------------------------------------------------


def _fd(f, point, h=1e-6):
    out = []
    for i in range(len(point)):
        up, dn = list(point), list(point)
        up[i] += h
        dn[i] -= h
        out.append((float(f(*up)) - float(f(*dn))) / (2 * h))
    return out


FD_CASES = [  # (distribution, method, point: x, shapes..., loc, scale); no shape of a CDF
    ("logistic", m, (0.7, 0.3, 1.7)) for m in METHODS] + [
    (n, m, (0.9, 0.3, 1.7)) for n in ["norm", "laplace", "expon", "uniform"]
    for m in ["logcdf", "sf", "logsf"]] + [
    ("norm", "logcdf", (-30.0, 0.3, 1.7)), ("norm", "logsf", (40.0, 0.3, 1.7)),
    ("laplace", "cdf", (-0.9, 0.3, 1.7)), ("laplace", "logsf", (-0.9, 0.3, 1.7)),
    ("lognorm", "cdf", (2.7, 0.6, 0.3, 1.7)), ("lognorm", "logsf", (2.7, 0.6, 0.3, 1.7)),
    ("lognorm", "logcdf", (2.7, 0.6, 0.3, 1.7))]


@pytest.mark.parametrize("name,method,point", FD_CASES,
                         ids=[f"{n}.{m}{p[0]}" for n, m, p in FD_CASES])
def test_gradient_equals_central_differences(name, method, point):
    f = getattr(getattr(ds, name), method)
    np.testing.assert_allclose(_dualad_grad(f, point), _fd(f, point), rtol=2e-7, atol=1e-9)


@pytest.mark.parametrize("name,method,point,shapes", [
    ("gamma", "cdf", (2.7, 2.5, 0.3, 1.7), 1), ("gamma", "sf", (2.7, 2.5, 0.3, 1.7), 1),
    ("t", "cdf", (0.7, 3.5, 0.3, 1.7), 1), ("t", "sf", (0.7, 3.5, 0.3, 1.7), 1),
    ("beta", "cdf", (0.9, 2.5, 0.7, 0.3, 1.7), 2), ("beta", "sf", (0.9, 2.5, 0.7, 0.3, 1.7), 2),
    ("poisson", "cdf", (3.0, 2.5), 0), ("poisson", "sf", (3.0, 2.5), 0),
    ("binom", "cdf", (4.0, 12.0, 0.3), 1), ("binom", "logsf", (4.0, 12.0, 0.3), 1),
    ("bernoulli", "cdf", (0.0, 0.3), 0)])
def test_cdf_differentiable_in_its_limit_raises_in_a_shape(name, method, point, shapes):
    """x, loc, scale (and a discrete distribution's parameter) against central
    differences; a shape of the incomplete gamma and beta functions raises."""
    f = getattr(getattr(ds, name), method)
    discrete = name in DISCRETE
    free = [i for i in range(len(point)) if i == 0 or i > shapes
            or (discrete and i == len(point) - 1)]
    free = [i for i in free if not (discrete and i == 0)]
    ts = [da.tensor(p, requires_grad=i in free) for i, p in enumerate(point)]
    f(*ts).backward()
    for i in free:
        one = lambda v, i=i: f(*[v if j == i else p for j, p in enumerate(point)])  # noqa: E731
        np.testing.assert_allclose(float(ts[i].grad), _fd(one, [point[i]])[0], rtol=2e-7)
    if shapes and not discrete:
        ts = [da.tensor(p, requires_grad=i == 1) for i, p in enumerate(point)]
        with pytest.raises(NotImplementedError, match="no closed form"):
            f(*ts).backward()


# -- out of the support: the constant, and a derivative of 0 -----------------------------------


@pytest.mark.parametrize("name", ["gamma", "beta", "expon", "lognorm", "uniform"])
def test_out_of_support_derivative_is_zero(name):
    shapes, loc, scale, _, _ = CONTINUOUS[name]
    below = [-5.0, 0.3] if name == "lognorm" else [-5.0, -1.0]  # (lognorm's 0: log(0))
    points = below if name in ("gamma", "expon", "lognorm") else below + [1e3]
    want = {"logpdf": -np.inf, "pdf": 0.0}
    for method in METHODS:
        x = da.tensor(points, requires_grad=True)
        ps = [da.tensor(v, requires_grad=True) for v in (loc, scale)]
        out = _quiet(getattr(getattr(ds, name), method), x, *shapes, *ps)
        if method in want:
            assert np.all(out.detach().numpy() == want[method])
        out.sum().backward()
        assert np.all(x.grad.numpy() == 0), method
        for p in ps:
            assert p.grad is None or float(p.grad) == 0, method
    k = da.tensor([-1.0, 2.5], requires_grad=True)
    mu = da.tensor(3.0, requires_grad=True)
    ds.poisson.pmf(k, mu).sum().backward()
    assert np.all(k.grad.numpy() == 0) and float(mu.grad) == 0


# -- forward mode against reverse mode, and second order -------------------------------------


def _packed(name, method):
    """The method as a function of one vector (x, *shapes, loc, scale)."""
    return lambda v: getattr(getattr(ds, name), method)(*[v[i] for i in range(v.shape[0])])


JAC_CASES = [(n, "logpdf", TORCH[n][0]) for n in sorted(TORCH)] + [
    ("logistic", "logcdf", (0.7, 0.3, 1.7)), ("norm", "logcdf", (-20.0, 0.3, 1.7)),
    ("poisson", "logpmf", (3.0, 2.5)), ("binom", "cdf", (4.0, 12.0, 0.3)),
    ("gamma", "cdf", (2.7, 2.5, 0.3, 1.7))]


@pytest.mark.parametrize("name,method,point", JAC_CASES,
                         ids=[f"{n}.{m}" for n, m, _ in JAC_CASES])
def test_forward_mode_equals_reverse_mode(name, method, point):
    f = _packed(name, method)
    v = np.array(point)
    if (name, method) == ("gamma", "cdf"):  # no derivative in the shape
        f, v = lambda w: ds.gamma.cdf(w[0], point[1], w[1], w[2]), v[[0, 2, 3]]  # noqa: E731
    if (name, method) == ("binom", "cdf"):  # nor in the count
        f, v = lambda w: ds.binom.cdf(point[0], point[1], w[0]), v[[2]]  # noqa: E731
    fwd = DF.jacfwd(f)(da.tensor(v)).numpy()
    rev = DF.jacrev(f)(da.tensor(v)).numpy()
    np.testing.assert_allclose(fwd, rev, rtol=1e-13, atol=1e-15)


def test_multivariate_normal_forward_equals_reverse():
    rng = np.random.default_rng(3)
    cov, mean, x = _spd(rng, 3), rng.normal(size=3), rng.normal(size=(2, 3))
    for argnum in range(3):
        args = [da.tensor(v) for v in (x, mean, cov)]

        def f(a, i=argnum, args=args):
            return ds.multivariate_normal.logpdf(*[a if j == i else b
                                                   for j, b in enumerate(args)])
        fwd = DF.jacfwd(f)(args[argnum]).numpy()
        rev = DF.jacrev(f)(args[argnum]).numpy()
        np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["norm", "t", "gamma", "beta", "lognorm"])
def test_hessian_of_logpdf_equals_differences_of_the_gradient(name):
    f = _packed(name, "logpdf")
    v = np.array(TORCH[name][0])
    hess = DF.hessian(f, da.tensor(v)).numpy()
    g = lambda w: DF.grad(f)(da.tensor(w)).numpy()  # noqa: E731
    h = 1e-5
    fd = np.stack([(g(v + h * e) - g(v - h * e)) / (2 * h) for e in np.eye(len(v))])
    np.testing.assert_allclose(hess, fd, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-12)


def test_multivariate_normal_hessian_in_the_mean_is_minus_the_precision():
    rng = np.random.default_rng(4)
    cov, x = _spd(rng, 3), rng.normal(size=3)
    hess = DF.hessian(lambda m: ds.multivariate_normal.logpdf(x, m, cov),
                      da.tensor(np.zeros(3))).numpy()
    np.testing.assert_allclose(hess, -np.linalg.inv(cov), rtol=1e-12)
