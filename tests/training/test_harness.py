"""The training harness on a small real network: seeded runs, a stop and a resume that end on
the same weights as an uninterrupted run, refused checkpoints, the device check, ONNX int8
export with per-channel scales, and the run record with data hashes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragsieve.errors import ConfigError, InputError
from ragsieve.training import (
    CHECKPOINT,
    Loop,
    RunOptions,
    begin,
    card_section,
    data_hashes,
    export_onnx,
    quantize_int8_per_channel,
    run_record,
    torch_device,
)

torch = pytest.importorskip("torch")


def _run(out: Path, opts: RunOptions, n_steps: int = 12, lr: float = 0.05) -> dict[str, Any]:
    """A small MLP with dropout (so that resuming must restore torch's RNG) fitting a fixed
    regression problem; the batch of step i is drawn from numpy's global generator (so that
    resuming must restore numpy's RNG too)."""
    begin(opts)
    net = torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(16, 1)
    )
    x = torch.randn(64, 8)
    y = x[:, :1] * 2 - x[:, 1:2]
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / n_steps)
    logs: list[str] = []
    loop = Loop(out, net, opt, n_steps, opts, {"lr": lr}, logs.append, sched, clip_norm=1.0)

    def loss_fn(step: int) -> Any:
        idx = torch.from_numpy(np.random.choice(64, 16, replace=False))
        loop.extra["seen"] = loop.extra.get("seen", 0) + 16
        return torch.nn.functional.mse_loss(net(x[idx].to(loop.device)), y[idx].to(loop.device))

    stats = loop.run(loss_fn)
    return {
        "stats": stats,
        "weights": [p.detach().clone() for p in net.parameters()],
        "logs": logs,
        "seen": loop.extra["seen"],
    }


def test_a_stopped_run_resumes_to_the_weights_of_an_uninterrupted_one(tmp_path: Path) -> None:
    whole = _run(tmp_path / "whole", RunOptions(seed=3))
    assert whole["stats"]["finished"] and whole["stats"]["steps"] == 12
    assert not (tmp_path / "whole" / CHECKPOINT).exists()  # deleted when finished
    assert whole["stats"]["final_loss_ema"] < whole["stats"]["first_loss"]

    out = tmp_path / "split"
    first = _run(out, RunOptions(seed=3, stop_after=5, checkpoint_every=2))
    assert not first["stats"]["finished"] and first["stats"]["steps"] == 5
    assert (out / CHECKPOINT).is_file()
    second = _run(out, RunOptions(seed=3))
    assert any("resuming at step 5/12" in m for m in second["logs"])
    assert second["stats"]["finished"] and second["stats"]["steps"] == 12
    assert second["seen"] == 12 * 16  # extra state travels with the checkpoint
    for a, b in zip(whole["weights"], second["weights"], strict=True):
        assert torch.equal(a, b)
    assert second["stats"]["final_loss_ema"] == whole["stats"]["final_loss_ema"]

    other = _run(tmp_path / "other", RunOptions(seed=4))
    assert not torch.equal(other["weights"][0], whole["weights"][0])  # the seed matters


def test_the_time_limit_stops_with_a_checkpoint(tmp_path: Path) -> None:
    stopped = _run(tmp_path, RunOptions(seed=1, time_limit_min=1e-9))
    assert stopped["stats"]["steps"] == 1 and not stopped["stats"]["finished"]
    assert any("time limit: stopped at step 1/12" in m for m in stopped["logs"])
    assert (tmp_path / CHECKPOINT).is_file()
    done = _run(tmp_path, RunOptions(seed=1))
    assert done["stats"]["finished"] and not (tmp_path / CHECKPOINT).exists()


def test_a_checkpoint_of_other_options_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, RunOptions(seed=1, stop_after=2))
    with pytest.raises(ConfigError, match="other training options"):
        _run(tmp_path, RunOptions(seed=1), lr=0.01)
    with pytest.raises(ConfigError, match="other training options"):
        _run(tmp_path, RunOptions(seed=2))


def test_device_names_are_checked() -> None:
    with pytest.raises(ConfigError, match="cpu or cuda"):
        RunOptions(device="tpu")
    assert torch_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match=r"--device cuda: torch .* sees no CUDA device"):
            torch_device("cuda")


def test_onnx_export_and_per_channel_int8(tmp_path: Path) -> None:
    import onnx
    import onnxruntime as ort

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Embedding(50, 32),
        torch.nn.Linear(32, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 3),
    )
    ids = torch.randint(0, 50, (2, 5))
    fp32, int8 = tmp_path / "m_fp32.onnx", tmp_path / "m.onnx"
    size = export_onnx(
        net,
        fp32,
        (ids,),
        ["ids"],
        ["out"],
        {"ids": {0: "batch", 1: "seq"}, "out": {0: "batch", 1: "seq"}},
    )
    assert size == fp32.stat().st_size > 0
    assert quantize_int8_per_channel(fp32, int8) == int8.stat().st_size
    # Per-channel: a MatMul weight has one scale per output column, not one for the tensor.
    scales = [i for i in onnx.load(str(int8)).graph.initializer if i.name.endswith("_scale")]
    assert any(list(s.dims) == [64] for s in scales)
    probe = torch.randint(0, 50, (3, 7))
    want = net(probe).detach().numpy()
    for path in (fp32, int8):
        got = ort.InferenceSession(str(path)).run(None, {"ids": probe.numpy()})[0]
        assert got.shape == (3, 7, 3)
        np.testing.assert_allclose(got, want, atol=1e-4 if path == fp32 else 0.05)


def test_run_record_hashes_every_data_file(shared_data: Path) -> None:
    import hashlib

    rel = "msmarco/msmarco_dev_small_eng_query_positive.json"
    hashes = data_hashes(shared_data, [rel, rel])
    assert hashes == {rel: hashlib.sha256((shared_data / rel).read_bytes()).hexdigest()}
    with pytest.raises(InputError, match="not found"):
        data_hashes(shared_data, ["no/such/file.json"])
    stats = {
        "steps": 3,
        "scheduled_steps": 4,
        "finished": False,
        "seconds": 1.0,
        "final_loss_ema": 0.5,
    }
    record = run_record(RunOptions(seed=7, command="ragsieve train-x"), stats, hashes)
    assert record["seed"] == 7 and record["device"] == "cpu"
    assert record["torch"] == torch.__version__
    card = card_section(record)
    assert hashes[rel] in card and "stopped early" in card and "`ragsieve train-x`" in card
    # the command a trainer's options carry, else this process's
    assert run_record(RunOptions(command="ragsieve train-y"), stats, hashes)["command"] == (
        "ragsieve train-y"
    )
    assert run_record(RunOptions(), stats, hashes)["command"].startswith("ragsieve ")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_runs_resume_and_export(tmp_path: Path) -> None:
    """On a GPU machine: the loop trains on CUDA, a stopped run resumes (CUDA's RNG state
    travels with the checkpoint) and the trained model exports from the GPU."""
    whole = _run(tmp_path / "whole", RunOptions(seed=3, device="cuda"))
    assert whole["stats"]["device"].startswith("cuda") and whole["weights"][0].is_cuda
    _run(tmp_path / "split", RunOptions(seed=3, device="cuda", stop_after=5))
    second = _run(tmp_path / "split", RunOptions(seed=3, device="cuda"))
    for a, b in zip(whole["weights"], second["weights"], strict=True):
        torch.testing.assert_close(a, b)
    record = run_record(RunOptions(device="cuda"), whole["stats"], {})
    assert record["device"].startswith("cuda (")
    net = torch.nn.Linear(4, 2).to("cuda")
    size = export_onnx(net, tmp_path / "m.onnx", (torch.ones(1, 4),), ["x"], ["y"], {})
    assert size > 0
