"""Titles written in other words, linked by meaning within their page's period: on the real
seed pages, with the 11k real papers around them, and with the named papers left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import hf_corpus
from lightnews.ingest.resolve import resolve_bytes
from lightnews.link.meaning import load_meaning, title_spans
from lightnews.link.pagecontext import page_context, paper_month
from lightnews.model import Mention
from lightnews.settings import Settings
from lightnews.sources.arxiv_api import parse_api_feed
from lightnews.store import Store

ARTICLE = "seed-pages/blog/apple-ml-research.rss.xml"
#: The lab article's titles spun so far that only their meaning is left to link them by.
SPUN = {"2409.04431", "2411.09009", "2410.05656", "2410.14516"}


def test_title_spans_are_title_case_runs_in_prose() -> None:
    text = (
        "At ICLR, Apple ML researchers will current Principle, Evaluation, and Finest "
        "Practices for Sigmoid Self-Consideration, which explores sigmoid consideration. "
        "To handle this, they will current Do LLMs Know Internally When They Observe "
        "Directions? at ICLR."
    )
    spans = title_spans(text)
    assert "Principle, Evaluation, and Finest Practices for Sigmoid Self-Consideration" in spans
    assert "Do LLMs Know Internally When They Observe Directions?" in spans
    assert not any("explores" in s or "researchers" in s for s in spans)


def test_page_context_needs_sure_links_of_one_period() -> None:
    sure = [Mention(a, "fuzzy-title", 0.95, "") for a in ("2410.02073", "2409.03137", "2412.13303")]
    context = page_context(sure)
    assert context is not None and context.holds("2410.14516") and not context.holds("2505.24298")
    assert page_context(sure[:2]) is None  # two sure links are not a period
    spread = [*sure[:2], Mention("2602.00001", "fuzzy-title", 0.95, "")]
    assert page_context(spread) is None  # years apart: no period
    assert page_context(sure[:1], "Notes from ICLR 2025") is not None  # the venue says when
    assert paper_month("hep-th/9901001") == 1999 * 12 and paper_month("2410.02073") == 2024 * 12 + 9


@pytest.mark.shared
def test_spun_titles_of_the_lab_article_are_linked_by_meaning(
    store: Store, settings: Settings, shared: Path, data: Path
) -> None:
    if load_meaning() is None:
        pytest.skip("the semantic extra is not installed")
    store.save_papers(hf_corpus(shared), "2026-01-01T00:00:00Z")
    papers, *_ = parse_api_feed((data / "arxiv/iclr2025-lab-papers.xml").read_bytes())
    store.save_papers(papers, "2026-01-01T00:00:00Z")
    body = (shared / ARTICLE).read_bytes()
    found = resolve_bytes(store, body, settings).mentions
    truth = {p.arxiv_id for p in papers}
    assert {m.arxiv_id for m in found} <= truth  # no wrong link
    methods = {m.arxiv_id: (m.method, m.confidence) for m in found}
    assert set(methods) >= SPUN, methods
    by_meaning = {a for a, (method, _) in methods.items() if method == "meaning-title"}
    assert by_meaning and by_meaning <= SPUN, methods
    assert len(methods) >= 12  # recall >= 0.85 of 13


@pytest.mark.shared
def test_no_link_by_meaning_when_the_spun_titles_papers_are_absent(
    store: Store, settings: Settings, shared: Path, data: Path
) -> None:
    """The same page, its spun titles' papers left out of the library: their stretches link
    nothing, although the page's period holds other papers on the same subjects."""
    if load_meaning() is None:
        pytest.skip("the semantic extra is not installed")
    store.save_papers(hf_corpus(shared), "2026-01-01T00:00:00Z")
    papers, *_ = parse_api_feed((data / "arxiv/iclr2025-lab-papers.xml").read_bytes())
    left = [p for p in papers if p.arxiv_id not in SPUN | {"2410.03529"}]
    store.save_papers(left, "2026-01-01T00:00:00Z")
    found = resolve_bytes(store, (shared / ARTICLE).read_bytes(), settings).mentions
    linked = {m.arxiv_id for m in found}
    assert linked and linked <= {p.arxiv_id for p in left}, linked
    assert not [m for m in found if m.method == "meaning-title"]
    # The notes page with its noted papers absent (the lab's, of the same period, present).
    page = (shared / "seed-pages/notes/iclr2025-notes.html").read_bytes()
    found = resolve_bytes(store, page, settings).mentions
    assert not [m for m in found if m.method == "meaning-title"]
