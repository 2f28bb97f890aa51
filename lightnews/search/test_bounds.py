"""Search is bounded: too many terms or prefixes are narrowed, saying so; a long read is refused."""

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


def test_sixty_prefix_terms_get_a_quick_narrowed_answer_that_says_so(library: SQLiteStore) -> None:
    began = time.monotonic()
    short = search_papers(library, " ".join(["a*"] * 60), settings=lexical())
    assert short.note and "a* searched as whole words" in short.note
    assert "3 characters" in short.note
    many = " ".join(f"{a}{b}{c}*" for a, b, c in list(product("abcd", repeat=3))[:60])
    narrowed = search_papers(library, many, settings=lexical())
    assert narrowed.note and f"first {MAX_PREFIXES} of 60 prefixes" in narrowed.note
    words = " ".join(f"word{n}" for n in range(MAX_TERMS + 1))
    cut = search_papers(library, words, settings=lexical())
    assert cut.note and f"first {MAX_TERMS} of {MAX_TERMS + 1} different terms" in cut.note
    assert time.monotonic() - began < 1.0


def test_narrowing_keeps_the_first_terms_and_says_nothing_when_within_bounds() -> None:
    plain = bounded_terms(parse_query("sparse attention cont*"))
    assert plain.note is None and [t.prefix for t in plain.terms] == [False, False, True]
    many = bounded_terms(parse_query("abc* abd* abe* abf* abg* ab* -xyz*"))
    assert [t.words for t in many.terms if t.prefix] == ["abc", "abd", "abe", "abf"]
    assert [t.words for t in many.terms if not t.prefix] == ["abg", "ab", "xyz"]
    assert many.terms[-1].exclude  # an exclusion stays one
    over = bounded_terms(parse_query(" ".join(f"w{n}" for n in range(40))))
    assert [t.words for t in over.terms] == [f"w{n}" for n in range(MAX_TERMS)]
    assert bounded_terms(parse_query("ab* ab")).terms == tuple(parse_query("ab"))  # once


def test_a_term_given_many_times_counts_once(library: SQLiteStore) -> None:
    once = search_papers(library, "cont* attention", settings=lexical())
    assert once
    again = search_papers(library, " ".join(["cont*", "attention"] * 30), settings=lexical())
    assert [h.arxiv_id for h in again] == [h.arxiv_id for h in once]
    assert len(bounded_terms(parse_query("attention attention -noise -noise")).terms) == 2
    expression = SQLiteStore._fts_expression(parse_query("a* a* a* b b -c -c"))
    assert expression == '"a"* "b" NOT "c"'


def test_a_search_over_its_time_budget_says_narrow_it(library: SQLiteStore) -> None:
    query = "numb* cont*"  # every paper matches: ranking them reads them all
    with pytest.raises(TooExpensive, match="narrow it"):
        search_papers(library, query, settings=lexical(search_budget_ms=1))
    assert search_papers(library, query, settings=lexical())  # the default budget answers
