"""Serve: the pages a reader sees, as data first, and the web site that shows them.

Each page's data (scholar, story, feed cards) is assembled from the store into
frozen dataclasses (``scholar``, ``story``, ``cards``; a story's conversation
is ``lightnews.rank.conversation``, which the digest shows too); the CLI
prints them, ``--json`` emits them, and the web UI renders the same data.
The web itself: ``app`` (``create_app`` and the route table), ``site`` (the
one object every handler is given, and ``respond``, which chooses JSON, a
feed or HTML), ``pages/`` (one module per page), ``security`` (the guards
every request passes) and ``api`` (the OpenAPI description).
"""
