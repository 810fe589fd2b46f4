"""Evaluation metrics: context quality, ranked-list retrieval quality, and answer quality.

Three modules, all re-exported here: :mod:`~ragsieve.metrics.context` (context and
ranked-list metrics), :mod:`~ragsieve.metrics.answer` (answer metrics) and
:mod:`~ragsieve.metrics.summary` (:func:`aggregate`).

All functions are pure: they take texts (a context is the list of chunk texts handed to the LLM, a
ranked list is the texts of retrieved units in rank order) and gold data, and return a number, or
``None`` where the metric does not apply to the question (no gold evidence, no gold answer).
``None`` values are skipped by :func:`aggregate`, so a dataset where some questions have no
evidence (QASPER) averages evidence metrics over the questions that do.

Definitions, formulas and the evidence-matching rule are in ``docs/metrics.md``; the short form:

* Text is compared after *match normalisation*: SQuAD's answer normalisation (lower case, drop
  punctuation and the articles a/an/the, collapse whitespace) generalised to Unicode (NFKC, every
  non-word character replaced by a space), on token sequences.
* A gold evidence unit ``E`` is *covered* by texts ``T`` when at least ``THRESHOLD`` (0.8) of
  ``E``'s tokens lie inside some ``NGRAM``-token window (4 tokens, or all of ``E`` when shorter)
  that also occurs contiguously in one of ``T``, and none of the uncovered tokens holds a digit.
  Exact containment covers; so do the pieces of a unit that a chunk boundary cut into two
  retrieved chunks, a unit retrieved but for a few words, and small textual differences; a
  templated near-duplicate that differs in a number ("2012–13 season" for "2011–12 season") does
  not.
* A context sentence *is evidence* when it is covered by the gold units (it lies inside a gold
  sentence or paragraph) or it covers a whole gold unit (a splitter merged a gold sentence with
  its neighbour: the sentence contains a supporting fact, ParetoRAG's wording). A retrieved unit
  (ranked-list metrics) *contains evidence* when it, or one of its sentences, is evidence.
"""

from __future__ import annotations

from ragsieve.metrics import answer, context, summary
from ragsieve.metrics.answer import *  # noqa: F403
from ragsieve.metrics.context import *  # noqa: F403

# The evidence matcher, for the tests that check it directly (tests/evaluate).
from ragsieve.metrics.context import _Grams as _Grams
from ragsieve.metrics.summary import *  # noqa: F403

__all__ = [*context.__all__, *answer.__all__, *summary.__all__]
