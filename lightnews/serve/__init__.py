"""Serve: the pages a reader sees, as data first.

Each page (scholar, story, feed) is assembled here from the store into plain
dictionaries; the CLI prints them, ``--json`` emits them, and the web UI
renders the same data. Nothing here writes.
"""
