"""Safe XML parsing for every XML source (arXiv API, OAI-PMH, OPML).

External entities are never resolved, the network is never touched, and
entity expansion is bounded, so a hostile response cannot read local files
or blow up memory. A broken document becomes a ParseError with a message a
user can act on.
"""

from __future__ import annotations

from lxml import etree

from lightnews.errors import ParseError

__all__ = ["parse_xml"]


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
    )


def parse_xml(body: bytes, what: str) -> etree._Element:
    """Parse ``body`` as XML; ``what`` names the format in error messages."""
    if not body.strip():
        raise ParseError(f"empty response where {what} was expected")
    try:
        root = etree.fromstring(body, parser=_parser())
    except etree.XMLSyntaxError as error:
        raise ParseError(f"not well-formed {what}: {error}") from None
    if root is None:
        raise ParseError(f"empty document where {what} was expected")
    return root
