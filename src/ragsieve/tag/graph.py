"""Edits of the tagger's ONNX graph around its passage head.

The passage head is one linear layer over the mean-pooled last hidden state (384 numbers). Its
weights were learned with a distillation term towards the cross-encoder, which cannot tell a
HotpotQA distractor from evidence, and a logistic regression on the head's own input separates
them far better (issue 31, stop 41: dev AUC 0.678 -> 0.822 on the bridge hop's readings). So
the head can be read (:func:`with_pooled_output`) and replaced (:func:`replace_passage_head`)
without touching the encoder: a refit on the CPU in minutes (``ragsieve.tag.fit_head``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.embed.graph import live_nodes
from ragsieve.errors import ConfigError

PASSAGE_OUTPUT = "passage_logit"


def pooled_tensor(graph: Any) -> str:
    """The passage head's input: walking back from ``passage_logit``, the first ``Div`` (the
    mean pooling's division by the token count), as both the fp32 and the int8 export write it.
    Raises :class:`ConfigError` for a graph without one (not a tagger)."""
    producer = {o: n for n in graph.node for o in n.output}
    todo, seen = [PASSAGE_OUTPUT], set()
    while todo:
        node = producer.get(todo.pop(0))
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.op_type == "Div":
            return str(node.output[0])
        todo += list(node.input)
    raise ConfigError(f"no mean-pooled state before {PASSAGE_OUTPUT!r}: not a tagger graph")


def with_pooled_output(model: Path) -> tuple[bytes, str]:
    """The serialised graph of ``model`` with the passage head's input as one more output, and
    that output's name. Every other output is bit-identical (tests/tag/test_graph.py)."""
    import onnx

    m = onnx.load(str(model))
    name = pooled_tensor(m.graph)
    m.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    return bytes(m.SerializeToString()), name


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
