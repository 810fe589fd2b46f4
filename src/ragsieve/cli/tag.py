"""Tagger commands: ``train-tagger`` (the shipped model was made by it) and ``prune`` (the
tagger on a question and passages given as files or text, no index needed)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

import ragsieve.cli.train as train_cli
from ragsieve.errors import ConfigError, InputError, require_extra
from ragsieve.io import SUPPORTED

#: Every file type ``index`` reads, for the help text.
FORMATS = ", ".join(sorted(SUPPORTED))


def train_tagger(
    out: Annotated[Path, typer.Option("--out", help="Output folder for the trained model.")],
    data_dir: train_cli.DataOpt = None,
    seed: train_cli.SeedOpt = 13,
    device: train_cli.DeviceOpt = "cpu",
    threads: train_cli.ThreadsOpt = 2,
    time_limit: train_cli.TimeLimitOpt = None,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the training set.")] = 2,
    leave_out: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated sources to leave out (ablation): hotpot, hotpot_evidence, "
            "squad_train, qed, ircot, musique, qasper, msmarco."
        ),
    ] = None,
    teacher: Annotated[
        str,
        typer.Option(
            help="What the passage head is distilled from: none (as the shipped model was "
            "trained: its passage head learns from the labels alone) or reranker (the shipped "
            "cross-encoder, the earlier recipe)."
        ),
    ] = "none",
    as_json: Annotated[bool, typer.Option("--json", help="Print the training info.")] = False,
) -> None:
    """Train the evidence tagger from the shipped reranker on shared/data (fixed seed, CPU by
    default, resumable); writes int8 ONNX, config and a model card to --out."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from dataclasses import replace

    from ragsieve.data import find_data_dir
    from ragsieve.tag.fit.data import SOURCES, SourceSizes
    from ragsieve.tag.fit.train import TaggerTrainConfig, train

    names = [s.strip() for s in (leave_out or "").split(",") if s.strip()]
    for name in names:
        if name not in SOURCES:
            raise ConfigError(f"--leave-out: unknown source {name!r} (one of {', '.join(SOURCES)})")
    require_extra("train", "ragsieve train-tagger")
    opts = train_cli.run_options(seed, device, time_limit, threads)
    sizes = replace(SourceSizes(), **dict.fromkeys(names, 0))
    cfg = TaggerTrainConfig(epochs=epochs, leave_out=names, sizes=sizes, teacher=teacher)
    info = train(out, find_data_dir(data_dir), cfg, opts)
    done = info["train"]
    state = "done" if done["finished"] else train_cli.STOPPED
    line = (
        f"{state}: {done['steps']}/{done['scheduled_steps']} steps in {done['seconds']:.0f}s, "
        f"threshold {info['threshold']} -> {out}"
    )
    train_cli.report(info, as_json, lambda: line)


def prune_cmd(
    question: Annotated[str, typer.Argument(help="The question.")],
    passages: Annotated[
        list[Path],
        typer.Argument(
            help=f"Files, one passage each, read as index reads them ({FORMATS}; a .jsonl "
            "file: one per record; any other file: UTF-8 text titled by its name)."
        ),
    ],
    threshold: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="Keep threshold (default: model's).")
    ] = None,
    hops: Annotated[int, typer.Option(min=1, max=2, help="2: a second, bridge pass.")] = 2,
    passage_threshold: Annotated[
        float | None,
        typer.Option(
            min=0.0, max=1.0, help="Passage relevance a passage needs (default: model's; 0: off)."
        ),
    ] = None,
    model: Annotated[
        Path | None, typer.Option(help="A tagger folder (default: the shipped model).")
    ] = None,
    stack: Annotated[
        bool,
        typer.Option(
            help="Decide with the model's stacker (fitted on dev) where it has one; "
            "--no-stack: the raw keep probability."
        ),
    ] = True,
    open_point: Annotated[
        bool,
        typer.Option(
            "--open-point",
            help="The stacker's open point (chosen on dev with no budget): recall over precision.",
        ),
    ] = False,
    link: Annotated[
        bool,
        typer.Option(
            help="Keep the best sentence of a passage whose title a kept sentence names "
            "(the bridge entity's passage); --no-link: off."
        ),
    ] = True,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON: a row per kept sentence; the row holding the answer span has 'span'.",
        ),
    ] = False,
) -> None:
    """Keep the sentences of PASSAGES that answer QUESTION (the evidence tagger, no index)."""
    from ragsieve.api import prune

    items: list[tuple[str, str]] = []
    labels: list[str] = []
    for path in passages:
        for title, text, label in read_passages(path):
            items.append((title, text))
            labels.append(label)
    kept = prune(
        question,
        items,
        threshold=threshold,
        hops=hops,
        model=model,
        passage_threshold=passage_threshold,
        stack=stack,
        open_point=open_point,
        link=link,
    )
    if as_json:
        span = kept.span
        rows = [
            {
                "passage": labels[k.passage],
                "sentence": k.sentence,
                "text": k.text,
                "prob": round(k.prob, 4),
                "relevance": round(k.relevance, 4),
            }
            for k in kept
        ]
        for row, k in zip(rows, kept, strict=True):  # the answer span, on the row that holds it
            if span is not None and (k.passage, k.sentence) == (span.passage, span.sentence):
                row["span"] = {
                    "text": span.text,
                    "start": span.start,
                    "end": span.end,
                    "score": round(span.score, 4),
                }
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    for k in kept:
        typer.echo(f"{k.prob:.3f} [{Path(labels[k.passage]).name}] {' '.join(k.text.split())}")
    if kept.span is not None:  # the tagger's answer, inside a kept sentence
        s = kept.span
        typer.echo(f'span: "{s.text}" ({s.score:.2f}) [{Path(labels[s.passage]).name}]')


def read_passages(path: Path) -> list[tuple[str, str, str]]:
    """``(title, text, label)`` of each passage in one file ``prune`` is given, read by the
    readers of ``index`` (PDF, HTML and DOCX with their pages and headings, a .jsonl file one
    passage per record, labelled ``FILE#id``); a file of another type is read as UTF-8 text, as
    before. Every failure is a one-line :class:`InputError`."""
    from ragsieve.io import read_source

    if not path.is_file():
        raise InputError(f"{path}: not a file")
    if path.suffix.lower() not in SUPPORTED:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: not valid UTF-8 (byte {e.start}); convert it first") from e
        except OSError as e:
            raise InputError(f"cannot read {path}: {e.strerror or e}") from e
        if not text.strip():
            raise InputError(f"{path} is empty")
        return [(path.stem.replace("_", " "), text, str(path))]
    docs, _ = read_source(path, explicit=True)  # explicit: raises, never skips
    out = []
    for d in docs:
        # a file without a title of its own keeps prune's old one: its name, words spaced
        title = path.stem.replace("_", " ") if d.title == path.stem else d.title
        label = str(path) if len(docs) == 1 else f"{path}#{d.id.rsplit('#', 1)[-1]}"
        out.append((title, d.text, label))
    return out
