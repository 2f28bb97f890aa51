"""``python -m lightnews`` runs the command line."""

from lightnews.cli import main

main()
