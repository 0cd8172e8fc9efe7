"""The dualad.scipy part of the coverage table (dualad/scipy/_coverage.py): every public
name classified, no note for a name that is gone, and its claims about what raises true."""

import numpy as np
import pytest

pytest.importorskip("scipy")

import dualad as da  # noqa: E402
from dualad.scipy import _coverage as SC  # noqa: E402
from dualad.scipy import integrate, special, stats  # noqa: E402


def test_every_public_name_is_in_the_table_and_every_note_names_one():
    names = {n for ns in SC.NAMESPACES for n in SC.public(ns)}
    assert {row[0] for row in SC.table()} == names
    stale = sorted((set(SC.PARTIAL) | set(SC.NONDIFF) | SC.RULES) - names)
    assert not stale, f"coverage notes for names dualad.scipy does not have: {stale}"


def _raises_in(f, *args, which):
    args = [da.tensor(a, requires_grad=(i == which)) for i, a in enumerate(args)]
    with pytest.raises(NotImplementedError):
        f(*args).sum().backward()


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "stdtr", "jv", "yv", "iv", "ive"])
def test_a_derivative_the_table_says_raises_does(name):
    _raises_in(getattr(special, name), 2.0, 1.5, which=0)


def test_the_table_claims_for_stats_cdfs_and_odeint():
    _raises_in(lambda x, a: stats.gamma.cdf(x, a), 1.0, 2.0, which=1)
    _raises_in(lambda x, a, b: stats.beta.cdf(x, a, b), 0.3, 2.0, 3.0, which=1)
    _raises_in(lambda x, df: stats.t.cdf(x, df), 0.3, 4.0, which=1)
    import dualad.functional as F

    with pytest.raises(NotImplementedError, match="Dfun"):
        integrate.odeint(lambda y, t: -y, [1.0], np.array([0.0, 1.0]), Dfun=lambda y, t: -1.0)
    # (to any order: d2/dk2 exp(-k) = exp(-k))
    h = F.hessian(lambda k: integrate.odeint(lambda y, t, k: -k * y, [1.0], np.array([0.0, 1.0]),
                                             args=(k,), rtol=1e-10, atol=1e-10)[-1, 0],
                  da.tensor(0.5))
    assert abs(float(h) - np.exp(-0.5)) < 1e-7
