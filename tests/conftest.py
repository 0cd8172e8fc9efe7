"""Shared test configuration.

Hypothesis profiles:

* ``ci`` (the default): few examples, derandomized (the same examples every run),
  no deadline — short and deterministic for CI;
* ``long``: many random examples, for local runs::

      HYPOTHESIS_PROFILE=long python -m pytest tests/sweeps/test_properties.py

NumPy's global random state is seeded before every test, so tests that use
``np.random`` (or ``dualad.rand`` / ``dualad.randn``) are reproducible.

At the end of a run the number of (function, dtype, mode) cases the op database
checked is printed (see ``tests/_support/opdb.py``).

A test of a fast path itself (that it equals the general path, that it takes the
case it is made for) is marked ``@pytest.mark.fastpath(family, ...)`` (no family: it
needs the fast layer, whichever families are on). With those families switched off
(``DUALAD_GENERAL_PATH``, see ``dualad/fast/switch.py``) there is no fast path to test,
and it is deselected; without the fast layer (``dualad/fast/`` deleted) every such test
is skipped. Every other test runs every way.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from dualad import _fastpaths

settings.register_profile(
    "ci",
    max_examples=30,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend", default="numpy", choices=("numpy", "cupy"),
        help="cupy: run tests/backends/test_device_sweep.py (the op database in every mode, the "
             "functional API, in-place programs) on CuPy arrays on a GPU, against the same "
             "computations on NumPy (docs/backends.md); numpy (the default) skips it",
    )


_FAST_LAYER = _fastpaths.PRESENT  # (its folder, not the import system: see _fastpaths)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _FAST_LAYER:  # (dualad/fast/ deleted: no fast path to test)
        skip = pytest.mark.skip(reason="tests a fast path; the fast layer (dualad/fast/) is absent")
        for item in items:
            if item.get_closest_marker("fastpath") is not None:
                item.add_marker(skip)
        return
    from dualad.fast import switch

    if not switch.OFF:
        return
    keep, drop = [], []
    for item in items:
        m = item.get_closest_marker("fastpath")
        (drop if m is not None and not all(map(switch.on, m.args)) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(autouse=True)
def _seed_numpy() -> None:
    np.random.seed(0)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    opdb = sys.modules.get("_support.opdb")
    if opdb is None or not opdb.CASES:
        return
    by_mode: dict[str, int] = {}
    for _, _, mode in opdb.CASES:
        by_mode[mode] = by_mode.get(mode, 0) + 1
    fns = {name for name, _, _ in opdb.CASES}
    detail = ", ".join(f"{m} {n}" for m, n in sorted(by_mode.items()))
    terminalreporter.write_line(
        f"op database: {len(opdb.CASES)} (function, dtype, mode) cases checked over "
        f"{len(fns)} functions ({detail})"
    )
    groups = [("two modes", opdb.SECOND), ("two modes, batched",
                                           tuple("batched-" + m for m in opdb.SECOND)),
              ("third order", opdb.THIRD), ("nested transforms", opdb.TRANSFORMS)]
    parts = []
    for title, modes in groups:
        got = [m for m in modes if m in by_mode]
        if got:
            parts.append(f"{title}: " + ", ".join(
                f"{m} {by_mode[m]} cases / {opdb.CHECKS.get(m, 0)} samples" for m in got))
    if parts:
        terminalreporter.write_line("higher-order sweep (issue 18): " + "; ".join(parts))
