"""Every script in examples/ must run to completion and print something.

Scripts are discovered by globbing, so examples added later are covered
without editing this file. Each example checks the numbers it prints (against
closed forms, finite differences or another mode), so a wrong derivative makes
it exit non-zero here. Matplotlib runs on its Agg backend. Each runs in a fresh
interpreter (sys.executable, i.e. the environment the tests run in) from the
repository root.

The Python snippets of README.md are run the same way, together, followed by
checks of the values their comments state, so the README stays true.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_quickstart_exists():
    # The README's setup command runs it; guard against a rename.
    assert (ROOT / "examples" / "quickstart.py") in EXAMPLES


PICTURES = (".png", ".svg", ".pdf", ".gv", ".dot")
SKIP_DIRS = {".git", ".venv", "__pycache__", "_build", "auto_examples", "generated"}


def _pictures():
    """Picture files anywhere in the repository (outside build outputs and the venv)."""
    found = set()
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        found.update(os.path.join(top, f) for f in files if f.endswith(PICTURES))
    return found


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script):
    before = _pictures()
    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "Agg")  # examples that plot must not need a display
    # the dualad of this checkout, as the tests in this process import it (a script's own
    # directory, examples/, would otherwise come first and an installed copy be used)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,  # each runs in seconds; this is the limit for a slow machine
    )
    detail = f"\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    assert proc.returncode == 0, f"{script.name} exited with {proc.returncode}{detail}"
    assert proc.stdout.strip(), f"{script.name} printed nothing{detail}"
    # figures are shown (or scraped by the docs build), never saved into the repository
    assert _pictures() == before, f"{script.name} wrote {sorted(_pictures() - before)}"


# The claims that README.md's snippets make in their comments, checked against
# the variables the snippets leave behind (they run in one namespace, in order).
README_CLAIMS = """
_x = np.array([0.0, 0.5, 1.0])
assert np.allclose(value.numpy(), np.sin(_x) * np.exp(-_x**2))
assert np.allclose(tangent.numpy(), (np.cos(_x) - 2 * _x * np.sin(_x)) * np.exp(-_x**2))
_w = np.array([1.0, -2.0, 0.5])
_s = 1 / (1 + np.exp(-_w))
assert np.allclose(w.grad.numpy(), 2 * _w * np.log1p(np.exp(_w)) + _w**2 * _s)
assert np.allclose(g.detach().numpy(), 3 * _w**2)
_xf = np.array([0.1, 0.2, 0.3, 0.4])
_J = (1 - np.tanh(W @ _xf) ** 2)[:, None] * W + np.diag(3 * _xf**2)
assert np.allclose(J.detach().numpy(), _J)
assert np.allclose(Hv.detach().numpy(), 12 * _xf**2)
assert np.allclose(t.grad.numpy(), [2 * np.cos(0.0), 3 * np.cos(1.0)])
assert np.allclose(z.grad.numpy(), 6 + 8j)
print("README claims hold")
"""


def test_readme_snippets():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert blocks, "README.md has no python code blocks"
    code = "\n\n".join(blocks) + "\n" + README_CLAIMS
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"README snippets failed:\n{proc.stdout}\n{proc.stderr}"
