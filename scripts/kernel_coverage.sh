#!/usr/bin/env bash
# Branch coverage of the numba kernels (kernels/, shipped as facet.kernels).
#
# The kernel and kernel-branch property tests run with NUMBA_DISABLE_JIT=1, so every
# kernel executes as plain Python and coverage sees its lines and branches, under
# the "coverage" hypothesis profile (tests/conftest.py: fewer, derandomized examples;
# see tests.strategies.examples).  Prints the per-file report of kernels/*.py and
# exits 1 below 95% branch coverage.  Extra arguments go to pytest.
#
#   scripts/kernel_coverage.sh            # the report, and the 95% gate
#   scripts/kernel_coverage.sh -x -k iejoin
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
scripts/setup.sh >/dev/null
# facet.kernels is the folder kernels/ (pyproject's package-dir; the editable install
# maps it there), so measuring the folder measures the package.  The data file lives
# outside the work tree.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export COVERAGE_FILE="$work/.coverage"
export NUMBA_DISABLE_JIT=1 HYPOTHESIS_PROFILE=coverage
"$PY" -c "import facet.kernels, os, sys; sys.exit(os.path.dirname(facet.kernels.__file__) != os.path.abspath('kernels'))" \
  || { echo "facet.kernels is not imported from ./kernels (reinstall: scripts/setup.sh)" >&2; exit 1; }
"$PY" -m coverage run --branch --source=kernels -m pytest -q -p no:cacheprovider \
  tests/test_kernels.py tests/test_kernel_iejoin.py tests/test_kernel_twins.py \
  tests/test_property_branches.py tests/test_kernel_cache.py "$@"
status=0
"$PY" -m coverage report --show-missing --include='kernels/*.py' --fail-under=95 || status=$?
if [ "$status" -ne 0 ]; then
  echo "kernel branch coverage below 95%" >&2
  exit 1
fi
