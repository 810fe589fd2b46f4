#!/bin/bash
# The pending retraining (docs/tagger.md, "The next retraining, pending"): GL (hotpot x5,
# look-alike answers x2) and GLN (GL + the span head's null answer, weight 0.5), side by side.
export PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import torch, transformers, tokenizers, onnx; print(torch.__version__, torch.cuda.is_available())"
common="benchmarks/gpu_tagger_fit.py fit --examples .gpu/examples.jsonl.xz --device cuda --time-limit 7.0 --set epochs=2 --set checkpoint_every=100000 --set teacher=none --set hotpot_repeat=5 --set look_alike_repeat=2"
start=$(date +%s)
python3 $common --out /tmp/GL > /tmp/GL.log 2>&1 &
python3 $common --out /tmp/GLN --set null_span_weight=0.5 > /tmp/GLN.log 2>&1 &
wait
echo "both done in $(( $(date +%s) - start )) s"
for v in GL GLN; do
  mkdir -p $OUT/$v
  cp /tmp/$v/weights.part* /tmp/$v/fit.json $OUT/$v/ 2>/dev/null
  ls -la /tmp/$v
  tail -5 /tmp/$v.log
done
cat /tmp/GL.log /tmp/GLN.log > $OUT/logs.txt
