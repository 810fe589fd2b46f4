"""Text utilities: sentence splitting, token counting, and which units can be evidence."""

from ragsieve.text.sentences import sentence_texts, split_sentences, split_sentences_batch
from ragsieve.text.tokens import count_tokens, count_tokens_batch, truncate_tokens
from ragsieve.text.units import has_words

__all__ = [
    "count_tokens",
    "count_tokens_batch",
    "has_words",
    "sentence_texts",
    "split_sentences",
    "split_sentences_batch",
    "truncate_tokens",
]
