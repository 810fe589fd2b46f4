"""The MiniLM-L6 base that the reranker and the tagger both fine-tune: where its weights are,
its sentence pooling, its architecture, and its ONNX export (fp32, then the int8 build).

One place for what the two trainers share, as sentence-transformers keeps one trainer for many
model kinds: each trainer keeps its own network and heads; the base and its export live here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsieve.embed.base import minilm_dir
from ragsieve.training.export import export_onnx, quantize_int8_per_channel

#: The inputs of every MiniLM network exported here, in order.
MINILM_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: all-MiniLM-L6-v2's architecture (its config.json), so that a network can be built where the
#: base package is not installed (a GPU machine gets only the repository).
MINILM_L6 = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "hidden_act": "gelu",
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "pad_token_id": 0,
}


def base_model_path() -> Path:
    """The packaged all-MiniLM-L6-v2 folder (weights, config, tokenizer): the embedder's own
    (:func:`ragsieve.embed.base.minilm_dir`)."""
    return minilm_dir()


def mean_pool(hidden: Any, attention_mask: Any) -> Any:
    """The mask-weighted mean of the last hidden states: MiniLM's own sentence pooling."""
    m = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-6)


def export_fp32(model: Any, path: Path, outputs: dict[str, dict[int, str]]) -> int:
    """``model`` (a MiniLM taking ids, mask and segment ids) as fp32 ONNX, batch and sequence
    dynamic; ``outputs`` names the outputs with their dynamic axes. Returns the file's size."""
    import torch

    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "seq"}
    return export_onnx(
        model,
        path,
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        MINILM_INPUTS,
        list(outputs),
        {**dict.fromkeys(MINILM_INPUTS, axes), **outputs},
    )


def export_minilm(
    model: Any, out_dir: Path, outputs: dict[str, dict[int, str]], quantize: bool = True
) -> dict[str, int]:
    """``model_fp32.onnx`` and (``quantize``) ``model.onnx``: int8 MatMul and Gather weights
    with a scale per output channel (per-tensor scales wreck the tagger's token head: dev
    sentence AUC 0.88 -> 0.69 on SQuAD, docs/tagger.md). Returns the files' sizes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "model_fp32.onnx"
    sizes = {fp32.name: export_fp32(model, fp32, outputs)}
    if quantize:
        sizes["model.onnx"] = quantize_int8_per_channel(fp32, out_dir / "model.onnx")
    return sizes
