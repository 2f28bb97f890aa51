"""Notes pages: one note per heading, sections, "Surname: short title" references, hostile HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lightnews import sources
from lightnews.errors import ParseError
from lightnews.ingest.replay import ingest_bytes
from lightnews.model import Item, SourceState, item_extra
from lightnews.settings import Settings
from lightnews.sources import Source
from lightnews.sources.notes import NotesSource, parse_references, split_notes
from lightnews.store import Store

HTML_URL = "https://quill.example/notes/neurips2024.html"
MD_URL = "https://quill.example/colm2025.md"
SEED = "seed-pages/notes/iclr2025-notes.html"
HOSTILE = re.compile(
    r"<script|<iframe|<object|<embed|<style|<form|<input|\son\w+=|javascript:", re.I
)


def _by_title(items: list[Item]) -> dict[str, Item]:
    return {i.title: i for i in items}


def _refs(item: Item) -> list[tuple[str, str]]:
    return [(r["surname"], r["title"]) for r in item_extra(item)["references"]]


def test_html_page_one_note_per_heading(data: Path) -> None:
    body = (data / "notes/neurips2024-notes.html").read_bytes()
    batch = NotesSource(HTML_URL).parse(body, SourceState(), url=HTML_URL)
    assert batch.title == "NeurIPS'24 Paper Notes"  # the h1, not <title>
    # Six headings are notes; the h1, the nav's and footer's headings, the commented-out
    # one, the one a script writes and the h5 inside a note are not.
    assert [i.title for i in batch.items] == [
        "NeurIPS'24 Tuesday Orals",
        "NeurIPS'24 Tian: Visual Autoregressive Modeling",
        "NeurIPS'24 Ibarra: Sparse Probing at Scale",
        "NeurIPS'24 Poster Session 3",
        "NeurIPS'24 Rao: Thinking Tokens",
        "Chen: Diffusion Forcing",
    ]
    assert len({i.key for i in batch.items}) == 6
    for item in batch.items:
        assert item.kind == "note" and item.author == "Ada Quill"
        assert item.key.startswith(HTML_URL + "#")
        assert item_extra(item)["page_title"] == "NeurIPS'24 Paper Notes"
        assert item_extra(item)["papers_reviewed"] == 9
        assert not HOSTILE.search(item.html), item.title
    notes = _by_title(batch.items)

    orals = notes["NeurIPS'24 Tuesday Orals"]
    assert item_extra(orals)["is_section"] and item_extra(orals)["section"] == "Tuesday Orals"
    assert _refs(orals) == [
        ("Tian", "Visual Autoregressive Modeling"),
        ("Ibarra", "Sparse Probing at Scale"),
    ]
    assert orals.key == HTML_URL + "#neurips-24-tuesday-orals" and orals.url == orals.key

    tian = notes["NeurIPS'24 Tian: Visual Autoregressive Modeling"]
    assert tian.key == HTML_URL + "#tian-var"  # the heading's id
    assert tian.url == "https://quill.example/notes/neurips2024/tian-var"  # its link, resolved
    assert item_extra(tian)["section"] == "Tuesday Orals" and not item_extra(tian)["is_section"]
    assert _refs(tian) == [("Tian", "Visual Autoregressive Modeling")]
    assert [(m.arxiv_id, m.method) for m in tian.mentions] == [("2404.02905", "arxiv-url")]
    assert tian.published == "2024-12-10T18:30:00Z"  # its <time>
    assert 'href="https://quill.example/slides/var.pdf"' in tian.html  # made absolute
    assert tian.text.startswith("Next-scale prediction") and "\n" in tian.text

    hostile = notes["NeurIPS'24 Ibarra: Sparse Probing at Scale"]
    assert hostile.text == "Probing with k-sparse probes. Slides"
    assert "Injected" not in hostile.text and "steal" not in hostile.html
    assert 'src="https://quill.example/notes/probe.png"' in hostile.html
    assert hostile.published == "2024-12-16T09:00:00Z"  # the page's date
    assert "onclick" in hostile.payload  # the payload keeps what the page had

    posters = notes["NeurIPS'24 Poster Session 3"]
    assert posters.note and posters.note.is_section and posters.note.section == "Poster Session 3"
    assert item_extra(posters)["references"] == [
        {
            "surname": "Okonkwo",
            "title": "Guided Flows for Generative Modeling",
            "raw": "NeurIPS'24 Okonkwo: Guided Flows for Generative Modeling",
        },
        {
            "surname": "van der Berg",
            "title": "Equivariant Neural Fields",
            "raw": "NeurIPS'24 van der Berg: Equivariant Neural Fields",
        },
        {
            "surname": "Tanaka",
            "title": "Loss Landscapes of Mixture-of-Experts",
            "raw": "NeurIPS'24 Tanaka et al.: Loss Landscapes of Mixture-of-Experts",
        },
    ]

    # A note naming three papers keeps all three; the linker links it to each.
    rao = notes["NeurIPS'24 Rao: Thinking Tokens"]
    assert _refs(rao) == [
        ("Rao", "Thinking Tokens"),
        ("Snell", "Scaling LLM Test-Time Compute Optimally"),
        ("Geiping", "Recurrent Depth Reasoning"),
    ]
    assert item_extra(rao)["section"] == "Poster Session 3"
    assert rao.published == "2024-12-12T00:00:00Z"  # the date its text starts with
    assert "<h5>Open questions</h5>" in rao.html and "Does it transfer" in rao.text

    chen = notes["Chen: Diffusion Forcing"]
    assert _refs(chen) == [("Chen", "Diffusion Forcing")]  # no conference prefix needed
    assert item_extra(chen)["section"] is None and item_extra(chen)["level"] == 2
    assert [m.arxiv_id for m in chen.mentions] == ["2407.01392"]


def test_markdown_page(data: Path) -> None:
    text = (data / "notes/colm2025-notes.md").read_text()
    items = split_notes(text, MD_URL)
    assert [i.title for i in items] == [
        "Long context",
        "Xiong: Effective Long-Context Scaling of Foundation Models",
        "Ding et al.: LongRoPE",
        "Agents",
        "Yao: ReAct",
        "Miscellaneous 2025-10-09",
    ]
    notes = _by_title(items)
    long_context = notes["Long context"]
    assert long_context.note and long_context.note.is_section
    assert long_context.note.section == "Long context"
    assert _refs(long_context) == [
        ("Xiong", "Effective Long-Context Scaling of Foundation Models"),
        ("Ding", "LongRoPE"),
    ]
    xiong = notes["Xiong: Effective Long-Context Scaling of Foundation Models"]
    assert item_extra(xiong)["section"] == "Long context"
    assert [m.arxiv_id for m in xiong.mentions] == ["2309.16039"]
    assert "rope_theta" in xiong.text  # the code block stays in its note
    assert xiong.payload.startswith("### Xiong:") and "```python" in xiong.payload
    ding = notes["Ding et al.: LongRoPE"]
    assert "<script" not in ding.html and "<a" not in ding.html  # the link is left as text
    assert item_extra(notes["Yao: ReAct"])["section"] == "Agents"
    misc = notes["Miscellaneous 2025-10-09"]
    assert item_extra(misc)["section"] is None and item_extra(misc)["references"] == []
    assert misc.published == "2025-10-09T00:00:00Z"
    for item in items:
        assert item_extra(item)["page_title"] == "COLM 2025 reading notes"
        assert item_extra(item)["papers_reviewed"] == 5 and item.author == "Ada Quill"
        assert item.key == item.url and item.key.startswith(MD_URL + "#")
    assert xiong.published == "2025-10-10T00:00:00Z"  # the front matter's date
    # Bytes or text, the same notes.
    assert [i.key for i in split_notes(text.encode(), MD_URL)] == [i.key for i in items]


def test_unreadable_and_empty_pages() -> None:
    for empty in (b"", b"   \n", "<html><body></body></html>"):
        with pytest.raises(ParseError, match="no notes found"):
            split_notes(empty, HTML_URL)
    with pytest.raises(ParseError, match="no notes found: the page has no headings"):
        split_notes(b"<p>Just a paragraph, no headings.</p>", HTML_URL)
    with pytest.raises(ParseError, match="no notes found"):
        split_notes("Plain text without any heading.", HTML_URL)
    with pytest.raises(ParseError, match="binary data"):
        split_notes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", HTML_URL)
    with pytest.raises(ParseError, match="not text"):
        split_notes(bytes(range(1, 32)) * 40, HTML_URL)
    # A page that is only its title is one note; odd markup is still read.
    (single,) = split_notes(b"<h1>Snell: Scaling Test-Time Compute</h1><p>Good talk.", "")
    assert single.key == "#snell-scaling-test-time-compute" and single.text == "Good talk."
    assert item_extra(single)["references"][0]["surname"] == "Snell"
    latin = "<h2>Müller: Über Attention</h2><p>Très bien</p>".encode("latin-1")
    (note,) = split_notes(b'<meta charset="latin-1">' + latin, HTML_URL)
    assert note.title == "Müller: Über Attention" and note.text == "Très bien"
    mixed = "Intro with <div>some HTML</div>\n\n## Kim: A Title\n\ntext\n"
    assert [i.title for i in split_notes(mixed, MD_URL)] == ["Kim: A Title"]  # Markdown after all
    twice = split_notes("<h2>Same</h2><p>a</p><h2>Same</h2><p>b</p><h3></h3>", HTML_URL)
    assert [i.key.rsplit("#", 1)[1] for i in twice] == ["same", "same-2"]

    def nested(depth: int) -> str:
        return "<div>" * depth + "<h2>Deep: Nesting</h2><p>x</p>" + "</div>" * depth

    assert [i.title for i in split_notes(nested(200), HTML_URL)] == ["Deep: Nesting"]
    with pytest.raises(ParseError):  # the HTML parser stops at depth 256: refused, no crash
        split_notes(nested(5000), HTML_URL)


def test_parse_references() -> None:
    text = (
        "Talks ICLR2025 Snell: Optimality of Scaling LLM Test-Time Compute "
        "ICLR2025 Mathur: MIND Adaptive Thinking with Dynamic Computation "
        "ICLR2025 Yue: Inference Scaling for RAG"
    )
    assert parse_references(text) == [
        {
            "surname": "Snell",
            "title": "Optimality of Scaling LLM Test-Time Compute",
            "raw": "ICLR2025 Snell: Optimality of Scaling LLM Test-Time Compute",
        },
        {
            "surname": "Mathur",
            "title": "MIND Adaptive Thinking with Dynamic Computation",
            "raw": "ICLR2025 Mathur: MIND Adaptive Thinking with Dynamic Computation",
        },
        {
            "surname": "Yue",
            "title": "Inference Scaling for RAG",
            "raw": "ICLR2025 Yue: Inference Scaling for RAG",
        },
    ]
    assert parse_references("ICLR2025 Jin: MOE++ zero computation experts") == [
        {
            "surname": "Jin",
            "title": "MOE++ zero computation experts",
            "raw": "ICLR2025 Jin: MOE++ zero computation experts",
        }
    ]

    def titles(text: str) -> list[tuple[str, str]]:
        return [(r["surname"], r["title"]) for r in parse_references(text)]

    # Where the title ends: the writer's words, a sentence, a cut-short word.
    assert titles(
        "ICLR2025 Morris: contextual document embeddings Take a bunch of sentence embeddings "
        "ICLR2025 Sun: ReDeEP detecting hallucination using mechanistic int..."
    ) == [
        ("Morris", "contextual document embeddings"),
        ("Sun", "ReDeEP detecting hallucination using mechanistic"),
    ]
    assert titles("ICLR2025 Hu: belief state transformer Key insight: residual stream") == [
        ("Hu", "belief state transformer")
    ]
    assert titles("Smith: Transformers vs. RNNs for Speech. We liked it.") == [
        ("Smith", "Transformers vs. RNNs for Speech")
    ]
    assert titles("NeurIPS 2024 García-López: Árboles de decisión") == [
        ("García-López", "Árboles de decisión")
    ]
    assert titles("ICML'24 Kim & Lee: Joint Title\n- Ding et al.: LongRoPE") == [
        ("Kim & Lee", "Joint Title"),
        ("Ding", "LongRoPE"),
    ]
    # Not references: labels, acronyms, two-word "names", mid-sentence colons.
    for label in (
        "Method: nothing here",
        "Motivation: why",
        "RAG: is not a person",
        "ICLR2025 Koyejo Proposal: Focus AI measurements",
        "Cool: MrT5 learns compression rates",
        "The key idea, Smith: not at the start",
        "",
    ):
        assert parse_references(label) == [], label
    assert len(parse_references(text + "\n" + text)) == 3  # each once


def test_replayed_page_is_stored(
    data: Path, store: Store, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds: dict[str, type[Source]] = {**sources.registry(), "notes": NotesSource}
    monkeypatch.setattr(sources, "registry", lambda: kinds)
    path = data / "notes/neurips2024-notes.html"
    report = ingest_bytes(store, "notes", path.as_uri(), path.read_bytes(), settings)
    assert report.ok and report.saved.items_new == 6 and report.saved.mentions == 2
    row = store.list_sources()[0]
    assert row.title == "NeurIPS'24 Paper Notes"
    again = ingest_bytes(store, "notes", path.as_uri(), path.read_bytes(), settings)
    assert again.ok and again.saved.items_new == 0  # re-reading changes nothing


@pytest.mark.shared
def test_seed_notes_page(shared: Path) -> None:
    page = shared / SEED
    # The page has 17 headings: the h1 page title and 16 h2 notes.
    raw = page.read_text()
    assert raw.count("<h1") == 1 and raw.count("<h2") == 16
    url = "https://notes.example.org/iclr2025/"
    batch = NotesSource(url).parse(page.read_bytes(), SourceState(), url=url)
    items = batch.items
    assert batch.title == "ICLR 2025 Paper Notes"
    assert len(items) == 16 and len({i.key for i in items}) == 16
    assert all(item_extra(i)["papers_reviewed"] == 16 for i in items)
    assert all(item_extra(i)["page_title"] == "ICLR 2025 Paper Notes" for i in items)
    assert all(i.published is None for i in items)  # the page gives no date
    notes = _by_title(items)
    sections = [item_extra(i)["section"] for i in items if item_extra(i)["is_section"]]
    assert sections == [
        "Adaptive Computation",
        "Context and Retrieval",
        "Friday Posters",
        "HAIC",
        "MoE",
        "Saturday Posters",
        "Thursday Morning Posters",
        "Tokenizer-Free Approaches",
    ]
    adaptive = notes["ICLR2025 Adaptive Computation"]
    assert adaptive.url == "https://notes.example.org/notes/iclr2025-adaptive-computation"
    assert _refs(adaptive) == [
        ("Snell", "Optimality of Scaling LLM Test-Time Compute"),
        ("Mathur", "MIND Adaptive Thinking with Dynamic Computation"),
        ("Yue", "Inference Scaling for RAG"),
    ]
    friday = notes["ICLR2025 Friday Posters"]
    assert [r["surname"] for r in item_extra(friday)["references"]] == [
        "Morris",
        "Noukhovich",
        "Yao",
        "Sun",
    ]
    assert item_extra(notes["ICLR2025 HAIC"])["references"] == []  # "Koyejo Proposal:" is no name
    # Each paper note belongs to the section that lists it.
    assert {
        i.title.split(":")[0].removeprefix("ICLR2025 "): item_extra(i)["section"]
        for i in items
        if not item_extra(i)["is_section"]
    } == {
        "Jin": "MoE",
        "Kilani": "Tokenizer-Free Approaches",
        "Li": "MoE",
        "Mathur": "Adaptive Computation",
        "Neitemeier": "Tokenizer-Free Approaches",
        "Snell": "Adaptive Computation",
        "Wu": "Context and Retrieval",
        "Yue": "Adaptive Computation",
    }
    jin = notes["ICLR2025 Jin: MOE++ zero computation experts"]
    assert _refs(jin) == [("Jin", "MOE++ zero computation experts")]
    # A title run on into the note's text is cut back to the one the page's heading gives.
    tokenizer_free = notes["ICLR2025 Tokenizer-Free Approaches"]
    assert _refs(tokenizer_free) == [
        ("Kilani", "MrT5 Tokenizer-Free"),
        ("Neitemeier", "Hierachical Autoregressive Transformers"),
    ]
    li = notes["ICLR2025 Li: MoE is secretly an embedding"]
    assert li.text.count("\n") == 1  # its two paragraphs
    assert all(i.mentions == [] for i in items)  # no arXiv ids on this page
