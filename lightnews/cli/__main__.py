"""``python -m lightnews.cli`` runs the command line (as ``python -m lightnews`` does)."""

from lightnews.cli import main

main()
