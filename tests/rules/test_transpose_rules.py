"""Where the transpose rules live: each beside its primitive, given where it is made.

A linear primitive's evaluation, batching rule, shape rule and transpose rule are read in
one file of ``dualad/rules`` (its family's); nothing outside assigns a transpose rule at
import. The rules' values are checked elsewhere: the transposition identity
``Re<v, J u> == Re<J^T v, u>`` over the op database (``tests/reverse/test_transposition.py``,
``tests/rules/test_ops_reverse.py``).
"""

import ast
import importlib
import inspect
import pathlib
import pkgutil

import numpy as np

import dualad  # noqa: F401  (every family imported)
import dualad.rules as rules
from dualad.core.dispatch import Primitive, apply
from dualad.reverse.linearize import placeholder
from dualad.rules import elementwise as E
from dualad.rules import linear as L
from dualad.rules._util import is_lin

_PACKAGE = pathlib.Path(dualad.__file__).parent


def _primitives():
    """Each primitive of dualad.rules, with the modules whose namespace holds it (directly,
    or in a table of the module)."""
    found: dict = {}
    for m in pkgutil.iter_modules(rules.__path__):
        mod = importlib.import_module(f"dualad.rules.{m.name}")
        for v in vars(mod).values():
            ps = [v] if isinstance(v, Primitive) else (
                [p for p in v.values() if isinstance(p, Primitive)] if isinstance(v, dict)
                else [])
            for p in ps:
                found.setdefault(id(p), (p, set()))[1].add(mod.__name__)
    return list(found.values())


def test_every_linear_primitive_has_its_transpose_beside_it():
    seen = 0
    for p, holders in _primitives():
        if p.nondiff or not p.linear:
            assert p.transpose is None, f"non-linear {p.name} carries a transpose rule"
            continue
        assert p.transpose is not None, f"linear {p.name} lacks a transpose rule"
        # written in a module of the rules layer that holds the primitive (its family's:
        # one file to read), not in reverse/
        assert p.transpose.__module__ in holders, (p.name, p.transpose.__module__, holders)
        seen += 1
    assert seen >= 30


def test_no_module_assigns_a_transpose_rule_from_outside():
    """No ``something.transpose = rule`` anywhere in the package: a rule is given to its
    primitive where the primitive is made (``Primitive(..., transpose=rule)``)."""
    offenders = []
    for path in _PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for t in targets:
                # (``self.transpose`` is Primitive's own slot; ``Tensor.transpose`` the
                # array method)
                if isinstance(t, ast.Attribute) and t.attr == "transpose" and not (
                        isinstance(t.value, ast.Name) and t.value.id in ("self", "Tensor")):
                    offenders.append(f"{path.relative_to(_PACKAGE)}:{node.lineno}")
    assert not offenders, offenders


def test_rule_signature_and_placeholders():
    """``rule(ct, args, **params)``: a cotangent for each placeholder argument, None for
    a constant one (multiply is linear in one operand at a time)."""
    mul = E.PRIMS["multiply"]
    a = placeholder((2, 3), np.float64)
    b = dualad.tensor(np.arange(3.0) + 1j)
    assert is_lin(a) and not is_lin(b) and not is_lin(np.ones(3))
    ct = dualad.tensor(np.ones((2, 3)))
    ra, rb = mul.transpose(ct, (a, b))
    assert rb is None
    np.testing.assert_array_equal(ra.numpy(), np.broadcast_to(np.conj(b.numpy()), (2, 3)))
    # broadcasting transposes to a sum over the broadcast axes
    (r,) = L.broadcast_to.transpose(ct, (placeholder((3,), np.float64),), shape=(2, 3))
    np.testing.assert_array_equal(r.numpy(), [2.0, 2.0, 2.0])
    assert inspect.signature(L.reduce_sum.transpose).parameters.keys() >= {"ct", "args"}


def test_identity_reshapes_and_permutations_add_no_node():
    # the rules written with primitives keep the vocabulary's shortcuts: a transpose that
    # changes nothing hands the cotangent on as it is
    ct = dualad.tensor(np.ones((2, 3)))
    x = placeholder((2, 3), np.float64)
    assert L.reshape.transpose(ct, (x,), shape=(2, 3))[0] is ct
    assert L.transpose.transpose(ct, (x,), axes=(0, 1))[0] is ct
    assert L.broadcast_to.transpose(ct, (x,), shape=(2, 3))[0] is ct
    r = apply(L.transpose, ct, axes=(1, 0))
    assert L.transpose.transpose(r, (placeholder((3, 2), np.float64),), axes=(1, 0))[0].shape \
        == (2, 3)
