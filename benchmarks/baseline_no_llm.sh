#!/usr/bin/env bash
# Naive baseline on every built-in dataset, context metrics only (issue: evaluation harness).
# Usage: bash benchmarks/baseline_no_llm.sh [OUT_DIR]   (writes OUT_DIR/<dataset>/...)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench-out/baseline}
RS=.venv/bin/ragsieve
METHODS="naive[k=10],naive[budget=450]"
run() {  # name, extra args...
  local name=$1; shift
  local t0=$SECONDS
  $RS eval --dataset "$name" "$@" --no-llm --methods "$METHODS" --out "$OUT/$name" \
    | tee "$OUT/$name.log"
  echo "wall seconds: $((SECONDS - t0))" | tee -a "$OUT/$name.log"
}
mkdir -p "$OUT"
run hotpotqa-sent
run hotpotqa
run quality
run squad --limit 2000
run qasper --limit 300
run msmarco --limit 1000
