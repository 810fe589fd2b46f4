"""The data and metric layer of the evaluation harness.

* :mod:`~ragsieve.evaluate.schema`: the common question/document schema and the generic JSONL
  format (:func:`load_generic`);
* :mod:`~ragsieve.evaluate.datasets`: built-in benchmark loaders (:func:`load_dataset`);
* :mod:`~ragsieve.metrics`: context, ranked-list and answer metrics, :func:`aggregate`;
* :mod:`~ragsieve.llm.cost`: SAGE's cost (Eq. 1) and cost efficiency (Eq. 2), latency.

Definitions and formulas: ``docs/metrics.md``. Heavy metric libraries (rouge-score, sacrebleu,
nltk) are imported on first use, so importing this package stays cheap.
"""

from ragsieve.evaluate.datasets import DATASETS, dataset_names, find_data_dir, load_dataset
from ragsieve.evaluate.schema import (
    EvalDataset,
    EvalDocument,
    EvalQuestion,
    load_corpus,
    load_generic,
)
from ragsieve.llm.cost import (
    PRICES,
    cost_efficiency,
    latency_summary,
    llm_cost,
    relative_cost_efficiency,
)
from ragsieve.metrics import (
    accuracy_mc,
    aggregate,
    answer_metrics,
    answer_recall,
    bleu_1,
    bleu_4,
    context_metrics,
    context_tokens,
    evidence_precision,
    evidence_recall,
    evidence_token_precision,
    exact_match,
    f1,
    ie,
    ie_at_k,
    information_efficiency,
    match_tokens,
    meteor,
    meteor_nosyn,
    mrr,
    normalize_answer,
    parse_choice,
    precision_at_k,
    ranked_metrics,
    recall_at_k,
    rouge_1,
    rouge_l,
)

__all__ = [
    "DATASETS",
    "PRICES",
    "EvalDataset",
    "EvalDocument",
    "EvalQuestion",
    "accuracy_mc",
    "aggregate",
    "answer_metrics",
    "answer_recall",
    "bleu_1",
    "bleu_4",
    "context_metrics",
    "context_tokens",
    "cost_efficiency",
    "dataset_names",
    "evidence_precision",
    "evidence_recall",
    "evidence_token_precision",
    "exact_match",
    "f1",
    "find_data_dir",
    "ie",
    "ie_at_k",
    "information_efficiency",
    "latency_summary",
    "llm_cost",
    "load_corpus",
    "load_dataset",
    "load_generic",
    "match_tokens",
    "meteor",
    "meteor_nosyn",
    "mrr",
    "normalize_answer",
    "parse_choice",
    "precision_at_k",
    "ranked_metrics",
    "recall_at_k",
    "relative_cost_efficiency",
    "rouge_1",
    "rouge_l",
]
