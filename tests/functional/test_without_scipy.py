"""dualad needs only NumPy (and array-api-compat): without SciPy it imports and
differentiates, and what needs SciPy says so when used."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent("""
    import sys

    class NoSciPy:  # (a finder that makes SciPy look absent)
        def find_spec(self, name, path=None, target=None):
            if name == "scipy" or name.startswith("scipy."):
                raise ImportError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, NoSciPy())
    import numpy as np
    import dualad
    import dualad.functional as F

    x = np.array([0.5, 2.0])
    assert np.allclose(np.asarray(F.jacfwd(lambda v: v ** 3)(x)), np.diag(3 * x ** 2))
    assert np.isclose(float(F.laplacian(lambda v: (v ** 3).sum(), x)), 6 * x.sum())
    for name in ("jacobian_sparsity", "sparse_jacobian", "prepare_sparse_hessian"):
        try:
            getattr(F, name)
        except ImportError as e:
            assert "needs SciPy" in str(e) and "dualad[scipy]" in str(e), e
        else:
            raise AssertionError(f"{name} loaded without SciPy")
    assert "scipy" not in sys.modules
    print("ok")
""")


def test_dualad_imports_and_differentiates_without_scipy():
    out = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
