"""The optimiser and schedule of every MiniLM fine-tune here: AdamW, linear warm-up and decay."""

from __future__ import annotations

from typing import Any


def adamw_warmup(
    bert: Any,
    heads: list[Any],
    lr: float,
    head_lr: float,
    weight_decay: float,
    warmup: float,
    n_steps: int,
) -> tuple[Any, Any]:
    """AdamW over ``bert``'s trainable weights (no decay on biases and LayerNorms) and the new
    ``heads`` (their own rate), with linear warm-up over ``warmup`` x ``n_steps`` and linear
    decay to 0. Returns ``(optimizer, scheduler)``."""
    import torch

    named = [(n, p) for n, p in bert.named_parameters() if p.requires_grad]
    plain = [p for n, p in named if n.endswith("bias") or "LayerNorm" in n]
    decayed = [p for n, p in named if not (n.endswith("bias") or "LayerNorm" in n)]
    opt = torch.optim.AdamW(
        [
            {"params": decayed, "lr": lr, "weight_decay": weight_decay},
            {"params": plain, "lr": lr, "weight_decay": 0.0},
            {"params": heads, "lr": head_lr, "weight_decay": 0.0},
        ]
    )
    warm = max(1, int(warmup * n_steps))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (n_steps - step) / max(1, n_steps - warm))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)
