#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install facet with its test tools; idempotent.
#   --repair   also create .venv-repair: facet with the repair extra (raha, which
#              needs pandas<3) and pytest, for examples/repair_hospital.py,
#              bench/repair_quality.py and tests/repair
#   --browser  also install Debian's chromium and chromedriver (apt-get) when
#              missing, for the report's browser tests (tests/test_report.py)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
repair=0
browser=0
for arg in "$@"; do
  case "$arg" in
    --repair) repair=1 ;;
    --browser) browser=1 ;;
    *) echo "scripts/setup.sh: unknown option $arg (--repair, --browser)" >&2; exit 2 ;;
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
# numba compiles every kernel once, here, into its cache: no run compiles later
.venv/bin/python -m facet.engine.warmup
# the report's browser tests drive Debian's chromium through chromedriver
if [ "$browser" = 1 ] && { ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; }; then
  if command -v apt-get >/dev/null; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing chromium and chromium-driver (for tests/test_report.py) ..."
    $sudo apt-get install -y -q chromium chromium-driver >/dev/null \
      || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q chromium chromium-driver >/dev/null; }
  else
    echo "scripts/setup.sh: install chromium and chromedriver for tests/test_report.py" >&2
  fi
fi
if [ "$repair" = 1 ]; then
  make_venv .venv-repair repair pytest pytest-benchmark hypothesis
fi
