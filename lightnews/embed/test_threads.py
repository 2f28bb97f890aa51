"""Encoders are shared by the web server's threads: encoding from many at once works."""

from __future__ import annotations

import importlib.util
import threading

import pytest

from lightnews.embed import encoder_for
from lightnews.settings import Settings


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("model2vec", "numpy")),
    reason="the semantic extra is not installed",
)
def test_queries_encoded_from_many_threads_at_once() -> None:
    encoder = encoder_for(Settings(environ={}).with_overrides(semantic="static"))
    expected = encoder.encode(["sparse attention query 7"])[0]
    errors: list[BaseException] = []
    same: list[bool] = []

    def run() -> None:
        try:
            for n in range(100):
                vector = encoder.encode([f"sparse attention query {n % 10}"])[0]
                if n % 10 == 7:
                    same.append(bool(abs(vector - expected).max() < 1e-6))
        except Exception as error:  # the tokenizer says "Already borrowed" when shared
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:2]
    assert same and all(same)
