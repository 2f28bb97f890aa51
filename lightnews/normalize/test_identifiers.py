"""arXiv identifiers found in text and links, in every form people write them."""

from __future__ import annotations

import pytest

from lightnews.model import Item, item_extra
from lightnews.normalize.identifiers import find_arxiv_mentions, find_code_in_text, link_item
from lightnews.store import Store


@pytest.mark.parametrize(
    ("text", "arxiv_id", "method"),
    [
        ("https://arxiv.org/abs/2510.02375", "2510.02375", "arxiv-url"),
        ("see arxiv.org/abs/2510.02375v2.", "2510.02375", "arxiv-url"),
        ("https://arxiv.org/pdf/2505.20295v1.pdf", "2505.20295", "arxiv-url"),
        ("https://arxiv.org/html/2508.21184v1#S3", "2508.21184", "arxiv-url"),
        ("http://export.arxiv.org/abs/hep-th/9901001", "hep-th/9901001", "arxiv-url"),
        ("https://www.alphaxiv.org/abs/2510.02375", "2510.02375", "arxiv-url"),
        ("https://huggingface.co/papers/2502.01341", "2502.01341", "hf-url"),
        ("doi:10.48550/arXiv.2401.00001", "2401.00001", "doi"),
        ("(arXiv:2510.02375)", "2510.02375", "arxiv-id"),
        ("arXiv: math.GT/0309136", "math/0309136", "arxiv-id"),
        ("our preprint arXiv 2510.02375 is out", "2510.02375", "arxiv-id"),
        ("paper 2510.02375 is out", "2510.02375", "bare-id"),
    ],
)
def test_finds_id(text: str, arxiv_id: str, method: str) -> None:
    found = find_arxiv_mentions([text])
    assert [(m.arxiv_id, m.method) for m in found] == [(arxiv_id, method)]


@pytest.mark.parametrize(
    "text",
    [
        "version 1.2345.6789 released",
        "pi is 3.14159",
        "phone 2510.0237",
        "github.com/x/2501.12345",
        "price 1399.12345",
        "see https://example.org/2510.02375/",
    ],
)
def test_ignores_non_ids(text: str) -> None:
    assert find_arxiv_mentions([text]) == []


def test_one_mention_per_paper_with_best_method() -> None:
    found = find_arxiv_mentions(["2510.02375 and https://arxiv.org/abs/2510.02375v3"])
    assert len(found) == 1
    assert found[0].method == "arxiv-url" and found[0].confidence == 1.0


def test_item_does_not_mention_itself() -> None:
    item = Item(
        key="x",
        kind="paper",
        text="extends arXiv:2401.00001",
        paper_id="2510.02375",
        links=["https://arxiv.org/abs/2510.02375"],
    )
    assert [m.arxiv_id for m in link_item(item)] == ["2401.00001"]


def test_other_identifier_forms() -> None:
    from lightnews.normalize.identifiers import find_code_links, find_dois, find_slugs

    assert find_dois(
        ["doi:10.1103/PhysRevC.76.024606.", "https://doi.org/10.48550/arXiv.2401.1"]
    ) == ["10.1103/physrevc.76.024606"]
    assert find_slugs(
        [
            "https://paperswithcode.com/paper/depth-pro-sharp-monocular-metric-depth-in",
            "https://www.semanticscholar.org/paper/Depth-Pro%3A-Sharp-Monocular-Bochkovskii/"
            "5f3c2f8e1b0c9d7a6e5f4c3b2a1d0e9f8a7b6c5d",
            "https://paperswithcode.com/paper/short",
        ]
    ) == ["depth pro sharp monocular metric depth in", "Depth Pro Sharp Monocular Bochkovskii"]
    assert find_code_links(
        [
            "https://github.com/apple/ml-depth-pro/tree/main",
            "https://github.com/apple/ml-sel...",
            "https://github.com/orgs/x",
            "https://github.com/apple/ml-depth-pro.git",
        ]
    ) == ["https://github.com/apple/ml-depth-pro"]


def test_library_links_dois_slugs_and_code(tmp_path: object, store: Store) -> None:
    from lightnews.link import link_titles
    from lightnews.model import Paper

    store.save_papers(
        [
            Paper(
                "0704.0471",
                title="Density dependence of the symmetry energy",
                doi="10.1103/PhysRevC.76.024606 10.1103/PhysRevC.76.039902",
                published="2007-04-03T00:00:00Z",
            ),
            Paper(
                "2410.02073",
                title="Depth Pro: Sharp Monocular Metric Depth in Less Than a Second",
                published="2024-10-02T00:00:00Z",
            ),
        ],
        "2025-01-01T00:00:00Z",
    )
    item = Item(
        key="p",
        kind="post",
        text="Erratum: doi:10.1103/PhysRevC.76.039902 is out",
        links=[
            "https://paperswithcode.com/paper/depth-pro-sharp-monocular-metric-depth",
            "https://github.com/apple/ml-depth-pro",
        ],
    )
    link_titles([item], store, bar=0.8)
    assert {(m.arxiv_id, m.method) for m in item.mentions} == {
        ("0704.0471", "doi"),
        ("2410.02073", "url-title"),
    }
    assert item_extra(item)["code_links"] == ["https://github.com/apple/ml-depth-pro"]
    source, _ = store.add_source("feed", "https://x.example/feed", now="2025-01-01T00:00:00Z")
    lone = Item(
        key="q",
        kind="post",
        text="code is out",
        mentions=[item.mentions[1]],
        links=["https://github.com/apple/ml-depth-pro"],
        code_links=["https://github.com/apple/ml-depth-pro"],
    )
    store.save_items(source.id, [lone], "2025-01-01T00:00:00Z")
    assert store.get_paper("2410.02073").links["code"] == "https://github.com/apple/ml-depth-pro"


def test_repositories_written_into_text_with_or_without_a_scheme() -> None:
    text = (
        "Code: https://www.GitHub.com/Lab/Model.git. Also http://gitlab.com/g/p and "
        "github.com/Lab/Model again, github.com/orgs/x, github.com/a/..., digit.com/a/b."
    )
    assert find_code_in_text(text) == [
        "https://github.com/Lab/Model",
        "https://gitlab.com/g/p",
    ]
