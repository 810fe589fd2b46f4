"""The tagger's network and its weights: MiniLM with a token head and a passage head
(:func:`build_net`), its start from the shipped reranker's int8 weights
(:func:`onnx_state_dict`), the weights a fit hands back (:func:`save_weights`,
:func:`load_weights`) and its ONNX export (:func:`export_model`).

The recipe that trains it is :mod:`ragsieve.tag.fit.recipe`; the steps of a run,
:mod:`ragsieve.tag.fit.train`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError, InputError
from ragsieve.tag.span import SPAN_HEAD, SPAN_OUTPUT
from ragsieve.training.minilm import MINILM_L6, export_minilm, mean_pool


def build_net(base: Path | None = None) -> Any:
    """MiniLM + token head + passage head + span head; ``forward`` returns (token logits,
    passage logit, span logits: start and end per word piece).
    ``base``: a folder to load the bi-encoder weights from; None: MiniLM-L6's architecture
    with untrained weights (to be filled by :func:`onnx_state_dict`)."""
    import torch
    from transformers import AutoModel, BertConfig, BertModel

    class TaggerNet(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert
            self.token_head = torch.nn.Linear(bert.config.hidden_size, 1)
            self.passage_head = torch.nn.Linear(bert.config.hidden_size, 1)
            self.span_head = torch.nn.Linear(bert.config.hidden_size, 2)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            h = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            pooled = mean_pool(h, attention_mask)
            tok = self.token_head(h).squeeze(-1)
            passage = self.passage_head(pooled).squeeze(-1)
            if self.span_head is None:  # weights from before the span head
                return tok, passage
            return tok, passage, self.span_head(h)

    if base is None:
        bert = BertModel(BertConfig(**MINILM_L6), add_pooling_layer=False)
    else:
        bert = AutoModel.from_pretrained(str(base), add_pooling_layer=False)
    return TaggerNet(bert)


def onnx_state_dict(path: Path, head: str = "passage_head") -> dict[str, Any]:
    """Every weight of an int8 ONNX MiniLM cross-encoder or tagger as a state dict of
    :func:`build_net`'s network: each int8 tensor becomes ``(q - zero_point) * scale`` (per
    tensor or per output channel), MatMul weights are matched to their layers by the named bias
    each one feeds (and transposed to torch's layout), LayerNorms and biases are copied. The
    reranker's head (``head.*``) becomes ``head`` (the passage head).

    Provence starts its pruner from a trained reranker, so that the encoder already reads the
    question against the passage; ours is the shipped MiniLM cross-encoder (same backbone, same
    ``[CLS] question [SEP] passage [SEP]`` input, same mean-pooled head). Only its int8 ONNX
    ships, so the start is its int8 weights exactly as inference uses them, and the frozen word
    embeddings stay on the int8 grid they are exported to. The same function reads the
    reranker as the passage head's teacher."""
    import onnx
    import torch
    from onnx import numpy_helper

    model = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}

    def deq(name: str) -> np.ndarray:
        q = init[f"{name}_quantized"].astype(np.float32)
        zp = init[f"{name}_zero_point"].astype(np.float32)
        return (q - zp) * init[f"{name}_scale"].astype(np.float32)

    users: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for i in node.input:
            users.setdefault(i, []).append(node)

    def rename(name: str) -> str:
        return head + name[len("head") :] if name.startswith("head.") else name

    state: dict[str, Any] = {}
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        frontier, bias = list(node.output), None
        while frontier and bias is None:
            for user in users.get(frontier.pop(0), []):
                named = [i for i in user.input if i in init and i.endswith(".bias")]
                if user.op_type == "Add" and named:
                    bias = named[0]
                    break
                frontier += list(user.output)
        if bias is None:
            raise ConfigError(f"{path}: a quantised MatMul feeds no named bias")
        w = deq(node.input[1][: -len("_quantized")]).T
        state[rename(bias[: -len("bias")] + "weight")] = torch.from_numpy(np.ascontiguousarray(w))
    for name in [n for n in init if n.endswith("_quantized")]:
        base = name[: -len("_quantized")]
        if base.endswith(".weight_Transposed"):  # a head quantised through DequantizeLinear
            w = deq(base).T
            state[rename(base[: -len("_Transposed")])] = torch.from_numpy(np.ascontiguousarray(w))
        elif base.endswith(".weight") and "embeddings" in base:
            state[rename(base)] = torch.from_numpy(deq(base))
        elif base.endswith(".weight"):  # a head quantised without transposition
            state[rename(base)] = torch.from_numpy(np.ascontiguousarray(deq(base).T))
    for name, value in init.items():
        # an added span head's layers (``span_head.0.*``) are read below; a jointly trained
        # one's bias (``span_head.bias``) is the network's own, as its weight above
        added = name.startswith(SPAN_HEAD) and name[len(SPAN_HEAD) : len(SPAN_HEAD) + 1].isdigit()
        if name.endswith((".bias", "LayerNorm.weight")) and not (
            name.startswith("onnx::") or added
        ):
            state[rename(name)] = torch.from_numpy(np.array(value, dtype=np.float32).reshape(-1))
    # A span head added to a trained graph (``graph.add_span_head``: fp32 ``span_head.0.*``,
    # ``hidden @ W + b``) is the network's span head when it is one linear layer; an MLP head
    # has no place in this network and is left out.
    if f"{SPAN_HEAD}0.weight" in init and f"{SPAN_HEAD}1.weight" not in init:
        w = np.asarray(init[f"{SPAN_HEAD}0.weight"], dtype=np.float32).T
        state[f"{SPAN_HEAD}weight"] = torch.from_numpy(np.ascontiguousarray(w))
        b = np.asarray(init[f"{SPAN_HEAD}0.bias"], dtype=np.float32).reshape(-1)
        state[f"{SPAN_HEAD}bias"] = torch.from_numpy(b)
    return state


def reranker_weights() -> dict[str, Any]:
    """The shipped reranker's int8 weights as a tagger state dict (:func:`onnx_state_dict`)."""
    from ragsieve.rerank.cross_encoder import shipped_model_dir

    return onnx_state_dict(shipped_model_dir() / "model.onnx")


def sentence_logits_torch(token_logits: Any, sentence_of: Any, n: int) -> Any:
    """Mean token logit per sentence: [B, n] (0 where a sentence has no word piece)."""
    import torch

    steps = torch.arange(n, device=sentence_of.device).view(1, 1, n)
    onehot = (sentence_of.unsqueeze(-1) == steps).to(token_logits.dtype)
    total = (token_logits.unsqueeze(-1) * onehot).sum(dim=1)
    return total / onehot.sum(dim=1).clamp(min=1.0)


def tokenizer_path() -> Path:
    """The MiniLM WordPiece tokenizer, as shipped beside the tagger (the base package's
    file, copied): training needs no base package."""
    from ragsieve.tag.model import shipped_model_dir

    return shipped_model_dir() / "tokenizer.json"


#: Left out of saved weights when the run froze it: it is the reranker's, as it started.
FROZEN = "bert.embeddings.word_embeddings.weight"


def save_weights(net: Any, out_dir: Path, part_mb: int = 15) -> list[str]:
    """The network's trained weights in fp16 (the frozen word embeddings left out), in parts
    of at most ``part_mb`` MB (what a GPU lease can hand back); :func:`load_weights` joins
    them."""
    import io

    import torch

    frozen = {n for n, p in net.named_parameters() if not p.requires_grad}
    state = {k: v.detach().to("cpu", torch.float16) for k, v in net.state_dict().items()}
    buf = io.BytesIO()
    torch.save({k: v for k, v in state.items() if k not in frozen}, buf)
    data = buf.getvalue()
    out_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for i, start in enumerate(range(0, len(data), part_mb << 20)):
        name = f"weights.part{i}"
        (out_dir / name).write_bytes(data[start : start + (part_mb << 20)])
        names.append(name)
    return names


def load_weights(folder: Path) -> Any:
    """A network from :func:`save_weights`' parts, in fp32."""
    import io

    import torch

    parts = sorted(folder.glob("weights.part*"), key=lambda p: int(p.name[len("weights.part") :]))
    if not parts:
        raise InputError(f"{folder}: no weights.part* files")
    state = torch.load(io.BytesIO(b"".join(p.read_bytes() for p in parts)), map_location="cpu")
    if FROZEN not in state:
        state[FROZEN] = reranker_weights()[FROZEN]
    net = build_net()
    missing, unexpected = net.load_state_dict({k: v.float() for k, v in state.items()}, False)
    if unexpected or [k for k in missing if not k.startswith(SPAN_HEAD)]:
        raise InputError(f"{folder}: weights do not fit the tagger ({missing or unexpected})")
    if missing:  # weights trained before the span head: export without it
        net.span_head = None
    return net.eval()


def export_model(net: Any, out_dir: Path, quantize: bool = True) -> dict[str, int]:
    """``model_fp32.onnx`` and (``quantize``) ``model.onnx``: the harness's int8 build with
    per-output-channel scales (:func:`~ragsieve.training.minilm.export_minilm`). Returns the
    files' sizes."""
    outputs = {"token_logits": {0: "batch", 1: "seq"}, "passage_logit": {0: "batch"}}
    if getattr(net, "span_head", None) is not None:
        outputs[SPAN_OUTPUT] = {0: "batch", 1: "seq"}
    return export_minilm(net, out_dir, outputs, quantize)
