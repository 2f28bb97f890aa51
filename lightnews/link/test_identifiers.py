"""arXiv identifiers found in text and links, in every form people write them."""

from __future__ import annotations

import pytest

from lightnews.link import find_arxiv_mentions, link_item
from lightnews.model import Item


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
