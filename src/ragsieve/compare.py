"""``ragsieve ask --compare``: one question through two methods with the same LLM, side by side.

The LLM is loaded and warmed before either clock starts, so the seconds are each method's own.
Every kept unit says where it sits (``page 3`` of a PDF, the heading above it), in the table
and in ``--json`` (``where`` per context item, the same shape as ``ask --json``), because the
table is where a user checks what each method kept.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

from ragsieve.explain import where_of

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.methods import Method
    from ragsieve.types import Answer

#: Kept units the table lists per method (the rest are counted); ``--json`` has them all.
TABLE_UNITS = 3

Row = tuple[str, "Answer", float]


def compare(
    question: str,
    pair: list[tuple[str, Method]],
    llm: Any,
    index: Index,
    *,
    max_tokens: int,
    total_budget: int | None,
    as_json: bool,
) -> None:
    """Answer ``question`` with both methods of ``pair`` and print them side by side (a table
    on the terminal, or JSON), with the ratio of their prompt tokens."""
    rows = run_pair(question, pair, llm, max_tokens=max_tokens, total_budget=total_budget)
    where = where_of(index, [s for _, a, _ in rows for s in a.context.chunks])
    if as_json:
        sys.stdout.write(
            json.dumps(compare_json(question, rows, where), ensure_ascii=False, indent=2) + "\n"
        )
    else:
        print_table(question, rows, where)


def run_pair(
    question: str,
    pair: list[tuple[str, Method]],
    llm: Any,
    *,
    max_tokens: int,
    total_budget: int | None,
) -> list[Row]:
    """``(label, answer, seconds)`` per method, the same LLM for both, warmed first."""
    # One tiny call first: the model's load and first-call warm-up belong to neither method.
    llm.generate([{"role": "user", "content": "Say OK."}], max_tokens=1, temperature=0.0)
    rows: list[Row] = []
    for label, method in pair:
        t0 = time.perf_counter()
        answer = method.ask(question, llm, max_tokens=max_tokens, total_budget=total_budget)
        rows.append((label, answer, time.perf_counter() - t0))
    return rows


def prompt_ratio(rows: list[Row]) -> float:
    """The first method's prompt tokens over the second's (0 when the second sent none)."""
    a, b = rows[0][1].usage.prompt_tokens, rows[1][1].usage.prompt_tokens
    return a / b if b else 0.0


def compare_json(question: str, rows: list[Row], where: dict[str, str]) -> dict[str, Any]:
    """Both answers as ``ask --json`` gives each (``where`` on every context item: its page or
    heading, ``""`` when the document has neither), with their seconds and token ratio."""
    answers = []
    for _, answer, seconds in rows:
        out = answer.to_json()
        for item in out["context"]:
            item["where"] = where.get(item["chunk_id"], "")
        answers.append({**out, "seconds": round(seconds, 3)})
    return {
        "question": question,
        "answers": answers,
        "prompt_token_ratio": round(prompt_ratio(rows), 2),
    }


def snippet(text: str, n: int = 160) -> str:
    """``text`` on one line, cut to ``n`` characters with an ellipsis."""
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def unit_label(chunk: Any, where: dict[str, str]) -> str:
    """``Harbour report (page 3)``: the document's title (or id) and where the unit sits."""
    name = chunk.title or chunk.doc_id
    at = where.get(chunk.id)
    return f"{name} ({at})" if at else name


def kept_cell(answer: Answer, where: dict[str, str]) -> str:
    """The table's "kept" cell: how many units, then the first few, each with its place."""
    chunks = answer.context.chunks
    one = bool(chunks) and all(s.chunk.sent_end - s.chunk.sent_start == 1 for s in chunks)
    word = "sentence" if one else "chunk"
    lines = [f"{len(chunks)} {word}{'' if len(chunks) == 1 else 's'}:"]
    for s in chunks[:TABLE_UNITS]:
        lines.append(f"- {unit_label(s.chunk, where)}: {snippet(s.chunk.text, 120)}")
    if len(chunks) > TABLE_UNITS:
        lines.append(f"(+{len(chunks) - TABLE_UNITS} more)")
    return "\n".join(lines)


def answer_cell(answer: Answer) -> str:
    """The table's "answer" cell: the line, or why it abstained (:attr:`Answer.line`)."""
    line = answer.line
    if line is not None and line.abstained:
        return f"(not answered: {line.why or 'the documents do not answer'})"
    return answer.text or "(empty)"


def print_table(question: str, rows: list[Row], where: dict[str, str]) -> None:
    """The side-by-side table on stdout (rich), then one line with the prompt-token ratio."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=question, title_justify="left", show_lines=True)
    table.add_column("")
    for label, _, _ in rows:
        table.add_column(label, overflow="fold")
    table.add_row("answer", *[answer_cell(x) for _, x, _ in rows])
    if any(x.span is not None for _, x, _ in rows):  # the tagger's extractive answer
        table.add_row("answer span", *[x.span.text if x.span else "-" for _, x, _ in rows])
    if any(x.reply is not None and x.reply != x.text for _, x, _ in rows):  # the span answered
        table.add_row("LLM reply", *[x.reply if x.reply is not None else "-" for _, x, _ in rows])
    table.add_row("context tokens", *[str(x.context.n_tokens) for _, x, _ in rows])
    table.add_row("prompt tokens", *[str(x.usage.prompt_tokens) for _, x, _ in rows])
    table.add_row("seconds", *[f"{t:.2f}" for _, _, t in rows])
    table.add_row("kept", *[kept_cell(x, where) for _, x, _ in rows])
    con = Console(width=max(100, Console().width), highlight=False)
    con.print(table, markup=False)
    (la, a, _), (lb, b, _) = rows
    con.print(
        f"{lb} sent {prompt_ratio(rows):.1f}x fewer prompt tokens than {la} "
        f"({b.usage.prompt_tokens} vs {a.usage.prompt_tokens}).",
        markup=False,
    )
