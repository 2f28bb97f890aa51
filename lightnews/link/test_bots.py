"""Recognising listing bots without mistaking scholars who share papers for them."""

from __future__ import annotations

from lightnews.link.bots import bot_reason, is_listing
from lightnews.model import Account, Item, LinkCard, PostDetails, item_extra


def post(text: str, kind: str = "post", card_title: str = "", link: str = "") -> Item:
    details = PostDetails(uri=text, card=LinkCard(link, card_title)) if card_title else None
    return Item(key=text, kind=kind, text=text, links=[link] if link else [], post=details)


LISTINGS = [
    post("Sparse Ring Attention. (arXiv:2511.18342v1 [cs.LG])"),
    post("[cs.CL] Calibrated Abstention for LLM Judges https://arxiv.org/abs/2511.17015"),
    post(
        "Flow Matching on Product Manifolds arxiv.org/abs/2511.12904",
        card_title="Flow Matching on Product Manifolds",
        link="https://arxiv.org/abs/2511.12904",
    ),
    post("arxiv.org/abs/2511.10268", link="https://arxiv.org/abs/2511.10268"),
    post(
        "Off-Policy Evaluation of Tool-Using Agents arxiv.org/abs/2511.14092",
        card_title="Off-Policy Evaluation of Tool-Using Agents with Counterfactual Replays",
        link="https://arxiv.org/abs/2511.14092",
    ),
]
SCHOLAR = [
    post(
        "In our new preprint we add memory parameters to the model and pretrain it with a big "
        "bank of memories. arxiv.org/abs/2510.02375 [1/10]",
        link="https://arxiv.org/abs/2510.02375",
    ),
    post("Which tasks benefit more from memory? Tasks requiring specific knowledge."),
    post(
        "Natural idea. Looks like a nice paper too. arxiv.org/abs/2508.21184",
        card_title="BED-LLM: Intelligent Information Gathering",
        link="https://arxiv.org/abs/2508.21184",
    ),
    post("I'll present my view on the future of uncertainty at the workshop on Friday."),
    post("Happy to share that our benchmark is out, with code. Let's solve it :)"),
]


def test_listing_posts() -> None:
    assert all(is_listing(p) for p in LISTINGS)
    assert not any(is_listing(p) for p in SCHOLAR)


def test_bot_accounts() -> None:
    person = Account(
        "bluesky",
        "did:plc:x",
        name="Michael Kirchhof",
        handle="mkirchhof.bsky.social",
        description="Research Scientist for uncertainty quantification.",
    )
    assert bot_reason(person, SCHOLAR) is None
    assert bot_reason(person, SCHOLAR[:2]) is None
    assert "listings" in (
        bot_reason(Account("bluesky", "did:plc:y", handle="cs-lg.bsky.social"), LISTINGS) or ""
    )
    described = Account(
        "bluesky", "did:plc:z", name="arXiv cs.LG", description="Automated feed of new arXiv papers"
    )
    assert bot_reason(described, []) == "describes itself as automated"
    reposter = [
        post(
            p.text,
            kind="repost",
            card_title=item_extra(p).get("card", {}).get("title", ""),
            link=p.links[0] if p.links else "",
        )
        for p in LISTINGS * 2
    ]
    assert (
        bot_reason(Account("bluesky", "did:plc:w", handle="someone.bsky.social"), reposter)
        == "only reposts arXiv listings"
    )
