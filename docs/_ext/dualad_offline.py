"""The site reads offline: a check, after the HTML build, that no page loads a script or a
stylesheet from another host.

MathJax is served with the site (the ``sphinx-mathjax-offline`` package copies it into
``_static/mathjax``; ``conf.py`` points ``mathjax_path`` there). Sphinx's default is a CDN
URL: a page opened without a network would show raw TeX. This check fails the build if a
page (an API page, a gallery page) loads anything from a URL, so that a theme or an
extension that adds one, or a change of ``mathjax_path``, is seen at once.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.errors import ExtensionError

# <script src="http...">, <link ... href="http..."> (stylesheets, preloads), and
# any MathJax address at all (a configuration can name one outside a src attribute)
_EXTERNAL = re.compile(
    r"""<script\b[^>]*\bsrc=["'](?:https?:)?//[^"']*"""
    r"""|<link\b[^>]*\bhref=["'](?:https?:)?//[^"']*"""
    r"""|(?:https?:)?//[^"'\s]*mathjax[^"'\s]*""",
    re.IGNORECASE,
)


def external_loads(outdir: Path) -> dict[str, list[str]]:
    """What each built page loads from another host: {page: [tags]}."""
    found: dict[str, list[str]] = {}
    for page in sorted(outdir.rglob("*.html")):
        hits = _EXTERNAL.findall(page.read_text(encoding="utf-8", errors="replace"))
        if hits:
            found[str(page.relative_to(outdir))] = hits
    return found


def check(app, exc) -> None:  # noqa: ANN001
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    mathjax = outdir / "_static" / app.config.mathjax_path
    if not mathjax.is_file():
        raise ExtensionError(
            f"MathJax is not served with the site: {mathjax} is missing "
            "(install the docs extra: pip install -e '.[docs]', which has sphinx-mathjax-offline)")
    found = external_loads(outdir)
    if found:
        shown = "\n".join(f"  {page}: {hits[0]}" for page, hits in list(found.items())[:10])
        raise ExtensionError(
            f"{len(found)} page(s) load a script or stylesheet from another host; the site "
            f"must read offline:\n{shown}")


def setup(app):  # noqa: ANN001, ANN201
    # after sphinx-mathjax-offline's own build-finished handler (priority 500) copied MathJax
    app.connect("build-finished", check, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
