"""Lightnews: scholar-powered research news.

Data flows from ``sources`` (fetch and parse, with ``normalize``) through
``ingest`` into the ``store``, where ``link`` ties items to papers and authors
to scholars and ``embed`` adds meaning; ``search`` and ``rank`` read it back,
and ``serve``, ``mcp``, ``deliver`` and ``cli`` show it. The layers, what each
package holds and the glossary are in ``docs/architecture.md``; a module
imports only from its own layer or below (``lightnews/test_layers.py``).
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
