#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install facet with its test tools; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" - <<'PYEOF'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"facet needs Python >= 3.11, found {sys.version.split()[0]}; set PYTHON=python3.11")
PYEOF
  "$PY" -m venv .venv
fi
stamp=.venv/.facet-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[dev]'
  touch "$stamp"
fi
