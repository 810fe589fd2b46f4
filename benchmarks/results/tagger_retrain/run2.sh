#!/bin/bash
# Issue 44, stop 51: E's recipe replicated (seed 14) and G (E with hotpot_repeat 5).
set -u
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
common="benchmarks/gpu_tagger_fit.py fit --examples .gpu/examples.jsonl.xz --device cuda --time-limit 7.5 --set epochs=2 --set checkpoint_every=100000 --set teacher=none"
python3 $common --out $OUT/E2 --set seed=14 > $OUT/E2.log 2>&1 &
python3 $common --out $OUT/G --set hotpot_repeat=5 > $OUT/G.log 2>&1 &
wait
tail -3 $OUT/E2.log $OUT/G.log
ls -la $OUT/E2 $OUT/G
