#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install facet with its test tools; idempotent.
#   --repair  also create .venv-repair: facet with the repair extra (raha, which
#             needs pandas<3) and pytest, for examples/repair_hospital.py,
#             bench/repair_quality.py and tests/repair
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
repair=0
for arg in "$@"; do
  case "$arg" in
    --repair) repair=1 ;;
    *) echo "scripts/setup.sh: unknown option $arg (only --repair)" >&2; exit 2 ;;
  esac
done

# make_venv DIR EXTRAS [PACKAGES...]: a venv at DIR with facet[EXTRAS] installed
make_venv() {
  local dir=$1 extras=$2
  shift 2
  if [ ! -x "$dir/bin/python" ]; then
    "$PY" - <<'PYEOF'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"facet needs Python >= 3.11, found {sys.version.split()[0]}; set PYTHON=python3.11")
PYEOF
    "$PY" -m venv "$dir"
  fi
  local stamp="$dir/.facet-installed"
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    "$dir/bin/python" -m pip install --quiet --upgrade pip
    "$dir/bin/python" -m pip install --quiet -e ".[$extras]" "$@"
    touch "$stamp"
  fi
}

make_venv .venv dev
if [ "$repair" = 1 ]; then
  make_venv .venv-repair repair pytest pytest-benchmark hypothesis
fi
