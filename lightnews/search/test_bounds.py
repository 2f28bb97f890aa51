"""Search is bounded: too many terms or prefixes, or too long a read, give "narrow it"."""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import product

import pytest

from lightnews.errors import TooExpensive
from lightnews.model import Author, Paper
from lightnews.search import MAX_PREFIXES, MAX_TERMS, bounded_terms, parse_query, search_papers
from lightnews.settings import Settings
from lightnews.store import SQLiteStore

NOW = "2025-11-30T12:00:00Z"
WORDS = (
    "sparse attention routing experts tokens transformer diffusion contrastive consistent "
    "convolution retrieval reasoning context compression quantization pruning"
).split()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SQLiteStore]:
    """3,000 papers whose titles and abstracts share a small vocabulary."""
    store = SQLiteStore(tmp_path_factory.mktemp("bounds") / "l.db")
    papers = []
    for n in range(3000):
        words = [WORDS[(n * k) % len(WORDS)] for k in (1, 3, 5, 7, 11)]
        papers.append(
            Paper(
                f"2501.{n:05d}",
                title=" ".join(words[:3]).title(),
                abstract=" ".join(words * 4) + f" number {n}.",
                authors=[Author(f"Author {n % 50}")],
                published=NOW,
            )
        )
    store.save_papers(papers, NOW)
    yield store
    store.close()


def lexical(**overrides: object) -> Settings:
    return Settings(environ={}).with_overrides(semantic="off", **overrides)


def test_sixty_prefix_terms_get_a_clear_bounded_answer(library: SQLiteStore) -> None:
    began = time.monotonic()
    with pytest.raises(TooExpensive, match=r"a\* matches too many words.*at least 3"):
        search_papers(library, " ".join(["a*"] * 60), settings=lexical())
    many = " ".join(f"{a}{b}{c}*" for a, b, c in list(product("abcd", repeat=3))[:60])
    with pytest.raises(TooExpensive, match=f"60 prefixes.*at most {MAX_PREFIXES}"):
        search_papers(library, many, settings=lexical())
    words = " ".join(f"word{n}" for n in range(MAX_TERMS + 1))
    with pytest.raises(TooExpensive, match=f"{MAX_TERMS + 1} different terms"):
        search_papers(library, words, settings=lexical())
    assert time.monotonic() - began < 1.0


def test_a_term_given_many_times_counts_once(library: SQLiteStore) -> None:
    once = search_papers(library, "cont* attention", settings=lexical())
    assert once
    again = search_papers(library, " ".join(["cont*", "attention"] * 30), settings=lexical())
    assert [h.arxiv_id for h in again] == [h.arxiv_id for h in once]
    assert len(bounded_terms(parse_query("attention attention -noise -noise"))) == 2
    expression = SQLiteStore._fts_expression(parse_query("a* a* a* b b -c -c"))
    assert expression == '"a"* "b" NOT "c"'


def test_a_search_over_its_time_budget_says_narrow_it(library: SQLiteStore) -> None:
    query = "numb* cont*"  # every paper matches: ranking them reads them all
    with pytest.raises(TooExpensive, match="narrow it"):
        search_papers(library, query, settings=lexical(search_budget_ms=1))
    assert search_papers(library, query, settings=lexical())  # the default budget answers
