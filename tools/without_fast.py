"""Run the test suite on a copy of this checkout without the fast layer (``dualad/fast/``).

``python tools/without_fast.py [pytest arguments]``

The fast layer is a second implementation of rules, for speed; deleting it must leave
a library that imports and passes the whole suite on the general path alone. This is
the check CI runs after the suite itself: the checkout's tracked and untracked files
(not what ``.gitignore`` ignores, nor ``.git``) are copied into a temporary directory,
``dualad/fast/`` is left out, and ``python -m pytest`` runs there with this Python (the
current directory comes first on ``sys.path``, so the copy's ``dualad`` is the one
imported: the command checks that before running the suite). Its exit status is
pytest's.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
LEFT_OUT = pathlib.PurePosixPath("dualad/fast")


def _files() -> list[str]:
    """The checkout's files that are not ignored (tracked, or new and not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return [f for f in out.split("\0") if f]


def main(argv: list[str]) -> int:
    """Copy, leave the fast layer out, check which ``dualad`` is imported, run pytest."""
    with tempfile.TemporaryDirectory(prefix="dualad-without-fast-") as tmp:
        dest = pathlib.Path(tmp)
        for name in _files():
            rel = pathlib.PurePosixPath(name)
            if rel == LEFT_OUT or LEFT_OUT in rel.parents or not (ROOT / rel).is_file():
                continue  # (the fast layer; a file deleted but not yet committed)
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, target)
        # (the copy's dualad, which finds no fast layer in its folder and installs none; an
        # editable install's import finder would still find the original tree's)
        check = ("import pathlib, sys, dualad; from dualad import _fastpaths; "
                 f"assert pathlib.Path(dualad.__file__).parent == pathlib.Path({str(dest)!r}) / "
                 "'dualad', dualad.__file__; "
                 "assert not _fastpaths.PRESENT and 'dualad.fast' not in sys.modules")
        subprocess.run([sys.executable, "-c", check], cwd=dest, check=True)
        print(f"== the test suite without dualad/fast/ ({dest})", flush=True)
        return subprocess.run([sys.executable, "-m", "pytest", *argv], cwd=dest).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
