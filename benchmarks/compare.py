#!/usr/bin/env python
"""Two or more builds of dualad side by side, on the rows of ``benchmarks/run.py``.

    python benchmarks/compare.py [--rounds N] [--only NAME[,NAME...]] LABEL=SPEC ...

Each SPEC is a checkout (its ``benchmarks/run.py`` measures the dualad beside it),
optionally followed by ``:VAR=VALUE`` environment settings, e.g.::

    python benchmarks/compare.py --only chains,functional \\
        main=/tmp/main  new=.  general=.:DUALAD_GENERAL_PATH=1

The builds run in turns (round 1: every build, round 2: every build, ...), so that
each meets the machine in the same states; a shared machine drifts by 2x over
minutes. For every row the table gives each build's best dualad figure over the
rounds, and its ratio to NumPy's figure measured in the same run (the figure the
machine's state moves least), best over the rounds. The memory row is left out
(it measures bytes, in subprocesses of its own: run it with ``run.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def _spec(text: str) -> tuple[str, str, dict[str, str]]:
    label, _, rest = text.partition("=")
    if not label or not rest:
        raise SystemExit(f"build {text!r}: write LABEL=CHECKOUT[:VAR=VALUE...]")
    path, *envs = rest.split(":")
    env = {}
    for e in envs:
        k, _, v = e.partition("=")
        env[k] = v
    run = os.path.join(os.path.abspath(path), "benchmarks", "run.py")
    if not os.path.exists(run):
        raise SystemExit(f"build {label}: {run} does not exist")
    return label, run, env


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="+", metavar="LABEL=SPEC")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="chains,mlp,functional")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    builds = [_spec(b) for b in args.builds]
    only = ",".join(n for n in args.only.split(",") if n != "memory")
    best: dict[tuple[str, str], dict[str, list[float]]] = {}
    units: dict[tuple[str, str], str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for label, run, env in builds:
                out = os.path.join(tmp, f"{label}-{r}.json")
                cmd = [sys.executable, run, "--only", only, "--json", out]
                if args.quick:
                    cmd.append("--quick")
                print(f"round {r + 1}/{args.rounds}: {label}", file=sys.stderr, flush=True)
                subprocess.run(cmd, env=dict(os.environ, **env), check=True,
                               stdout=subprocess.DEVNULL)
                with open(out) as f:
                    rows = json.load(f)["rows"]
                for row in rows:
                    key = (row["bench"], row["name"])
                    units[key] = row["unit"]
                    d = row["cells"].get("dualad", {}).get("value")
                    n = row["cells"].get("numpy", {}).get("value")
                    if d is None:
                        continue
                    cell = best.setdefault(key, {}).setdefault(label, [float("inf")] * 2)
                    cell[0] = min(cell[0], d)
                    if n and not row["unit"].startswith("×"):  # (else d is the ratio)
                        cell[1] = min(cell[1], d / n)
    labels = [b[0] for b in builds]
    head = "| row | unit | " + " | ".join(f"{x} | {x} / NumPy" for x in labels) + " |"
    print(head)
    print("|" + "---|" * (2 + 2 * len(labels)))
    for key, cells in best.items():
        vals = []
        for x in labels:
            v, q = cells.get(x, [float("inf")] * 2)
            vals += [f"{v:.3g}" if v != float("inf") else "-",
                     f"{q:.3g}" if q != float("inf") else "-"]
        print(f"| {key[1]} | {units[key]} | " + " | ".join(vals) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
