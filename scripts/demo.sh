#!/usr/bin/env bash
# Set up, then run facet on the bundled Tax sample (10k rows) with its published rules.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/facet detect data/tax/tax_dirty_0010k.csv --rules data/tax/dc_rules_holoclean.txt --exit-zero
.venv/bin/facet detect data/tax/tax_dirty_0010k.csv --rules data/tax/dc_rules_relaxed.txt --exit-zero
