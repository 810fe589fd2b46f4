"""The tagger's settings: one typed object, one set of defaults, one check.

:func:`ragsieve.tag.prune.prune` reads a :class:`TaggerSettings` whole. The ``tagger`` method's
config *is* one (:class:`~ragsieve.methods.tagger.TaggerConfig` adds the retrieval and the
context's unit and budget), ``full`` and :func:`ragsieve.prune` build one, and the HTTP limits
(:mod:`ragsieve.serve.limits`) read their bounds from the constants here, so that a value is
refused the same way wherever it is given.

The defaults are the ``tagger`` method's, each chosen by a dev rule that docs/tagger.md gives;
a caller that differs (``full`` carries no links or leads, :func:`ragsieve.prune` no leads)
says so by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragsieve.checks import check_flag, check_int, check_real
from ragsieve.errors import ConfigError

#: A keep or passage threshold is a probability below this (1 would keep nothing).
THRESHOLD_MAX = 1.0
#: Readings of the pool: 1, or 2 with the bridge hop.
HOPS = (1, 2)
#: The least ``min_keep`` (0: an empty context is allowed).
MIN_KEEP_MIN = 0
#: The span ranking's weight on keep probability x relevance, at most this power.
SPAN_POWER_MAX = 4.0
#: The span ranks kept sentences by span score x (keep probability x relevance) ** this
#: (docs/tagger.md, "The span's ranking after link carrying").
SPAN_POWER = 1.0
#: The span's ranking also weighs the share of the question's words its sentence holds, by
#: (SPAN_SHARE_FLOOR + share) ** span_overlap; at most this power.
SPAN_OVERLAP_MAX = 4.0
#: The span's word-share weight by default: none (the field's comment says why).
SPAN_OVERLAP = 0.0
#: How the span treats a sentence link carrying added: ``none`` ranks it by its own keep
#: probability and relevance; ``inherit`` (the default, chosen on dev) by those of the kept
#: sentence that linked it; ``bridge`` answers from the linked passage where the best span
#: names its title (docs/tagger.md, "The span on a linked passage").
SPAN_LINKS = ("none", "inherit", "bridge")


def check_threshold(threshold: object, name: str = "threshold") -> None:
    """A keep threshold in (0, 1) or a passage threshold in [0, 1) (0: no passage
    rejection), or None (the model's default)."""
    if threshold is not None and (
        not isinstance(threshold, int | float)
        or isinstance(threshold, bool)
        or not 0 <= threshold < THRESHOLD_MAX
        or (name == "threshold" and threshold == 0)
    ):
        bounds = "(0, 1)" if name == "threshold" else "[0, 1)"
        raise ConfigError(f"{name} must be in {bounds}, got {threshold!r}")


@dataclass(frozen=True)
class TaggerSettings:
    """How the tagger reads a pool and what it keeps (:func:`ragsieve.tag.prune.prune`)."""

    #: Keep probability a sentence needs (None: the default of whichever decides, the
    #: stacker or the model's raw rule, chosen on its dev split).
    threshold: float | None = None
    #: Passage relevance a passage needs to contribute sentences (None: the default of
    #: whichever decides; 0: no passage rejection).
    passage_threshold: float | None = None
    #: Decide with the model's stacker (``stack.json``, fitted on dev) where it has one;
    #: false: the raw keep probability against ``threshold`` and ``passage_threshold``.
    stack: bool = True
    #: The stacker's open point (chosen on dev with no budget: recall over precision) instead
    #: of its default; docs/tagger.md.
    open_point: bool = False
    #: 2: a second tagger pass with the question + the bridge sentences.
    hops: int = 2
    #: The most probable sentences kept whatever their probability (never an empty context).
    min_keep: int = 1
    #: Lead carrying: a passage's first sentence kept where a kept sentence of it says "he" or
    #: "the film" of the entity it names (:mod:`ragsieve.tag.prune`). On by its dev rule
    #: (docs/tagger.md, "Lead carrying on today's code").
    lead: bool = True
    #: Link carrying: the best sentence of a passage that kept nothing but whose title a kept
    #: sentence names (the bridge entity's passage; :mod:`ragsieve.tag.prune`). On by its dev
    #: rule (docs/tagger.md, "Link carrying"): HotpotQA dev evidence 0.963x -> 1.04x naive's.
    link: bool = True
    #: The span's ranking: span score x (keep probability x relevance) ** span_power.
    span_power: float = SPAN_POWER
    #: Word snapping: the span widened to whole words and trimmed of quotes and punctuation
    #: (:func:`ragsieve.tag.span.snap_span`). On by its dev rule (docs/tagger.md, "Word
    #: snapping"): techdocs dev span F1 0.510 -> 0.545, the dev file's 295 -0.003.
    span_snap: bool = True
    #: How the span treats sentences link carrying added (:data:`SPAN_LINKS`): ranked with
    #: the weight of the sentence that linked them, by its dev rule (docs/tagger.md, "The span
    #: on a linked passage": HotpotQA dev span F1 0.392 -> 0.436).
    span_link: str = "inherit"
    #: The span's ranking times (0.1 + the share of the question's words its sentence holds)
    #: ** span_overlap: a span head points somewhere in every sentence, and in a manual the
    #: sentence that answers names what the question names. Off by default: it passed its dev
    #: rule but its test figures did not hold (docs/tagger.md, "The span's sentence holds the
    #: question's words"). 0: not weighed.
    span_overlap: float = SPAN_OVERLAP

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """A clear :class:`~ragsieve.errors.ConfigError` naming the first setting out of its
        bounds; run when the settings are made, so nothing downstream checks them again."""
        check_threshold(self.threshold)
        check_threshold(self.passage_threshold, "passage_threshold")
        check_flag("stack", self.stack)
        check_flag("open_point", self.open_point)
        check_int("hops", self.hops, lo=HOPS[0], hi=HOPS[-1])
        check_int("min_keep", self.min_keep, lo=MIN_KEEP_MIN)
        check_flag("lead", self.lead)
        check_flag("link", self.link)
        check_real("span_power", self.span_power, lo=0, hi=SPAN_POWER_MAX)
        check_flag("span_snap", self.span_snap)
        check_real("span_overlap", self.span_overlap, lo=0, hi=SPAN_OVERLAP_MAX)
        if self.span_link not in SPAN_LINKS:
            raise ConfigError(
                f"span_link must be one of {', '.join(SPAN_LINKS)}, got {self.span_link!r}"
            )
