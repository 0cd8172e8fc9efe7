"""The ``dualad-run`` directive: run a block of Python at build time, show it and its output.

The guide's examples are executed, not pasted: a block that raises stops the build
with the traceback, and what a page shows as output is what the code printed. Blocks
of one page share one namespace, in page order (like a notebook's cells).

In MyST Markdown::

    ```{dualad-run}
    import dualad as da
    print(da.tensor([1.0, 2.0]) * 2)
    ```

The option ``:hide-output:`` shows the code only (it still runs).
"""

from __future__ import annotations

import contextlib
import io
import traceback

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective


class DualadRun(SphinxDirective):
    has_content = True
    option_spec = {"hide-output": directives.flag}

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        spaces = self.env.temp_data.setdefault("dualad_run_namespaces", {})
        ns = spaces.setdefault(self.env.docname, {"__name__": "__dualad_run__"})
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"<{self.env.docname}: dualad-run>", "exec"), ns)
        except Exception as exc:
            raise ExtensionError(
                f"{self.env.docname}:{self.lineno}: a dualad-run block raised\n"
                + traceback.format_exc()
            ) from exc
        src = nodes.literal_block(code, code, language="python")
        result: list[nodes.Node] = [src]
        text = out.getvalue().rstrip("\n")
        if text and "hide-output" not in self.options:
            shown = nodes.literal_block(text, text, language="none")
            shown["classes"].append("dualad-run-output")
            result.append(shown)
        return result


def setup(app):  # noqa: ANN001, ANN201
    app.add_directive("dualad-run", DualadRun)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
