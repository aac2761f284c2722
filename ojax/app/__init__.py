"""The application: the `ojax` command (:mod:`ojax.app.cli`), run folders and their locks,
what a run writes (results, curves, figures), `ojax sweep`'s learner sweeps, benchmark timing,
Ctrl-C. The library (everything else under `ojax/`) never imports it.

Importing this package installs the command's Ctrl-C handler (:func:`ojax.app.interrupt.install`:
one line and status 130 in the `ojax` command, Python's `KeyboardInterrupt` elsewhere) before
anything imports JAX.
"""

from ojax.app import interrupt as _interrupt

_interrupt.install()

__all__: list[str] = []  # the modules are the interface: ojax.app.cli, ojax.app.output, ...
