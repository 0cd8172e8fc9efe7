"""
Profile the training step of a small MLP with ``dualad.profiler``
=================================================================

Runs a few steps of gradient descent on a two-layer tanh network, profiles one
step, prints the per-operation table (forward primitives such as ``matmul`` and
``tanh``, and the backward nodes such as ``MatmulBackward0``) and writes a
Chrome/Perfetto trace next to the system's temporary files.

    python examples/profile_mlp.py
"""

import json
import os
import sys
import tempfile

import numpy as np

import dualad as da
import dualad.numpy as dnp
from dualad.profiler import profile, record_function

rng = np.random.default_rng(0)
X = da.tensor(rng.normal(size=(256, 32)))
Y = da.tensor(np.sin(X.numpy().sum(axis=1, keepdims=True)))
W1 = da.tensor(rng.normal(size=(32, 64)) / np.sqrt(32), requires_grad=True)
b1 = da.zeros(64, requires_grad=True)
W2 = da.tensor(rng.normal(size=(64, 1)) / 8, requires_grad=True)
params = [W1, b1, W2]


def step(lr=0.05):
    with record_function("forward"):
        h = dnp.tanh(X @ W1 + b1)
        loss = ((h @ W2 - Y) ** 2).mean()
    with record_function("backward"):
        loss.backward()
    with record_function("update"), da.no_grad():
        for p in params:
            p[...] = p - lr * p.grad
            p.grad = None
    return float(loss)


first = step()
for _ in range(20):
    last = step()

with profile(record_shapes=True, profile_memory=True) as prof:
    step()

print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
print(prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                         row_limit=5))
path = os.path.join(tempfile.gettempdir(), "dualad_mlp_trace.json")
prof.export_chrome_trace(path)
with open(path) as f:
    n = sum(e["ph"] == "X" for e in json.load(f)["traceEvents"])
print(f"trace with {n} events written to {path} (open it in https://ui.perfetto.dev)")
print(f"loss {first:.4f} -> {last:.4f}")

names = {e.key for e in prof.key_averages()}
expected = {"forward", "backward", "update", "matmul", "tanh", "MatmulBackward0",
            "TanhBackward0", "AccumulateGrad"}
if not expected <= names or not last < first:
    print("unexpected profile:", sorted(expected - names))
    sys.exit(1)

# sphinx_gallery_thumbnail_path = '_static/thumbnails/profile_mlp.png'
