"""``ragsieve explain``: why a method chose the context it chose.

Every method leaves a trace on its :class:`~ragsieve.pipeline.Retrieval` (see DESIGN.md: "a
trace on every answer"). This module turns that trace into a report a person can read: the
reranker's score curve over the candidates with the gradient cut (SAGE Fig. 5), the best MCTS
path with its visits and benefits (CARROT), the attention links that expanded the static hits
(SAKI), each passage the evidence tagger read with its sentences shaded by keep probability,
and the tokens and seconds each stage cost. It reads only the trace, so a method that
records the common keys (``candidates``, ``selected``, ``selection``, ``context_tokens``) is
explained without code of its own here.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsieve.defaults import DEFAULT_METHOD
from ragsieve.errors import ConfigError

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.methods import MethodSpec, Retrieval
    from ragsieve.types import Scored

#: Selection-trace keys that describe a cut (SAGE) or a budgeted fill.
CUT_KEYS = ("policy", "cut", "reason", "min_k", "g", "threshold", "drop_ratio", "budget", "k")
#: Selection-trace keys that describe a tree search (CARROT).
SEARCH_KEYS = (
    "search",
    "benefit",
    "cost",
    "iterations_run",
    "nodes_explored",
    "max_depth",
    "root_visits",
    "reranker_calls",
    "texts_scored",
    "best_path",
    "top_nodes",
)
#: Method-trace keys that describe sentence expansion (SAKI) and the linked sentences used.
LINK_KEYS = ("judge", "threshold", "static", "expanded", "kept", "fallback", "fallback_reason")


def report(r: Retrieval) -> dict[str, Any]:
    """A JSON-ready explanation of one retrieval."""
    trace = r.trace
    selected = list(trace.get("selected", [s.chunk.id for s in r.context.chunks]))
    chosen = set(selected)
    curve = [
        {
            "rank": i + 1,
            "chunk_id": c["chunk_id"],
            "score": c["score"],
            "tokens": c.get("tokens"),
            "selected": c["chunk_id"] in chosen,
        }
        for i, c in enumerate(trace.get("candidates", []))
    ]
    sel = trace.get("selection", {}) or {}
    out: dict[str, Any] = {
        "question": r.question,
        "method": trace.get("method"),
        "selected": selected,
        "score_curve": curve,
        "cut": {k: sel[k] for k in CUT_KEYS if k in sel},
        "tokens": {
            "candidates": sum(c["tokens"] or 0 for c in curve),
            "selected": r.context.n_tokens,
        },
        "seconds": {k: round(v, 4) for k, v in r.timings.items()},
    }
    search = {k: sel[k] for k in SEARCH_KEYS if k in sel}
    if search:
        out["search"] = search
    links = {k: trace[k] for k in LINK_KEYS if k in trace}
    if "links" in trace:
        links["links"] = trace["links"]
    if links:
        out["links"] = links
        static = trace.get("static") or []
        out["tokens"] = {
            "static": sum(c.get("tokens") or 0 for c in static),
            **out["tokens"],
        }
    if "feedback" in trace:
        out["feedback"] = trace["feedback"]
    passages = tagged_passages(r, chosen)
    if passages:
        out["passages"] = passages
    return out


def tagged_passages(r: Retrieval, chosen: set[str]) -> list[dict[str, Any]]:
    """With the evidence tagger: every passage it read, most relevant first, each sentence
    with its keep probability and whether it was selected (empty for other methods)."""
    groups: dict[float, list[Any]] = {}
    for s in r.candidates:
        if "keep" in s.scores:
            groups.setdefault(s.scores["passage"], []).append(s)
    out = []
    for items in sorted(groups.values(), key=lambda g: -g[0].scores["relevance"]):
        items.sort(key=lambda s: s.chunk.start)
        out.append(
            {
                "doc_id": items[0].chunk.doc_id,
                "title": items[0].chunk.title,
                "relevance": round(items[0].scores["relevance"], 4),
                "sentences": [
                    {
                        "chunk_id": s.chunk.id,
                        "text": s.chunk.text,
                        "keep": round(s.scores["keep"], 4),
                        "selected": s.chunk.id in chosen,
                    }
                    for s in items
                ],
            }
        )
    return out


def evidence_report(
    index: Index,
    r: Retrieval,
    *,
    max_documents: int | None = None,
    gap_chars: int | None = None,
) -> dict[str, Any]:
    """:func:`report` plus ``documents`` (:func:`evidence_documents`): what the evidence
    viewer of ``ragsieve serve`` draws, for ``POST /explain`` and ``/ask`` with ``explain``."""
    rep = report(r)
    rep["where"] = where_of(index, r.context.chunks)
    rep["documents"] = evidence_documents(
        index, r, selected=rep["selected"], max_documents=max_documents, gap_chars=gap_chars
    )
    return rep


def unit_score(s: Scored) -> float:
    """The score a viewer shades a unit by: the tagger's keep probability where there is one,
    else the candidate's own (reranker or retriever) score."""
    return float(s.scores.get("keep", s.score))


def evidence_documents(
    index: Index,
    r: Retrieval,
    *,
    selected: Iterable[str] | None = None,
    max_documents: int | None = None,
    gap_chars: int | None = None,
) -> list[dict[str, Any]]:
    """The selected context shown inside its documents: for each document holding a candidate
    (or a selected unit), its text as consecutive ``segments`` that cover it from 0 to its end.

    Each segment is ``{start, end, text, chunk_id, score, selected}``: a candidate's span has
    its id and :func:`unit_score`; text no candidate covers is split at the index's chunk
    boundaries (``chunk_id`` set only where a segment is a whole index chunk; ``score`` null).
    Candidates may nest or overlap (SAKI's sentences inside its chunk hits): selected units
    are laid down first, then the finest candidates, and a later unit keeps only the text left
    over, so every selected unit stays visible and sentences are not hidden under passages.
    ``selected`` overrides the retrieval's selection (the context an answer finally used, after
    feedback). Documents come in the order their first unit appears (selected context first,
    then candidates by rank), at most ``max_documents``. With ``gap_chars``, a stretch of
    uncovered text much longer than ``2 * gap_chars`` keeps only its head and tail around
    ``" … "`` (its ``start``/``end`` still span all of it) and says how many characters it
    left out in ``elided``: a viewer need not ship a whole book for one sentence. Documents
    no longer in the index (deleted since the retrieval) are left out.
    """
    from ragsieve.formats import locate

    chosen_set = set(selected if selected is not None else (s.chunk.id for s in r.context.chunks))
    units: dict[str, Scored] = {}
    for s in (*r.context.chunks, *r.candidates):
        units.setdefault(s.chunk.id, s)
    by_doc: dict[str, list[Scored]] = {}
    for s in units.values():
        by_doc.setdefault(s.chunk.doc_id, []).append(s)
    out: list[dict[str, Any]] = []
    for doc_id, items in by_doc.items():
        if max_documents is not None and len(out) >= max_documents:
            break
        doc = index.get_document(doc_id)
        if doc is None:
            continue
        text = doc.text
        # Selected first, then the finest span; ties keep rank order (sort is stable).
        order = sorted(
            items,
            key=lambda s: (s.chunk.id not in chosen_set, s.chunk.end - s.chunk.start),
        )
        painted: list[tuple[int, int, Scored]] = []
        for s in order:
            lo, hi = max(0, s.chunk.start), min(len(text), s.chunk.end)
            kept = s.chunk.id in chosen_set
            for a, b in _uncovered(lo, hi, [(p[0], p[1]) for p in painted]):
                # The blanks left between a passage's sentences read as plain text.
                if kept or text[a:b].strip():
                    painted.append((a, b, s))
        painted.sort(key=lambda p: p[0])
        chunks = {(c.start, c.end): c.id for c in index.chunks_of(doc_id)}
        cuts = sorted({b for span in chunks for b in span})
        segments: list[dict[str, Any]] = []
        pos = 0
        for a, b, s in painted:
            segments.extend(_gap_segments(text, pos, a, cuts, chunks, gap_chars))
            segments.append(
                {
                    "start": a,
                    "end": b,
                    "text": text[a:b],
                    "chunk_id": s.chunk.id,
                    "score": round(unit_score(s), 6),
                    "selected": s.chunk.id in chosen_set,
                    "where": locate(text, a, b),
                }
            )
            pos = b
        segments.extend(_gap_segments(text, pos, len(text), cuts, chunks, gap_chars))
        out.append({"doc_id": doc_id, "title": doc.title, "segments": segments})
    return out


def _uncovered(lo: int, hi: int, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[lo, hi)`` outside every interval in ``taken``."""
    parts = []
    for a, b in sorted(taken):
        if b <= lo or a >= hi:
            continue
        if a > lo:
            parts.append((lo, a))
        lo = max(lo, b)
    if lo < hi:
        parts.append((lo, hi))
    return parts


def _gap_segments(
    text: str,
    lo: int,
    hi: int,
    cuts: list[int],
    chunks: dict[tuple[int, int], str],
    gap_chars: int | None,
) -> list[dict[str, Any]]:
    """Segments for text no candidate covers, split at the index's chunk boundaries."""
    points = [lo, *(c for c in cuts if lo < c < hi), hi]
    out: list[dict[str, Any]] = []
    for a, b in pairwise(points):
        if b <= a:
            continue
        seg: dict[str, Any] = {
            "start": a,
            "end": b,
            "text": text[a:b],
            "chunk_id": chunks.get((a, b)),
            "score": None,
            "selected": False,
        }
        if gap_chars is not None and b - a > 2 * gap_chars + 40:
            seg["text"] = text[a : a + gap_chars] + " … " + text[b - gap_chars : b]
            seg["elided"] = b - a - 2 * gap_chars
        out.append(seg)
    return out


#: Shades for keep probabilities 0-0.2, 0.2-0.4, ... 0.8-1 in the terminal.
SHADES = " ░▒▓█"


def shade(p: float) -> str:
    return SHADES[min(len(SHADES) - 1, int(max(0.0, p) * len(SHADES)))]


def explain(
    question: str, index: Index, method: str | MethodSpec = DEFAULT_METHOD, **run: Any
) -> tuple[Retrieval, dict[str, Any]]:
    """Run ``method`` (a name or ``NAME[key=value,...]``; default
    :data:`~ragsieve.defaults.DEFAULT_METHOD`, as ``ask``) on ``question``; return the retrieval
    and its report. ``run`` takes ``k``, ``budget``, ``retriever`` and ``reranker``."""
    from ragsieve.methods import build_method
    from ragsieve.methods.models import LLM, spec_models

    # No LLM is called here, so none is built: an LLM judge (saki[judge=llm]) is refused in
    # one line before any model loads (the HTTP server's gate says the same for /explain).
    spec, uses = spec_models(method, {k: v for k, v in run.items() if v is not None})
    for u in uses:
        if u.kind == LLM:
            raise ConfigError(
                f"explain never calls the LLM, and {u.describe(spec.label)}: use "
                "judge=cross-encoder or judge=none, or ask --json (its trace holds the verdicts)"
            )
    m = build_method(spec, index, **run)
    r = m.retrieve([question])[0]
    rep = report(r)
    rep["where"] = where_of(index, r.context.chunks)
    return r, rep


def where_of(index: Index, items: Iterable[Scored]) -> dict[str, str]:
    """``chunk_id -> "page 3"`` (or the heading above it) for every item whose document has
    pages or headings (:func:`ragsieve.formats.locate`); each document is read once."""
    from ragsieve.formats import locate

    texts: dict[str, str | None] = {}
    out: dict[str, str] = {}
    for s in items:
        doc_id = s.chunk.doc_id
        if doc_id not in texts:
            doc = index.get_document(doc_id)
            texts[doc_id] = doc.text if doc is not None else None
        text = texts[doc_id]
        where = locate(text, s.chunk.start, s.chunk.end) if text else ""
        if where:
            out[s.chunk.id] = where
    return out


def text_lines(rep: dict[str, Any], width: int = 40) -> list[str]:
    """The report as plain lines for the terminal."""
    lines = [f"method {rep['method']}: {len(rep['selected'])} unit(s) selected"]
    for cid, where in (rep.get("where") or {}).items():
        lines.append(f"  [{cid}] {where}")
    curve = rep["score_curve"]
    if curve:
        top = max(c["score"] for c in curve) or 1.0
        lines.append("score curve (* = selected):")
        for c in curve[:30]:
            bar = "#" * max(1, int(width * max(c["score"], 0.0) / top))
            mark = "*" if c["selected"] else " "
            lines.append(f" {mark}{c['rank']:>3} {c['score']:.4f} {bar} [{c['chunk_id']}]")
    if rep["cut"]:
        lines.append("selection: " + ", ".join(f"{k}={v}" for k, v in rep["cut"].items()))
    if "search" in rep:
        s = rep["search"]
        lines.append(
            "search: "
            + ", ".join(f"{k}={s[k]}" for k in SEARCH_KEYS if k in s and not isinstance(s[k], list))
        )
        for depth, step in enumerate(s.get("best_path", []), start=1):
            lines.append(
                f"  depth {depth}: +{step['chunk_id']}  W={step['W']} V={step['V']} "
                f"N={step['N']} cost={step['cost']}"
            )
    if "links" in rep:
        lk = rep["links"]
        lines.append(
            "expansion: "
            + ", ".join(f"{k}={lk[k]}" for k in LINK_KEYS if k in lk and k != "static")
        )
        for link in lk.get("links", [])[:20]:
            lines.append(f"  {link}")
    for p in rep.get("passages", [])[:12]:
        lines.append(f"passage {p['title'] or p['doc_id']} (relevance {p['relevance']:.3f}):")
        for s in p["sentences"]:
            mark = "*" if s["selected"] else " "
            text = " ".join(s["text"].split())
            text = text if len(text) <= 90 else text[:87] + "..."
            lines.append(f" {mark}{shade(s['keep']) * 3} {s['keep']:.3f} {text}")
    lines.append("tokens: " + ", ".join(f"{k} {v}" for k, v in rep["tokens"].items()))
    lines.append("seconds: " + ", ".join(f"{k} {v:.3f}" for k, v in rep["seconds"].items()))
    return lines


def plot(rep: dict[str, Any], path: Path) -> Path:
    """A PNG: score curve with the cut, tokens per stage, and the MCTS path when there is one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 3 if "search" in rep else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.6 * panels, 3.8), squeeze=False)
    ax = axes[0][0]
    curve = rep["score_curve"]
    ranks = [c["rank"] for c in curve]
    colors = ["tab:green" if c["selected"] else "tab:gray" for c in curve]
    ax.bar(ranks, [c["score"] for c in curve], color=colors)
    cut = rep["cut"].get("cut")
    if isinstance(cut, int) and curve:
        ax.axvline(cut + 0.5, color="tab:red", linestyle="--", label=f"cut after {cut}")
        ax.legend(fontsize=8)
    ax.set_xlabel("candidate rank")
    ax.set_ylabel("reranker score")
    ax.set_title("scores (green = selected)", fontsize=10)
    ax = axes[0][1]
    stages = list(rep["tokens"])
    ax.bar(stages, [rep["tokens"][s] for s in stages], color="tab:blue")
    ax.set_ylabel("tokens")
    ax.set_title("tokens per stage", fontsize=10)
    if "search" in rep:
        ax = axes[0][2]
        path_steps = rep["search"].get("best_path", [])
        depths = list(range(1, len(path_steps) + 1))
        ax.plot(depths, [s["W"] for s in path_steps], marker="o", label="benefit W")
        for d, s in zip(depths, path_steps, strict=True):
            ax.annotate(
                f"N={s['N']}", (d, s["W"]), fontsize=7, xytext=(3, 3), textcoords="offset points"
            )
        ax.set_xlabel("depth on the best path")
        ax.set_ylabel("benefit")
        ax.set_title("MCTS best path", fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle(f"{rep['method']}: {rep['question'][:80]}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
