"""``python -m facet`` runs the command line."""

from facet.cli import entry

entry()
