"""A paper's page: its versions and authors, the conversation about it, related papers.

``/paper/ID`` (any arXiv reference: ``/paper/https://arxiv.org/abs/ID`` goes
to the paper's own address), its JSON twin, and ``?format=bibtex``. A stub (a
paper known from a link, its metadata not fetched yet) says what it is by a
post's link card.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.deliver.export import bibtex
from lightnews.errors import LightnewsError
from lightnews.normalize.arxiv_ids import parse_arxiv_id, parse_arxiv_reference
from lightnews.normalize.tex import tex_to_text
from lightnews.normalize.validate import whole_number
from lightnews.search import SearchResults
from lightnews.serve.owned import reader_states
from lightnews.serve.site import MAX_PAGE, Site, own_state, reader_of, wants_json
from lightnews.serve.story import MENTIONS_SHOWN, story_authors, story_groups
from lightnews.store.views import PaperPage

if TYPE_CHECKING:
    from lightnews.rank.conversation import Conversation
    from lightnews.rank.discussed import SecondOrder
    from lightnews.store.network import LinkCard

__all__ = ["paper"]


def paper(site: Site, request: Request) -> Response:
    asked = request.path_params["arxiv_id"]
    reference = parse_arxiv_reference(asked) if parse_arxiv_id(asked) is None else None
    if reference is not None:  # /paper/https://arxiv.org/abs/ID: the paper's own page
        base = "/api/paper/" if wants_json(request) else "/paper/"
        return RedirectResponse(f"{base}{reference.base}", status_code=301)
    store = site.store
    try:
        data = store.get_paper(asked)
    except LightnewsError as error:
        return site.failure(request, error)
    from lightnews.search import related_papers

    related = SearchResults([], "lexical")
    if not data.stub:
        related = related_papers(
            store, data.arxiv_id, limit=5, settings=site.current_settings(), paper=data
        )
    from lightnews.rank.conversation import read_conversation
    from lightnews.rank.discussed import second_order_of

    chain = second_order_of(store, data.arxiv_id)
    try:
        posts_page = whole_number(request.query_params.get("posts", "1"), "posts", MAX_PAGE)
    except LightnewsError as error:
        return site.failure(request, error)
    talk = read_conversation(
        store, data.arxiv_id, reader_of(request), site.current_settings().now(), posts_page
    )
    # A stub says what it is by a post's link card until its metadata is fetched.
    card = store.paper_cards([data.arxiv_id]).get(data.arxiv_id) if data.stub else None

    def html() -> Response:
        if request.query_params.get("format") == "bibtex":
            return Response(bibtex([data]), media_type="application/x-bibtex")
        return _page(site, request, data, related, chain, talk, card)

    return site.respond(
        request,
        lambda: {
            **data.to_json(),
            "related": {**related.about(), "hits": [h.to_json() for h in related]},
            "second_order": [c.to_json() for c in chain],
            "conversation": talk.to_json(),
            "link_card": card.to_json() if card else None,
        },
        html,
    )


def _page(
    site: Site,
    request: Request,
    data: PaperPage,
    related: SearchResults,
    chain: list[SecondOrder],
    talk: Conversation,
    card: LinkCard | None,
) -> Response:
    """The paper's page, with what its JSON twin says and the reader's own state."""
    from lightnews.deliver.watch import is_watching
    from lightnews.rank.discussed import discussion_of
    from lightnews.store.readers import reader_key

    store = site.store
    reader = reader_of(request)
    followed = {r.id: r.name for r in store.followed_scholars(reader)}
    states = reader_states(store, reader) if own_state(request) else {}
    read_at, saved_at = states.get(data.arxiv_id, (None, None))
    week = site.current_settings().now() - timedelta(days=7)
    heard = discussion_of(store, reader, [data.arxiv_id], week)
    named = tex_to_text(data.title) or (card.title if card else data.arxiv_id)
    return site.page(
        "paper.html",
        paper=data,
        groups=story_groups(
            data, None if request.query_params.get("mentions") == "all" else MENTIONS_SHOWN
        ),
        authors=story_authors(data, followed, site.current_settings().attribution_bar),
        saved=saved_at is not None,
        read=read_at is not None,
        watching=own_state(request) and is_watching(store, reader_key(reader), data.arxiv_id),
        discussion=heard.get(data.arxiv_id),
        related=related,
        chain=chain,
        talk=talk,
        card=card,
        title=named,
    )
