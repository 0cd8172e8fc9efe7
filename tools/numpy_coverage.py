"""Write the coverage table (NumPy's, then dualad.scipy's):
``python tools/numpy_coverage.py > docs/numpy_coverage.md``.

(The table itself is ``dualad.numpy._coverage``; ``tests/numpy/test_coverage.py`` fails when the
published file is not this script's output.)
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # this checkout's dualad

from dualad.numpy import _coverage as _coverage  # noqa: E402
from dualad.scipy import _coverage as _scipy_coverage  # noqa: E402

sys.stdout.write(_coverage.markdown() + _scipy_coverage.markdown())
