"""``ragsieve eval``: methods on a benchmark, with context, ranked-list, answer and cost
metrics (and, for a method that locates an answer span, the span scored as an answer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

import ragsieve.cli.common as common
from ragsieve.defaults import DEFAULT_MAX_TOKENS
from ragsieve.errors import InputError, require_extra


def _eval_specs(methods: str | None, config: Path | None, run: dict[str, Any]) -> list[Any]:
    """``--methods`` plus the spec of ``--config``, each checked before any work."""
    from ragsieve.methods import check_spec, parse_methods, spec_from_toml

    specs = [] if methods is None else parse_methods(methods)
    if methods is None and config is None:
        specs = parse_methods("naive")
    if config is not None:
        specs.append(spec_from_toml(config))
    return [check_spec(s, **run) for s in specs]


#: ``eval``'s longer options, named once here so that the command reads as its steps.
DatasetOpt = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        help="Built-in: squad, hotpotqa, hotpotqa-sent, qasper, quality, msmarco, techdocs, "
        "techdocs-test.",
    ),
]
MethodsOpt = Annotated[
    str | None,
    typer.Option(help="Comma-separated methods; NAME[key=value,...] sets options (naive)."),
]
PoolOpt = Annotated[
    bool, typer.Option("--pool", help="All per-question documents as one open corpus.")
]
NoLLMOpt = Annotated[
    bool,
    typer.Option(
        "--no-llm",
        help="No LLM answers: context metrics, and the answer span of a method that gives "
        "one scored as its answer (span_em, span_f1).",
    ),
]
ChunkerOpt = Annotated[
    str, typer.Option(help="Chunker of the evaluation index: fixed | paragraph | sage.")
]
ChunkTokensOpt = Annotated[
    int | None,
    typer.Option(min=8, max=100_000, help="Chunk size in tokens (default: the chunker's)."),
]
DataDirOpt = Annotated[
    Path | None, typer.Option(help="Benchmark data folder (default ../shared/data).")
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", exists=True, dir_okay=False, help="Add the method spec of a TOML file."
    ),
]


def eval_cmd(
    dataset: DatasetOpt = None,
    data: Annotated[Path | None, typer.Option(help="Generic questions JSONL.")] = None,
    corpus: Annotated[Path | None, typer.Option(help="Shared corpus JSONL (with --data).")] = None,
    methods: MethodsOpt = None,
    budget: Annotated[int | None, typer.Option(min=1, help="Context token budget.")] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Chunks (top-k).")] = 10,
    limit: Annotated[int | None, typer.Option(min=1, help="First N questions.")] = None,
    pool: PoolOpt = False,
    no_llm: NoLLMOpt = False,
    llm: Annotated[str, typer.Option(help="LLM spec (see ask); none: as --no-llm.")] = "local",
    llm_ctx: common.LLMCtxOpt = None,
    llm_timeout: common.LLMTimeoutOpt = None,
    llm_retries: common.LLMRetriesOpt = None,
    retriever: common.MethodRetrieverOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Rerank before selection.")] = None,
    chunker: ChunkerOpt = "fixed",
    chunk_tokens: ChunkTokensOpt = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Answer length cap.")] = DEFAULT_MAX_TOKENS,
    total_budget: common.TotalBudgetOpt = None,
    price_in: Annotated[
        float, typer.Option(min=0, help="$ per 1M input tokens (SAGE Eq. 1).")
    ] = 10.0,
    price_out: Annotated[float, typer.Option(min=0, help="$ per 1M output tokens.")] = 30.0,
    data_dir: DataDirOpt = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Where evaluation indexes live.")] = None,
    out: Annotated[Path | None, typer.Option(help="Write results, table and plot here.")] = None,
    config: ConfigOpt = None,
    as_json: common.JsonOpt = False,
) -> None:
    """Evaluate methods on a benchmark: context, ranked-list, answer and cost metrics."""
    require_extra("eval", "ragsieve eval")
    from ragsieve.evaluate.runner import EvalConfig, run_eval, select_dataset

    run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
    prices = {"price_in_per_m": price_in, "price_out_per_m": price_out}
    cfg = EvalConfig(
        methods=_eval_specs(methods, config, run),
        no_llm=no_llm,
        llm=llm,
        llm_options=common.llm_options(llm_timeout, llm_retries, llm_ctx),
        max_tokens=max_tokens,
        total_budget=total_budget,
        chunker=chunker,
        chunk_tokens=chunk_tokens,
        cache_dir=cache_dir,
        **run,
        **prices,
    )
    if out is not None:
        common.writable_target(out, "--out", is_dir=True)
    ds = select_dataset(dataset, data, corpus, limit, pool, data_dir)
    prog, cb = common.progress()
    with prog:
        results = run_eval(ds, cfg, progress=cb)
    _write_and_show(results, out, as_json)


def _write_and_show(results: dict[str, Any], out: Path | None, as_json: bool) -> None:
    """``eval``'s results written under ``out`` (when given) and shown: as JSON without the
    per-question rows, or as the markdown table and the files written."""
    from ragsieve.evaluate.runner import markdown_table, write_outputs

    if out is not None:
        try:
            write_outputs(results, out)
        except OSError as e:
            raise InputError(f"--out {out}: {e.strerror or e}") from e
    if as_json:
        common.print_json({k: v for k, v in results.items() if k != "per_question"})
    else:
        typer.echo(markdown_table(results))
        if out is not None:
            typer.echo(
                f"\nwrote {out}/results.json, per_question.jsonl, table.md, quality_vs_tokens.png"
            )
