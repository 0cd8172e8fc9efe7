"""The general path: Tensor, Primitive, ``apply`` and its interpreters, dual levels and
grad modes. Nothing here knows NumPy's function library, a derivative rule or the fast
layer; see ``docs/architecture.md``."""
