"""Stems made by many threads at once are the stems one thread makes."""

from __future__ import annotations

import threading

from lightnews.normalize.stems import porter_stem

WORDS = (
    "generalization regularizing attention transformers relational conditional "
    "optimization hypothetically probabilistic reinforcement computational effectiveness "
    "adaptability controllable distillation hallucinations"
).split()


def test_threads_stemming_at_once_get_the_stems_of_one_thread() -> None:
    expected = {w: porter_stem(w) for w in WORDS}
    assert expected["generalization"] == "gener" and expected["attention"] == "attent"
    wrong: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def stem_many() -> None:
        try:
            for _ in range(2_000):
                for word in WORDS:
                    stem = porter_stem(word)
                    if stem != expected[word]:
                        wrong.append((word, stem))
        except BaseException as error:  # the shared stemmer raised IndexError so
            errors.append(error)

    threads = [threading.Thread(target=stem_many) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and not wrong[:5]
