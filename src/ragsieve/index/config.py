"""What an index is built with (:class:`IndexConfig`) and when it gets an ANN index.

Kept apart from the store so that the CLI, the segmenter's CLI and the manifest checks can read
the settings and their defaults without the write path (:mod:`ragsieve.index.store`).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from ragsieve.checks import check_int, check_name, check_real
from ragsieve.errors import ConfigError
from ragsieve.index.sentences import SentenceOptions

#: Environment override of :attr:`AnnSettings.min_chunks` (``off``: never build an ANN index).
ANN_ENV = "RAGSIEVE_ANN_MIN_CHUNKS"


@dataclass(frozen=True)
class AnnSettings:
    """When the chunk vectors get an approximate (ANN) index, and how it is built and searched.

    Below ``min_chunks`` search is exact (a Lance flat scan). Above it, a whole-index search
    (``ragsieve search``, the retrievers without a document pool) uses an IVF_HNSW_SQ index:
    a few large IVF partitions, an HNSW graph over 8-bit scalar-quantised vectors inside each.
    Searches restricted to a document pool stay exact. Chosen on real MiniLM vectors at
    10k-200k chunks (docs/scale-out.md, "Search at scale"): recall@10 0.97 at 200k, where
    IVF_PQ needed many more probes and a refine step to pass 0.95.
    """

    min_chunks: int = 25_000
    #: Recorded in the manifest; what is built (:class:`~ragsieve.index.lance_tables.HnswSq`).
    index_type: str = "IVF_HNSW_SQ"
    m: int = 20
    ef_construction: int = 300
    #: Partitions searched: at least this many, and at least 60% of them, because recall
    #: falls slowly as the table grows at a fixed count (0.987 at 10k, 0.969 at 200k with 16).
    nprobes: int = 16
    ef: int = 50

    def partitions(self, n_rows: int) -> int:
        """IVF partitions: few and large, each an HNSW graph (about sqrt(rows) / 16: 10 at
        25k, 28 at 200k, 62 at 1M)."""
        return max(1, round(n_rows**0.5 / 16))

    def probes(self, partitions: int) -> int:
        """Partitions a query searches (see :attr:`nprobes`)."""
        return max(self.nprobes, -(-6 * partitions // 10))


def ann_settings() -> AnnSettings:
    """The defaults, with ``RAGSIEVE_ANN_MIN_CHUNKS`` (a number, or ``off``) applied."""
    raw = os.environ.get(ANN_ENV, "").strip().lower()
    if not raw:
        return AnnSettings()
    if raw == "off":
        return AnnSettings(min_chunks=2**62)
    try:
        n = int(raw)
    except ValueError:
        raise ConfigError(f"{ANN_ENV} must be a number of chunks or 'off', got {raw!r}") from None
    if n < 256:
        raise ConfigError(f"{ANN_ENV} must be at least 256 (to train the quantiser), got {n}")
    return AnnSettings(min_chunks=n)


#: Chunk size per chunker when none is given: Naive RAG's 200 (SAGE VII-A), a paragraph cap
#: of 512, and SAGE's coarse length l = 400 (VII-A hyper-parameters); ``sentences`` (two per
#: chunk, SAKI-RAG) only uses its cap for run-on sentences.
DEFAULT_CHUNK_TOKENS = {"fixed": 200, "paragraph": 512, "sage": 400, "sentences": 200}

#: Largest chunk size accepted (an embedder reads at most a few hundred tokens anyway).
MAX_CHUNK_TOKENS = 100_000


@dataclass(frozen=True)
class IndexConfig:
    """What an index was built with; fixed at creation so queries embed like the chunks did."""

    embedder: str = "minilm"
    chunker: str = "fixed"
    #: None = the chunker's own default (:data:`DEFAULT_CHUNK_TOKENS`).
    chunk_tokens: int = None  # type: ignore[assignment]
    #: Also write the ``sentences`` table (ParetoRAG vectors, SAKI links); the fields below
    #: configure it and are recorded in the manifest only when it is on, so that indexes
    #: without it keep their configuration (and evaluation cache keys) unchanged.
    sentences: bool = False
    #: Pareto passage of a sentence: auto (= chunk for --chunker sage, else paragraph),
    #: paragraph, chunk or document.
    sentence_passage: str = "auto"
    #: Pareto context vector: late (the other sentences' token outputs from one reading of the
    #: passage), exact (embed the rest of the passage apart, the paper's form: one embedding
    #: per sentence) or mean (of the other sentences' vectors: no extra embedding). Late is the
    #: default: the same recall as exact on development and held-out HotpotQA
    #: questions, where mean lost recall, for a third of exact's build time (BENCHMARKS.md,
    #: "Pareto context forms"; docs/sentence-retrieval.md).
    pareto_context: str = "late"
    #: ParetoRAG's core-sentence weight (Sec. 3.2; the paper's default 0.8).
    alpha: float = 0.8
    #: SAKI links stored per sentence (top-T of Eq. 4) and the farthest linked sentence.
    links: int = 8
    link_distance: int = 8

    def __post_init__(self) -> None:
        for name, expected in (
            ("embedder", "an embedder name such as 'minilm'"),
            ("chunker", "a chunker name such as 'fixed'"),
            ("sentence_passage", "a passage kind such as 'auto'"),
            ("pareto_context", "a context form such as 'late'"),
        ):
            check_name(name, getattr(self, name), expected=expected)
        check_real("alpha", self.alpha, lo=0, hi=1)
        check_int("links", self.links, lo=0)
        check_int("link_distance", self.link_distance)
        if self.chunk_tokens is None:
            size = DEFAULT_CHUNK_TOKENS.get(self.chunker, DEFAULT_CHUNK_TOKENS["fixed"])
            object.__setattr__(self, "chunk_tokens", size)
        n = self.chunk_tokens
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_CHUNK_TOKENS:
            raise ConfigError(f"chunk_tokens must be 1..{MAX_CHUNK_TOKENS}, got {n!r}")
        if not isinstance(self.sentences, bool):
            raise ConfigError(f"sentences must be true or false, got {self.sentences!r}")
        if isinstance(self.alpha, int):
            object.__setattr__(self, "alpha", float(self.alpha))
        self.sentence_options()  # validate

    def sentence_options(self) -> SentenceOptions:
        """The sentence-table options, with ``auto`` passages resolved for this chunker."""
        passage = self.sentence_passage
        if passage == "auto":
            passage = "chunk" if self.chunker == "sage" else "paragraph"
        return SentenceOptions(
            passage=passage,
            context=self.pareto_context,
            alpha=self.alpha,
            links=self.links,
            link_distance=self.link_distance,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "embedder": self.embedder,
            "chunker": self.chunker,
            "chunk_tokens": self.chunk_tokens,
        }
        if self.sentences:
            out.update(
                sentences=True,
                sentence_passage=self.sentence_passage,
                pareto_context=self.pareto_context,
                alpha=self.alpha,
                links=self.links,
                link_distance=self.link_distance,
            )
        return out


#: How a user names each setting: the ``ragsieve index`` option, or for settings with none the
#: ``IndexConfig`` field (Python only).
OPTION_NAMES = {
    "embedder": "--embedder",
    "chunker": "--chunker",
    "chunk_tokens": "--chunk-tokens",
    "sentences": "--sentences",
    "sentence_passage": "--sentence-passage",
    "pareto_context": "--pareto-context",
    "alpha": "IndexConfig.alpha",
    "links": "IndexConfig.links",
    "link_distance": "IndexConfig.link_distance",
}


def config_mismatch(where: object, built: IndexConfig, asked: IndexConfig) -> str:
    """The one-line refusal of a write whose settings differ from the index's: every setting
    that differs, by the option a user sets it with (``--chunk-tokens 200 (asked 50)``), and
    both ways forward. A sentence table asked of an index without one is not refused (it is
    added, see ``Index.add_sentences``), and where one side has the table and the other not,
    its sentence options are not compared (the other side records none); where neither has
    it they are (``index --pareto-context exact`` on an index without one is refused)."""
    old, new = asdict(built), asdict(asked)
    keys = [k for k in old if old[k] != new[k]]
    if built.sentences != asked.sentences:  # the side without the table records no options
        both = built.to_dict().keys() & asked.to_dict().keys()
        keys = [k for k in keys if k in both or k == "sentences"]

    def said(key: str, value: Any) -> str:
        if key == "sentences":
            return "--sentences" if value else "no --sentences"
        return f"{OPTION_NAMES.get(key, key)} {value}"

    what = ", ".join(f"{said(k, old[k])} (asked {new[k]})" for k in keys if k != "sentences")
    if "sentences" in keys:
        what = ", ".join(filter(None, [what, f"{said('sentences', old['sentences'])}"]))
    return (
        f"index {where} was built with {what}; use a new --index directory, or rebuild this "
        "one with --force"
    )
