#!/usr/bin/env bash
# Set up, then lint, check formatting and run the whole test suite: the main
# suite in .venv, then tests/repair (Raha/Baran) in .venv-repair.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --repair --browser
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest "$@"
.venv-repair/bin/python -m pytest -q -p no:cacheprovider tests/repair
