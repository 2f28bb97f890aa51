"""Link: find what papers an item talks about.

This step turns identifiers in text, links and link cards into
:class:`~lightnews.model.Mention` objects with a method and a confidence.
Pure functions over items: the store decides what to do with the mentions.
"""

from lightnews.link.identifiers import find_arxiv_mentions, link_item

__all__ = ["find_arxiv_mentions", "link_item"]
