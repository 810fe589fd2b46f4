"""Text utilities: sentence splitting and token counting."""

from ragsieve.text.sentences import split_sentences
from ragsieve.text.tokens import count_tokens, count_tokens_batch, truncate_tokens

__all__ = ["count_tokens", "count_tokens_batch", "split_sentences", "truncate_tokens"]
