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

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.methods import MethodSpec, Retrieval

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


#: Shades for keep probabilities 0-0.2, 0.2-0.4, ... 0.8-1 in the terminal.
SHADES = " ░▒▓█"


def shade(p: float) -> str:
    return SHADES[min(len(SHADES) - 1, int(max(0.0, p) * len(SHADES)))]


def explain(
    question: str, index: Index, method: str | MethodSpec = "sage", **run: Any
) -> tuple[Retrieval, dict[str, Any]]:
    """Run ``method`` (a name or ``NAME[key=value,...]``) on ``question``; return the retrieval
    and its report. ``run`` takes ``k``, ``budget``, ``retriever`` and ``reranker``."""
    from ragsieve.methods import build_method

    m = build_method(method, index, **run)
    r = m.retrieve([question])[0]
    return r, report(r)


def text_lines(rep: dict[str, Any], width: int = 40) -> list[str]:
    """The report as plain lines for the terminal."""
    lines = [f"method {rep['method']}: {len(rep['selected'])} chunk(s) selected"]
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
