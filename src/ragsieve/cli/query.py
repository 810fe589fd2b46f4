"""``ragsieve search``, ``ask`` and ``explain``: the commands that read an index for one query
and print what was found, the answer, or why that context was chosen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragsieve.cli.common import (
    ConfigOpt,
    IndexOpt,
    JsonOpt,
    LLMCtxOpt,
    LLMRetriesOpt,
    LLMTimeoutOpt,
    MethodRetrieverOpt,
    TotalBudgetOpt,
    llm_options,
    method_spec,
    plural,
    print_json,
    progress,
    utf8_text,
    writable_target,
)
from ragsieve.defaults import DEFAULT_MAX_TOKENS, DEFAULT_METHOD
from ragsieve.errors import InputError
from ragsieve.methods.answer_line import floor_of

if TYPE_CHECKING:
    from ragsieve.types import Answer

#: What ``--method`` means to each command (the methods, an example spec, the default).
METHOD_HELP = {
    "search": "Select with a method instead (tagger, naive, sage, carrot, pareto, saki, full; "
    f"'carrot[iterations=20]'; the default of ask and explain: {DEFAULT_METHOD}): "
    "prints the context it would give the LLM.",
    "ask": f"Method spec (default {DEFAULT_METHOD}): tagger (naive's top --k chunks, only "
    "the sentences the evidence tagger keeps), naive, sage, carrot, pareto, saki, full, "
    "'full[unit=passage]'.",
    "explain": f"A method spec (default {DEFAULT_METHOD}, as ask): tagger, naive, sage, "
    "carrot, pareto, saki, full, 'sage[min_k=3]'.",
}


def _snippet(text: str, n: int = 160) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def search(
    query: Annotated[str, typer.Argument(help="What to look for.", callback=utf8_text)],
    index_dir: IndexOpt,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Results.")] = 10,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[
        str | None, typer.Option(help="Rerank candidates: bi-encoder | cross-encoder name.")
    ] = None,
    method: Annotated[str | None, typer.Option(help=METHOD_HELP["search"])] = None,
    budget: Annotated[
        int | None, typer.Option(min=1, help="Token budget for --method (a ceiling).")
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve the chunks most relevant to QUERY (or the context a --method selects)."""
    from ragsieve.api import search as do_search
    from ragsieve.explain import where_of
    from ragsieve.index import Index
    from ragsieve.types import scored_json

    trace = None
    idx = Index.open(index_dir)
    if method is not None or config is not None:
        from ragsieve.explain import explain as run_method

        spec = method_spec(method, config)
        run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
        r, _ = run_method(query, idx, spec, **run)
        hits, trace = list(r.context.chunks), r.trace
    else:
        if budget is not None:
            raise InputError("--budget needs --method (plain search returns the top --k)")
        retriever = retriever or "dense"
        hits = do_search(query, idx, k=k, retriever=retriever, reranker=reranker)
    where = where_of(idx, hits)
    names = _names(idx, hits)
    # A plain search is a ranking (by score); a method's output is the LLM's context, in the
    # order the LLM reads it. The two are labelled so that nobody reads one as the other.
    order = "score" if trace is None else "context"
    if as_json:
        results = [{**r, "where": where.get(r["chunk_id"], "")} for r in scored_json(hits)]
        out = {"query": query, "retriever": retriever, "order": order, "results": results}
        if trace is not None:
            out.update(method=spec.label, trace=trace)
        print_json(out)
        return
    if not hits:
        typer.echo("no results")
        return
    if trace is not None:
        n_tokens = trace.get("context_tokens", sum(s.chunk.n_tokens for s in hits))
        typer.echo(
            f"context of {spec.label}: {_units(hits)}, {n_tokens} tokens, in the order the LLM "
            "reads them (score: the method's own)"
        )
        for s in hits:
            typer.echo(f"  - {s.score:.4f}  {_where(s.chunk, where, names)}  [{s.chunk.id}]")
            typer.echo(f"    {_snippet(s.chunk.text)}")
        return
    for rank, s in enumerate(hits, start=1):
        typer.echo(f"{rank:>3}. {s.score:.4f}  {_where(s.chunk, where, names)}  [{s.chunk.id}]")
        typer.echo(f"     {_snippet(s.chunk.text)}")


def _units(hits: Any) -> str:
    """``3 sentences`` when every item is one sentence, else ``3 chunks``."""
    one = all(s.chunk.sent_end - s.chunk.sent_start == 1 for s in hits)
    return plural(len(hits), "sentence" if one and hits else "chunk")


def _where(
    chunk: Any, where: dict[str, str] | None = None, names: dict[str, str] | None = None
) -> str:
    """The document's name (its title, with the end of its path where another document of the
    index shares that title; else its id), and the page or heading the text sits under."""
    name = (names or {}).get(chunk.doc_id) or chunk.title or chunk.doc_id
    at = (where or {}).get(chunk.id)
    return f"{name} ({at})" if at else name


def _names(idx: Any, hits: Any) -> dict[str, str]:
    """``doc_id -> name`` of the documents ``hits`` come from (:mod:`ragsieve.index.names`)."""
    from ragsieve.index.names import names_in_index

    return names_in_index(idx, [(s.chunk.doc_id, s.chunk.title) for s in hits])


#: ``ask --llm``: the reader.
AskLLMOpt = Annotated[
    str,
    typer.Option(
        help="local | local:PATH.gguf | openai:MODEL@URL | qwen-0.5b | qwen-1.5b | none (no "
        "LLM: the tagger's answer span alone). With local and qwen-0.5b the span answers "
        "where it can, their reply printed below it."
    ),
]
#: ``ask --compare``: a second method answering beside the first.
CompareOpt = Annotated[
    str | None,
    typer.Option(
        "--compare",
        help="Also answer with this method spec (e.g. naive) and print both side by side: "
        "answer, context and prompt tokens, seconds, what each kept.",
    ),
]


def ask(
    question: Annotated[str, typer.Argument(help="The question.", callback=utf8_text)],
    index_dir: IndexOpt,
    method: Annotated[str | None, typer.Option(help=METHOD_HELP["ask"])] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Chunks (top-k).")] = 10,
    budget: Annotated[
        int | None,
        typer.Option(min=1, help="Fill the context up to N tokens (a ceiling; replaces --k)."),
    ] = None,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Rerank before selection.")] = None,
    llm: AskLLMOpt = "local",
    max_tokens: Annotated[
        int, typer.Option(min=1, max=8192, help="Answer length cap.")
    ] = DEFAULT_MAX_TOKENS,
    total_budget: TotalBudgetOpt = None,
    llm_ctx: LLMCtxOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_retries: LLMRetriesOpt = None,
    config: ConfigOpt = None,
    compare: CompareOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION from the index with an LLM; prints the answer line, the tagger's answer
    span where the method gives one, the context and tokens (--llm none: the span alone). For
    the packaged readers (local, qwen-0.5b) the answer line is the span where it answers (not
    a yes/no question), with the LLM's reply below it: docs/llm.md, "The answer line"."""
    from ragsieve.index import Index
    from ragsieve.llm import get_llm
    from ragsieve.methods import build_method, check_spec, parse_spec

    run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
    settings = llm_options(llm_timeout, llm_retries, llm_ctx)
    _check_llm_flags(llm, compare, bool(settings))
    spec = check_spec(method_spec(method, config), **run)
    other = check_spec(parse_spec(compare), **run) if compare is not None else None
    idx = Index.open(index_dir)
    m = build_method(spec, idx, **run)
    model = None if no_llm(llm) else get_llm(llm, **settings)
    prog, cb = progress(quiet=True)  # a method stage or LLM call that runs 10 s or more
    m.progress = cb
    limits = {"max_tokens": max_tokens, "total_budget": total_budget}
    if other is not None:
        from ragsieve.compare import compare as run_compare

        first = build_method(other, idx, **run)
        first.progress = cb
        with prog:
            run_compare(
                question,
                [(other.label, first), (spec.label, m)],
                model,
                idx,
                **limits,
                as_json=as_json,
            )
        return
    with prog:
        answer = m.ask(question, model, **limits)
    _print_answer(answer, idx, model is not None, as_json)


def _check_llm_flags(llm: str, compare: str | None, settings: bool) -> None:
    """A clear error for options that need an LLM with ``--llm none``."""
    if compare is not None and no_llm(llm):
        raise InputError("--compare compares LLM answers: drop --llm none, or run ask twice")
    if no_llm(llm) and settings:
        raise InputError(
            "--llm-ctx, --llm-timeout and --llm-retries set an LLM: --llm none has none"
        )


def _print_answer(answer: Answer, idx: Any, asked: bool, as_json: bool) -> None:
    """``ask``'s output: the answer as JSON, or its line, span, reply and confidence, then the
    context the LLM read (``asked``: an LLM was asked) and the tokens."""
    from ragsieve.explain import where_of

    where = where_of(idx, answer.context.chunks)
    if as_json:
        out = answer.to_json()
        for item in out["context"]:
            item["where"] = where.get(item["chunk_id"], "")
        print_json(out)
        return
    names = _names(idx, answer.context.chunks)
    for text in _line_text(answer, idx, where, names, asked):
        typer.echo(text)
    typer.echo("")
    reader = "the LLM read them" if asked else "an LLM would read them"
    typer.echo(
        f"context ({answer.method}): {_units(answer.context.chunks)}, "
        f"{answer.context.n_tokens} tokens, in the order {reader}"
    )
    for s in answer.context.chunks:
        typer.echo(
            f"  [{s.chunk.id}] {s.score:.3f} {_where(s.chunk, where, names)}: "
            f"{_snippet(s.chunk.text, 100)}"
        )
    typer.echo(_tokens_text(answer, asked))


def _line_text(
    answer: Answer, idx: Any, where: dict[str, str], names: dict[str, str], asked: bool
) -> list[str]:
    """The lines that print the answer line (:attr:`Answer.line`): the line or why it
    abstained (with the best evidence found), the span beside it, the reply where the line is
    not the whole reply, and the confidence."""
    line = answer.line
    kind = line.kind if line is not None else "reply"
    out: list[str] = []
    if line is not None and line.abstained:
        out.append(f"{NOT_ANSWERED} ({line.why or 'no answer'})")
        best = max(answer.context.chunks, key=lambda s: s.score, default=None)
        if best is not None:
            out.append(
                f"best evidence found: {_where(best.chunk, where, names)} [{best.chunk.id}]: "
                f"{_snippet(best.chunk.text, 200)}"
            )
    elif not asked:
        out.append(answer.text if answer.span is not None else f"(no answer span: {NO_SPAN})")
    else:
        out.append(answer.text or "(empty answer)")
    if answer.span is not None:
        if answer.abstained:
            what = "the tagger's best span, under the floor"
        elif not asked:
            what = "the answer, no LLM asked"
        else:
            what = "the answer line" if kind == "span" else "the tagger's answer"
        out.append(_span_line(answer, idx, where, names, what))
    if asked and answer.reply and kind != "reply":  # the line is not the whole reply
        model = (answer.trace.get("llm") or {}).get("model") or "LLM"
        out.append(f"reply ({model}): {answer.reply or '(empty)'}")
    if answer.confidence is not None:
        floor = floor_of(answer.line)
        out.append(f"confidence: {answer.confidence:.2f} (floor {floor:.2f}; docs/llm.md)")
    return out


def _tokens_text(answer: Answer, asked: bool) -> str:
    """The tokens and seconds an answer took (none when no LLM was asked)."""
    seconds = sum(answer.timings.values())
    llm = answer.trace.get("llm")
    if not asked or not llm:
        return f"tokens: none (no LLM asked); time {seconds:.2f}s"
    u = answer.usage
    calls = llm.get("calls", 1)
    return (
        f"tokens: prompt {u.prompt_tokens}, completion {u.completion_tokens} "
        f"({calls} LLM call{'s' if calls > 1 else ''}); time {seconds:.2f}s"
    )


#: What ``ask`` prints when the answer line abstains.
NOT_ANSWERED = "The indexed documents do not answer this question"

#: Why ``--llm none`` has no answer to print.
NO_SPAN = "the method gives none (a span needs the tagger, with a model that has a span head)"


def no_llm(spec: str) -> bool:
    """``--llm none``: answer without an LLM (the answer span alone)."""
    return spec.strip().lower() == "none"


def _span_line(
    answer: Any, idx: Any, where: dict[str, str], names: dict[str, str], what: str
) -> str:
    """``span: "1822" (0.93, the tagger's answer) in Champollion [doc#s4], chars 120-124``:
    the answer span beside the answer, with where it sits; a span outside the context the LLM
    read says so."""
    span = answer.span
    located = next((s for s in answer.context.chunks if s.chunk.id == span.chunk_id), None)
    if located is not None:
        at = _where(located.chunk, where, names)
    else:
        from ragsieve.index.names import names_in_index

        name = names_in_index(idx, [(span.doc_id, span.title)]).get(span.doc_id)
        at = f"{name or span.title or span.doc_id}; its sentence is outside the context"
    return (
        f'span: "{span.text}" ({span.score:.2f}, {what}) in {at} [{span.chunk_id}], '
        f"chars {span.start}-{span.end}"
    )


def explain(
    question: Annotated[str, typer.Argument(help="The question.", callback=utf8_text)],
    index_dir: IndexOpt,
    method: Annotated[str | None, typer.Option(help=METHOD_HELP["explain"])] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Top-k where used.")] = 10,
    budget: Annotated[int | None, typer.Option(min=1, help="Token budget (a ceiling).")] = None,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Reranker (default: the method's).")] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the explanation as a PNG here.")
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show why the context for QUESTION was chosen: score curve and cut, MCTS path, links,
    tokens and time per stage (no LLM call)."""
    from ragsieve.explain import evidence_documents, text_lines
    from ragsieve.explain import explain as do_explain
    from ragsieve.explain import plot as do_plot
    from ragsieve.index import Index

    if plot is not None and plot.suffix.lower() != ".png":
        raise InputError(f"--plot must name a .png file, got {plot}")
    if plot is not None:
        writable_target(plot, "--plot")
    spec = method_spec(method, config)
    idx = Index.open(index_dir)
    r, rep = do_explain(
        question, idx, spec, k=k, budget=budget, retriever=retriever, reranker=reranker
    )
    if plot is not None:
        try:
            rep["plot"] = str(do_plot(rep, plot))
        except OSError as e:
            raise InputError(f"--plot {plot}: {e.strerror or e}") from e
    if as_json:
        # the documents with every candidate's span, as the viewer of `serve` draws them
        rep["documents"] = evidence_documents(idx, r, selected=rep["selected"])
        print_json(rep)
        return
    for line in text_lines(rep):
        typer.echo(line)
    if plot is not None:
        typer.echo(f"plot: {plot}")
