"""Stemming is shared by threads (the web server's, for related papers): it stays right."""

from __future__ import annotations

import threading
from random import Random

from lightnews.link import title_words


def test_words_stemmed_from_many_threads_at_once_are_stemmed_right() -> None:
    rng = Random(7)
    suffixes = ("ational", "ization", "fulness", "iveness", "ing", "ed", "ies", "ment")
    words = [
        "".join(rng.choice("bcdfghklmnprstvw") + rng.choice("aeiou") for _ in range(4))
        + rng.choice(suffixes)
        for _ in range(4000)
    ]
    expected = {w: title_words.stem_word(w) for w in words}  # one thread: the reference
    title_words.stem_word.cache_clear()  # so that the threads stem them again
    wrong: list[str] = []
    errors: list[BaseException] = []

    def run(part: list[str]) -> None:
        try:
            for word in part:
                if title_words.stem_word(word) != expected[word]:
                    wrong.append(word)
        except Exception as error:  # a shared stemmer's state read mid-word
            errors.append(error)

    threads = [threading.Thread(target=run, args=(words[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and not wrong, (errors[:2], wrong[:5])
