#!/usr/bin/env bash
# End-to-end with the local LLM (SmolLM2-135M via llama.cpp) on 50 questions per dataset.
# Usage: bash benchmarks/e2e_llm.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench-out/e2e}
mkdir -p "$OUT"
for ds in squad quality; do
  t0=$SECONDS
  .venv/bin/ragsieve eval --dataset $ds --limit 50 --methods "naive[k=2],naive[budget=450]" \
    --max-tokens 32 --out "$OUT/$ds" | tee "$OUT/$ds.log"
  echo "wall seconds: $((SECONDS - t0))" | tee -a "$OUT/$ds.log"
done
