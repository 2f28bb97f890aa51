"""Lightnews: scholar-powered research news.

The package list reads as the data flow::

    sources -> normalize -> link -> store -> search -> rank -> serve

``sources`` fetch and parse, ``normalize`` canonicalises ids, names, HTML and
times, ``link`` finds the papers items talk about, ``store`` keeps it all,
``search`` and ``rank`` read it back, ``serve`` shows it (CLI today).
``pipeline`` drives one source through those steps.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
