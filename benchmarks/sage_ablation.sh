#!/usr/bin/env bash
# SAGE ablation (Table IV) with the evaluation harness, context metrics (--no-llm).
# Rows: Naive (fixed 200, dense top-10) | Naive + segmentation (SAGE chunker, dense top-10) |
# Naive + selection (fixed, rerank N=30 + gradient cut) | SAGE (SAGE chunker + rerank + cut).
# Feedback needs an LLM; see the LLM part at the end (opt-in: LLM=1).
# Usage: bash benchmarks/sage_ablation.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench-out/sage-ablation}
RS=.venv/bin/ragsieve
mkdir -p "$OUT"
run() {  # dataset, limit, chunker, methods
  local ds=$1 limit=$2 chunker=$3 methods=$4
  local t0=$SECONDS
  $RS eval --dataset "$ds" --limit "$limit" --chunker "$chunker" --no-llm \
    --methods "$methods" --out "$OUT/$ds-$chunker" | tee "$OUT/$ds-$chunker.log"
  echo "wall seconds: $((SECONDS - t0))" | tee -a "$OUT/$ds-$chunker.log"
}
for spec in "qasper 60" "squad 200"; do
  set -- $spec
  run "$1" "$2" fixed "naive,sage[feedback=false]"
  run "$1" "$2" sage "naive,sage[feedback=false]"
done
if [[ "${LLM:-0}" == 1 ]]; then
  # With the local LLM (SmolLM2): answers, feedback rounds and cost-efficiency (SAGE Eq. 2).
  # --budget 2000 (cl100k tokens) keeps every prompt inside SmolLM2's 4,096-token window: the
  # cut alone keeps about 3,500 tokens on QASPER, which SmolLM2's tokenizer makes 5,800.
  # Naive then fills 2,000 tokens, SAGE's cut is capped at 2,000.
  $RS eval --dataset qasper --limit 20 --chunker fixed --max-tokens 48 --budget 2000 \
    --methods "naive,sage[feedback=false],sage" \
    --out "$OUT/qasper-fixed-llm" | tee "$OUT/qasper-fixed-llm.log"
  # Naive + feedback: dense top-10 (the bi-encoder "reranker" keeps the dense order), no cut,
  # then SAGE's feedback loop.
  $RS eval --dataset qasper --limit 20 --chunker fixed --max-tokens 48 --budget 2000 \
    --methods "sage[reranker=bi-encoder,selection=top-k,min_k=10,N=10]" \
    --out "$OUT/qasper-fixed-llm-fb" | tee "$OUT/qasper-fixed-llm-fb.log"
  $RS eval --dataset qasper --limit 20 --chunker sage --max-tokens 48 --budget 2000 \
    --methods "naive,sage" --out "$OUT/qasper-sage-llm" | tee "$OUT/qasper-sage-llm.log"
fi
