#!/usr/bin/env bash
# Set up, then run facet on the bundled Tax sample (10k rows) with its published rules.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for rules in dc_rules_holoclean dc_rules_relaxed; do
  echo
  echo "== data/tax/tax_dirty_0010k.csv with data/tax/$rules.txt"
  .venv/bin/facet detect data/tax/tax_dirty_0010k.csv --rules "data/tax/$rules.txt" --exit-zero
done
echo
echo "Run it yourself: source .venv/bin/activate; facet detect --help"
