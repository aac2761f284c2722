"""ojax: a JAX library and vectorized simulator for online learning.

The names of :data:`__all__` (the learner families, `run`, `run_env`, the protocols, ...) are
loaded on first use (`ojax/__init__.pyi` lists them): `import ojax` imports no JAX, so the
`ojax` command can take Ctrl-C from its first instant (:mod:`ojax.app`).
"""

import lazy_loader as _lazy

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
