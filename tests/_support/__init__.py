"""Helpers the tests share (not tests themselves): ``opdb``, the op database, and
``symbolic``, SymPy's derivatives as the rule tests compare with them.

``tests/`` is on ``sys.path`` while pytest runs (it holds the root ``conftest.py``), so a
test in any folder imports them as ``from _support import opdb``.
"""
