"""Edits of the tagger's ONNX graph around its passage head.

The passage head is one linear layer over the mean-pooled last hidden state (384 numbers). Its
weights were learned with a distillation term towards the cross-encoder, which cannot tell a
HotpotQA distractor from evidence, and a logistic regression on the head's own input separates
them far better (docs/tagger.md: dev AUC on the bridge hop's readings). So
the head can be read (:func:`with_pooled_output`) and replaced (:func:`replace_passage_head`)
without touching the encoder: a refit on the CPU in minutes (``ragsieve.tag.fit.head``).

The span head (:mod:`ragsieve.tag.span`) reads the token head's input, the last hidden state
per word piece: :func:`with_hidden_output` exposes it for a fit on frozen features
(``ragsieve.tag.fit.span``) and :func:`add_span_head` writes ``span_logits`` (start and end
logits per word piece) beside the other outputs, which stay bit-identical.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.embed.graph import live_nodes
from ragsieve.errors import ConfigError
from ragsieve.tag.span import SPAN_HEAD, SPAN_OUTPUT

PASSAGE_OUTPUT = "passage_logit"
TOKEN_OUTPUT = "token_logits"


def _first_before(graph: Any, output: str, ops: tuple[str, ...], what: str) -> Any:
    """Walking back breadth-first from ``output``, the first node whose type is in ``ops``: how
    both heads find their input in the fp32 and int8 exports. Raises :class:`ConfigError`
    naming ``what`` for a graph without one (not a tagger)."""
    producer = {o: n for n in graph.node for o in n.output}
    todo, seen = [output], set()
    while todo:
        node = producer.get(todo.pop(0))
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.op_type in ops:
            return node
        todo += list(node.input)
    raise ConfigError(f"no {what} before {output!r}: not a tagger graph")


def _with_output(model: Path, find: Callable[[Any], str]) -> tuple[bytes, str]:
    """The serialised graph of ``model`` with the tensor ``find`` names as one more output, and
    that name. Every other output is bit-identical (tests/tag/test_graph.py)."""
    import onnx

    m = onnx.load(str(model))
    name = find(m.graph)
    m.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    return bytes(m.SerializeToString()), name


def pooled_tensor(graph: Any) -> str:
    """The passage head's input: walking back from ``passage_logit``, the first ``Div`` (the
    mean pooling's division by the token count), as both the fp32 and the int8 export write it.
    Raises :class:`ConfigError` for a graph without one (not a tagger)."""
    return str(_first_before(graph, PASSAGE_OUTPUT, ("Div",), "mean-pooled state").output[0])


def with_pooled_output(model: Path) -> tuple[bytes, str]:
    """The serialised graph of ``model`` with the passage head's input as one more output, and
    that output's name. Every other output is bit-identical (tests/tag/test_graph.py)."""
    return _with_output(model, pooled_tensor)


def replace_passage_head(model: Path, out: Path, weight: np.ndarray, bias: float) -> None:
    """Write ``model`` to ``out`` with ``passage_logit = pooled @ weight + bias`` (fp32: one
    384-number dot product) in place of the old head, whose nodes and weights are dropped."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(model))
    g = m.graph
    pooled = pooled_tensor(g)
    squeeze = next(n for n in g.node if PASSAGE_OUTPUT in n.output)
    head_out = squeeze.input[0]
    w = np.asarray(weight, dtype=np.float32).reshape(-1, 1)
    inits = [
        numpy_helper.from_array(w, "refit_passage_head.weight"),
        numpy_helper.from_array(np.asarray([bias], dtype=np.float32), "refit_passage_head.bias"),
    ]
    new = [
        helper.make_node("MatMul", [pooled, inits[0].name], ["refit_passage_head.mm"], "refit_mm"),
        helper.make_node("Add", ["refit_passage_head.mm", inits[1].name], [head_out], "refit_add"),
    ]
    nodes = [n for n in g.node if head_out not in n.output]
    at = next(i for i, n in enumerate(nodes) if n is squeeze)
    nodes[at:at] = new
    nodes = live_nodes(nodes, {o.name for o in g.output})  # the old head's nodes feed nothing
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept + inits)
    tmp = out.with_name(out.name + ".tmp")
    onnx.save(m, str(tmp))
    tmp.replace(out)


def hidden_tensor(graph: Any) -> str:
    """The token head's input, the last hidden state (``[batch, pieces, 384]``): walking back
    from ``token_logits``, the input of the first ``MatMul`` (fp32 export) or
    ``DynamicQuantizeLinear`` (int8 export). Raises :class:`ConfigError` for a graph without
    one (not a tagger)."""
    ops = ("MatMul", "DynamicQuantizeLinear")
    return str(_first_before(graph, TOKEN_OUTPUT, ops, "hidden state").input[0])


def with_hidden_output(model: Path) -> tuple[bytes, str]:
    """As :func:`with_pooled_output`, with the last hidden state as the one more output."""
    return _with_output(model, hidden_tensor)


def has_span_output(model: Path) -> bool:
    """Whether the graph at ``model`` has the ``span_logits`` output (reads only the graph's
    outputs, not its weights)."""
    import onnx

    m = onnx.load(str(model), load_external_data=False)
    return any(o.name == SPAN_OUTPUT for o in m.graph.output)


def add_span_head(model: Path, out: Path, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Write ``model`` to ``out`` with ``span_logits = f(hidden)``: ``layers`` are fp32
    ``(weight, bias)`` pairs applied in turn to the last hidden state, a ReLU between two
    (one pair: ``hidden @ W + b``, ``W`` 384 x 2). A span head already there is replaced;
    every other output is bit-identical. Written beside ``out`` and moved in."""
    import onnx
    from onnx import helper, numpy_helper

    if not layers or np.asarray(layers[-1][0]).shape[-1] != 2:
        raise ConfigError("a span head ends in 2 outputs (start and end logits)")
    m = onnx.load(str(model))
    g = m.graph
    hidden = hidden_tensor(g)
    _drop_span(g)
    nodes, inits = list(g.node), list(g.initializer)
    x = hidden
    for k, (w, b) in enumerate(layers):
        last = k == len(layers) - 1
        wn, bn = f"{SPAN_HEAD}{k}.weight", f"{SPAN_HEAD}{k}.bias"
        inits += [
            numpy_helper.from_array(np.asarray(w, dtype=np.float32), wn),
            numpy_helper.from_array(np.asarray(b, dtype=np.float32).reshape(-1), bn),
        ]
        mm, add = f"{SPAN_HEAD}{k}.mm", SPAN_OUTPUT if last else f"{SPAN_HEAD}{k}.add"
        nodes.append(helper.make_node("MatMul", [x, wn], [mm], f"{SPAN_HEAD}{k}.MatMul"))
        nodes.append(helper.make_node("Add", [mm, bn], [add], f"{SPAN_HEAD}{k}.Add"))
        x = add
        if not last:
            x = f"{SPAN_HEAD}{k}.relu"
            nodes.append(helper.make_node("Relu", [add], [x], f"{SPAN_HEAD}{k}.Relu"))
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(inits)
    g.output.append(helper.make_tensor_value_info(SPAN_OUTPUT, onnx.TensorProto.FLOAT, None))
    _save(m, out)


def drop_span_head(model: Path, out: Path) -> None:
    """Write ``model`` to ``out`` without its span head (a folder as it was before one was
    fitted); every other output is bit-identical."""
    import onnx

    m = onnx.load(str(model))
    _drop_span(m.graph)
    _save(m, out)


def _drop_span(g: Any) -> None:
    """Remove the ``span_logits`` output and the nodes and weights that only it used."""
    keep_out = [o for o in g.output if o.name != SPAN_OUTPUT]
    nodes = [n for n in g.node if not n.name.startswith(SPAN_HEAD)]
    nodes = live_nodes(nodes, {o.name for o in keep_out})
    used = {i for n in nodes for i in n.input}
    inits = [i for i in g.initializer if i.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(inits)
    del g.output[:]
    g.output.extend(keep_out)


def _save(m: Any, out: Path) -> None:
    """Write ``m`` beside ``out`` and move it in (a failed write leaves ``out`` as it was)."""
    import onnx

    tmp = out.with_name(out.name + ".tmp")
    onnx.save(m, str(tmp))
    tmp.replace(out)
