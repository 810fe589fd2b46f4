"""Sentence links (SAKI-RAG's SentenceAttnLinker) and the baselines they are measured against."""

from ragsieve.link.attention import AttnLinkerConfig, SentenceAttnLinker, plan_windows
from ragsieve.link.base import (
    AdjacentLinker,
    CosineLinker,
    Linker,
    SentenceLinks,
    top_links,
)

__all__ = [
    "AdjacentLinker",
    "AttnLinkerConfig",
    "CosineLinker",
    "Linker",
    "SentenceAttnLinker",
    "SentenceLinks",
    "get_linker",
    "plan_windows",
    "top_links",
]


def get_linker(name: str = "minilm-attn", distance: int = 8) -> Linker:
    """A linker by name: ``minilm-attn`` (default; int8 ONNX), ``minilm-attn-torch`` (the same
    on the fp32 torch weights), ``adjacent`` or ``cosine``."""
    from ragsieve.errors import ConfigError

    if name in ("minilm-attn", "attention", "attn"):
        return SentenceAttnLinker(AttnLinkerConfig(distance=distance))
    if name == "minilm-attn-torch":
        return SentenceAttnLinker(AttnLinkerConfig(distance=distance, backend="torch"))
    if name == "adjacent":
        return AdjacentLinker(distance)
    if name == "cosine":
        return CosineLinker(distance=distance)
    raise ConfigError(
        f"unknown linker {name!r}: use minilm-attn, minilm-attn-torch, adjacent or cosine"
    )
