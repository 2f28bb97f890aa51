"""Porter stems, safe from any thread.

Full-text search, related papers and the title linker all stem words with
Snowball's Porter stemmer. A stemmer object keeps the word it works on in
itself, so one object shared by the web server's request threads mixes their
words: under ten concurrent feed requests it raised ``IndexError`` (a 500),
and a stem made from another thread's word could have been cached for good.
Each thread here has its own stemmer; callers keep their own caches.
"""

from __future__ import annotations

import threading

import snowballstemmer

__all__ = ["porter_stem"]

_stemmers = threading.local()


def porter_stem(word: str) -> str:
    """Snowball's Porter stem of ``word`` (as given: callers fold case themselves)."""
    stemmer = getattr(_stemmers, "porter", None)
    if stemmer is None:
        stemmer = _stemmers.porter = snowballstemmer.stemmer("porter")
    return str(stemmer.stemWord(word))
