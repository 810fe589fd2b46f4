"""Text utilities: sentence splitting and token counting."""

from ragsieve.text.sentences import sentence_texts, split_sentences, split_sentences_batch
from ragsieve.text.tokens import count_tokens, count_tokens_batch, truncate_tokens

__all__ = [
    "count_tokens",
    "count_tokens_batch",
    "sentence_texts",
    "split_sentences",
    "split_sentences_batch",
    "truncate_tokens",
]
