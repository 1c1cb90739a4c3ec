"""``python -m facet`` runs the command line."""

import sys

from facet.cli import main

sys.exit(main())
