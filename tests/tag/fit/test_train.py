"""The tagger's training on real data from ``shared/data``: the splits keep every benchmark
question out, whole-passage and second-hop negatives stay 0, windows of 1-10 sentences keep
their gold, the example file round-trips, a time-limited run resumes through the training
harness to the uninterrupted run's weights and exports an int8 model the inference class
loads, and the shipped model's weights read back into torch score as its ONNX file does."""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run

from ragsieve.data import sha256_file
from ragsieve.tag.fit.data import (
    HOTPOT_DISTRACTOR,
    HOTPOT_DISTRACTOR_495,
    IRCOT_HELD_OUT,
    QED_FILES,
    SOURCE_FILES,
    SQUAD_TRAIN,
    UNKNOWN,
    Example,
    SourceSizes,
    build_examples,
    dedupe,
    detokenize_nq,
    load_examples,
    save_examples,
    vary_lengths,
)
from ragsieve.tag.model import OnnxTagger, shipped_model_dir
from ragsieve.training import CHECKPOINT, RunOptions

pytestmark = pytest.mark.integration
torch = pytest.importorskip("torch")

TINY = SourceSizes(
    hotpot=1,
    hotpot_evidence=4,
    squad_train=3,
    qed=3,
    ircot=2,
    musique=2,
    qasper=2,
    msmarco=3,
)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def examples(shared_data: Path) -> list[Example]:
    return build_examples(shared_data, TINY, 13)


def test_splits_never_read_a_benchmark_question(shared_data: Path, examples: list[Example]) -> None:
    questions = {_norm(e.question) for e in examples}
    amor = _jsonl(shared_data / "hotpotqa/hotpot_dev_sample100_amor_withretrieval.jsonl")
    assert len(amor) == 100 and not {_norm(r["question"]) for r in amor} & questions
    ircot = _jsonl(shared_data / "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl")
    held = {_norm(ircot[i]["question_text"]) for i in IRCOT_HELD_OUT}
    assert len(held) == 200 and not held & questions
    squad_dev = json.loads((shared_data / "squad/dev-v1.1.json").read_text("utf-8"))["data"]
    dev_q = {_norm(qa["question"]) for a in squad_dev for p in a["paragraphs"] for qa in p["qas"]}
    assert len(dev_q) > 10_000  # every article: SQuAD dev is a test set entirely
    # 8 of SQuAD train's 87,599 questions ("What does AC stand for?") have the words of a dev
    # question; they come from other articles, so the only match allowed is such a question
    # asked of a SQuAD train paragraph
    train_q = {_norm(q) for q in _squad_answers(shared_data)}
    same_words = [e for e in examples if _norm(e.question) in dev_q]
    assert all(e.source == "squad_train" and _norm(e.question) in train_q for e in same_words)
    dev_paragraphs = {_norm(p["context"]) for a in squad_dev for p in a["paragraphs"]}
    assert not {_norm(" ".join(e.sentences)) for e in examples} & dev_paragraphs
    by_source: dict[str, set[str]] = {}
    for e in examples:
        by_source.setdefault(e.source, set()).add(e.split)
        assert len(e.labels) == len(e.sentences) > 0
        assert set(e.labels) <= {UNKNOWN, 0, 1} and e.passage_label in (0, 1)
    assert set(by_source) == set(SOURCE_FILES)
    for source in ("hotpot", "squad_train", "qed"):  # the dev split the threshold is chosen on
        assert by_source[source] == {"train", "dev"}


def _squad_answers(shared_data: Path) -> dict[str, set[str]]:
    data = json.loads((shared_data / SQUAD_TRAIN).read_text("utf-8"))["data"]
    out: dict[str, set[str]] = {}
    for a in data:
        for p in a["paragraphs"]:
            for qa in p["qas"]:
                out.setdefault(qa["question"].strip(), set()).add(qa["answers"][0]["text"])
    return out


def _qed_answers(shared_data: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for rel in QED_FILES:
        for r in _jsonl(shared_data / rel):
            q = r["question_text"].strip()
            q = q[0].upper() + q[1:] + ("" if q.endswith("?") else "?")
            out.setdefault(q, set()).update(detokenize_nq(a) for a in r.get("answer_text") or [])
    return out


def test_whole_passage_negatives_are_zero_and_never_hold_the_answer(
    shared_data: Path, examples: list[Example]
) -> None:
    answers = {"squad_train": _squad_answers(shared_data), "qed": _qed_answers(shared_data)}
    for source, by_question in answers.items():
        mine = [e for e in examples if e.source == source]
        negatives = [e for e in mine if e.passage_label == 0]
        assert len(negatives) >= 3 * len([e for e in mine if e.passage_label == 1])
        assert all(set(e.labels) == {0} for e in negatives)
        first_hop = [e for e in negatives if len(by_question.get(e.question, ())) == 1]
        assert len(first_hop) > 100
        for e in first_hop:
            (answer,) = by_question[e.question]
            assert _norm(answer) not in _norm(" ".join(e.sentences)), (source, e.question)
        # one question in six reads two negatives again with its gold sentences joined
        second_hop = [e for e in negatives if e.question not in by_question]
        assert second_hop and all(e.passage_label == 0 for e in second_hop)


def test_second_hop_hotpot_examples_keep_distractors_at_zero(
    shared_data: Path, examples: list[Example]
) -> None:
    gold: dict[str, set[str]] = {}
    for rel in (HOTPOT_DISTRACTOR, HOTPOT_DISTRACTOR_495):
        for obj in json.loads((shared_data / rel).read_text("utf-8")):
            gold[obj["question"].strip()] = {t for t, _ in obj["supporting_facts"]}
    hotpot = [e for e in examples if e.source == "hotpot"]
    hops = [e for e in hotpot if e.question not in gold]
    assert len(hops) > len(hotpot) / 3
    kept_gold = 0
    for e in hops:
        first = next(q for q in gold if e.question.startswith(q + " "))
        if e.title in gold[first]:
            kept_gold += any(e.labels)
        else:
            assert set(e.labels) == {0} and e.passage_label == 0
    assert kept_gold > 0  # the other gold paragraph keeps its labels


def test_vary_lengths_keeps_a_gold_sentence_in_every_positive_window(
    examples: list[Example],
) -> None:
    varied = vary_lengths(examples, random.Random(5), rate=1.0)
    assert len(varied) == len(examples)
    cut = 0
    for before, after in zip(examples, varied, strict=True):
        if after is before:
            assert len(before.sentences) < 3 or UNKNOWN in before.labels
            continue
        cut += 1
        assert 1 <= len(after.sentences) <= 10 and len(after.sentences) < len(before.sentences)
        assert len(after.labels) == len(after.sentences)
        assert " ".join(after.sentences) in " ".join(before.sentences)
        if 1 in before.labels:
            assert 1 in after.labels and after.passage_label == 1
        else:
            assert set(after.labels) == {0} and after.passage_label == before.passage_label
    assert cut > len(examples) / 2


def test_positives_carry_the_answer_their_gold_sentence_spells(examples: list[Example]) -> None:
    """The span head's target: a positive passage keeps the answer text where a gold sentence
    (or, for paragraph gold, any sentence) holds it; negatives and yes/no answers carry none."""
    from ragsieve.tag.fit.data import with_answer

    with_ans = [e for e in examples if e.answer]
    assert {e.source for e in with_ans} >= {"squad_train", "qed", "hotpot"}
    for ex in with_ans:
        assert ex.passage_label == 1
        held = [s for s, y in zip(ex.sentences, ex.labels, strict=True) if y in (1, UNKNOWN)]
        assert any(ex.answer.lower() in s.lower() for s in held)
    assert not any(e.answer for e in examples if e.passage_label == 0)
    assert with_answer("yes", ["Yes, it is."], [1]) == ""
    assert with_answer("Paris", ["Paris is big.", "Rome."], [0, 1]) == ""
    assert with_answer("Paris", ["Paris is big.", "Rome."], [1, 0]) == "Paris"


def test_the_answer_is_found_in_the_window_word_pieces(examples: list[Example]) -> None:
    """:func:`find_answer` gives the answer's first and last word piece inside a gold sentence,
    which decode back to the answer text; a sentence not allowed is not searched."""
    from ragsieve.tag.encode import PassageEncoder, find_answer, load_tokenizer

    enc = PassageEncoder(load_tokenizer(shipped_model_dir() / "tokenizer.json"), 256)
    found = 0
    for ex in [e for e in examples if e.answer][:20]:
        window = enc.windows(ex.question, [(ex.title, ex.sentences)])[0]
        gold = {i for i, y in enumerate(ex.labels) if y in (1, UNKNOWN)}
        answer = enc.tok.encode(ex.answer, add_special_tokens=False).ids
        span = find_answer(window, answer, gold)
        if span is None:  # the gold sentence fell outside the first window
            continue
        found += 1
        a, b = span
        assert window.sentence_of[a] in gold and window.ids[a : b + 1] == answer
        assert find_answer(window, answer, set()) is None
    assert found >= 10


def test_junk_lines_are_inserted_at_zero_and_spare_unknown_labels(
    examples: list[Example],
) -> None:
    """Layout lines (issue 44 item 3) go into sentence-labelled passages at label 0, leave the
    passage label, gold sentences and answer as they were, and never touch paragraph gold."""
    import random

    from ragsieve.tag.fit.junk import add_junk
    from ragsieve.text import has_words

    out = add_junk(examples, random.Random(3), 1.0)
    assert len(out) == len(examples)
    changed = 0
    for before, after in zip(examples, out, strict=True):
        if UNKNOWN in before.labels:
            assert after == before
            continue
        extra = len(after.sentences) - len(before.sentences)
        assert 1 <= extra <= 2 and sum(after.labels) == sum(before.labels)
        kept = [s for s in after.sentences if s not in before.sentences]
        assert all(y == 0 for s, y in zip(after.sentences, after.labels, strict=True) if s in kept)
        assert (after.passage_label, after.answer) == (before.passage_label, before.answer)
        changed += 1
        # a line of layout: no words, a short label, or a running head naming the title
        assert all(not has_words(s) or len(s.split()) <= 5 or before.title in s for s in kept)
    assert changed > 10


def test_unanswerable_windows_train_the_span_head_towards_cls(examples: list[Example]) -> None:
    """``null_span_weight``: negative windows add a start/end cross-entropy whose target is
    the [CLS] piece, and only that term moves the [CLS] span logits of a negative window."""
    from ragsieve.tag.encode import PassageEncoder, load_tokenizer
    from ragsieve.tag.fit.net import build_net, tokenizer_path
    from ragsieve.tag.fit.recipe import TaggerTrainConfig, _items, _tensors, batch_loss

    enc = PassageEncoder(load_tokenizer(tokenizer_path()), 128)
    items = _items(enc, examples)
    batch = [it for it in items if it.passage_label == 0][:3]
    batch += [it for it in items if it.span[0] >= 0][:3]
    assert len(batch) == 6
    t = _tensors(enc, batch)
    torch.manual_seed(0)
    net = build_net()
    losses, grads = [], []
    for weight in (0.0, 0.5):
        net.zero_grad()
        loss = batch_loss(net, t, TaggerTrainConfig(null_span_weight=weight))
        loss.backward()
        losses.append(float(loss.detach()))
        grads.append(net.span_head.weight.grad.clone())
    assert losses[1] > losses[0] > 0
    assert not torch.allclose(grads[0], grads[1])


def test_dedupe_and_the_saved_example_file(tmp_path: Path, examples: list[Example]) -> None:
    sample = examples[::20]
    twice = sample + [
        Example(f"  {e.question.lower()} ", e.title, e.sentences, e.labels, 0, "x") for e in sample
    ]
    assert dedupe(twice) == dedupe(sample)
    unique = dedupe(sample)
    assert {e.source for e in unique} == {e.source for e in sample}
    path = tmp_path / "examples.jsonl.xz"
    save_examples(path, unique)
    assert load_examples(path) == unique


def test_a_time_limited_run_resumes_through_the_harness_and_exports(
    shared_data: Path, tmp_path: Path
) -> None:
    """Through :func:`train`, as ``train-tagger`` runs it. (That a resumed run ends on the
    uninterrupted run's weights, bit for bit, is the harness's loop: tests/training.)"""
    from ragsieve.tag.fit.card import DEV_THRESHOLDS, set_operating_point
    from ragsieve.tag.fit.train import TaggerTrainConfig, train

    cfg = TaggerTrainConfig(
        sizes=TINY,
        batch_size=4,
        max_length=128,
        hotpot_repeat=1,
        dev_per_source=3,
        null_span_weight=0.5,
    )
    out = tmp_path / "tagger"
    limited = RunOptions(
        seed=13, threads=2, time_limit_min=1e-4, checkpoint_every=1, log=lambda m: None
    )
    stopped = train(out, shared_data, cfg, opts=limited)
    assert not stopped["train"]["finished"] and (out / CHECKPOINT).is_file()
    assert "stopped early" in (out / "MODEL_CARD.md").read_text("utf-8")
    done = stopped["train"]["steps"]

    logs: list[str] = []
    info = train(out, shared_data, cfg, opts=RunOptions(seed=13, threads=2, log=logs.append))
    assert any(f"resuming at step {done}/" in m for m in logs)
    assert info["train"]["finished"] and not (out / CHECKPOINT).exists()
    assert info["train"]["steps"] == info["train"]["scheduled_steps"] > done
    assert (out / "model.onnx").stat().st_size < 30e6
    assert info["threshold"] in DEV_THRESHOLDS and info["seed"] == 13
    assert info["device"] == "cpu" and info["threads"] == 2
    assert set(info["data_sha256"]) == {f for fs in SOURCE_FILES.values() for f in fs}
    card = (out / "MODEL_CARD.md").read_text("utf-8")
    assert "## Run" in card and "Dev split" in card and "stopped early" not in card
    assert f"**Default threshold**: {info['threshold']} (best mean F2" in card

    # the pipeline-level point rewrites the card: its header names it, twice is once
    for how in ("first try", "chosen on dev"):
        set_operating_point(out, 0.3, 0.25, how)
    card = (out / "MODEL_CARD.md").read_text("utf-8")
    assert "**Default thresholds**: 0.3 per sentence, 0.25 per passage" in card
    assert f"the sentence-level best mean F2 on the dev table below is {info['threshold']}." in card
    assert card.count("## Operating point") == 1 and "chosen on dev" in card
    assert "first try" not in card and "## Run" in card
    conf = json.loads((out / "tagger_config.json").read_text("utf-8"))
    assert (conf["threshold"], conf["passage_threshold"]) == (0.3, 0.25)
    assert conf["span_null"] is True  # trained with unanswerable windows: read so at run time
    assert f"`{HOTPOT_DISTRACTOR}` | `{sha256_file(shared_data / HOTPOT_DISTRACTOR)}`" in card
    saved = json.loads((out / "training_info.json").read_text("utf-8"))
    assert saved["config"]["batch_size"] == 4 and "seed" not in saved["config"]
    tagged = OnnxTagger(out).tag("Who?", [("T", ["One sentence.", "Two sentences."])])
    assert tagged[0].probs.shape == (2,) and 0 <= tagged[0].relevance <= 1
    assert all(0 < sp.score <= 1 for sp in getattr(tagged[0], "spans", ()) if sp is not None)
    # the export drops the attention softmaxes' NaN guards (exact; the shipped file has 6)
    import onnx

    for name in ("model_fp32.onnx", "model.onnx"):
        graph = onnx.load(str(out / name)).graph
        ops = [n.op_type for n in graph.node]
        assert "IsNaN" not in ops and "Softmax" in ops
        # the span head is exported beside the token and passage heads (issue 44 item 6)
        assert [o.name for o in graph.output] == ["token_logits", "passage_logit", "span_logits"]


def test_the_shipped_tagger_read_back_into_torch_scores_as_its_onnx_file(
    corpus_dir: Path,
) -> None:
    """``onnx_state_dict`` (how a run starts from the int8 reranker, and how its teacher is
    read) covers every weight of the network, and the dequantised fp32 network ranks the
    sentences as the int8 session does."""
    from ragsieve.tag.encode import PassageEncoder, load_tokenizer
    from ragsieve.tag.fit.net import build_net, onnx_state_dict, sentence_logits_torch
    from ragsieve.text import sentence_texts

    model_dir = shipped_model_dir()
    net = build_net()
    net.load_state_dict(onnx_state_dict(model_dir / "model.onnx"), strict=True)  # span head too
    net.eval()
    passages = [
        (
            p.stem,
            [s for s in sentence_texts(p.read_text("utf-8")) if not s.lstrip().startswith("#")],
        )
        for p in sorted(corpus_dir.glob("*.md"))[:4]
    ]
    enc = PassageEncoder(load_tokenizer(model_dir / "tokenizer.json"), 256)
    onnx_tagger = OnnxTagger(model_dir)
    mine: list[float] = []
    theirs: list[float] = []
    for question in (
        "When was the first Fresnel lens installed?",
        "In which year did Champollion announce the decipherment of hieroglyphs?",
    ):
        for (title, sents), tagged in zip(
            passages, onnx_tagger.tag(question, passages), strict=True
        ):
            window = enc.windows(question, [(title, sents)])[0]
            n = max(s for s in window.sentence_of if s >= 0) + 1
            arr = {k: torch.from_numpy(v) for k, v in enc.batch([window]).items()}
            with torch.no_grad():
                tok = net(arr["input_ids"], arr["attention_mask"], arr["token_type_ids"])[0]
                probs = torch.sigmoid(sentence_logits_torch(tok, arr["sentence_of"], n))[0]
            mine += probs.tolist()
            theirs += tagged.probs[:n].tolist()
    # the span head (trained jointly, int8 like the rest of the graph) is read back as the
    # network's span head
    import onnxruntime as ort

    window = enc.windows("When was the first Fresnel lens installed?", passages[:1])[0]
    feed = {k: v for k, v in enc.batch([window]).items() if k != "sentence_of"}
    onnx_span = ort.InferenceSession(str(model_dir / "model.onnx")).run(["span_logits"], feed)[0]
    with torch.no_grad():
        torch_span = net(
            *(torch.from_numpy(feed[k]) for k in ("input_ids", "attention_mask", "token_type_ids"))
        )[2]
    assert np.corrcoef(onnx_span.ravel(), torch_span.numpy().ravel())[0, 1] > 0.9
    mine_arr, theirs_arr = np.asarray(mine), np.asarray(theirs)
    assert len(mine) > 20
    ranks = [np.argsort(np.argsort(x)) for x in (mine_arr, theirs_arr)]
    assert np.corrcoef(*ranks)[0, 1] > 0.9  # Spearman's rank correlation
    assert float(np.abs(mine_arr - theirs_arr).max()) < 0.2


def test_a_fit_json_from_before_the_harness_still_exports() -> None:
    """``python -m ragsieve.tag.fit.train export`` reads the ``config`` of a ``fit.json`` written
    on a GPU machine before the harness (run options beside the recipe) and of one written
    now; an unknown option is a one-line error."""
    from ragsieve.errors import ConfigError
    from ragsieve.tag.fit.recipe import DEFAULT_RUN, TaggerTrainConfig, split_config

    recipe = asdict(TaggerTrainConfig())
    before = {**recipe, "seed": 13, "threads": 8, "device": "cuda", "time_limit_min": 5.0}
    before["checkpoint_every"] = 100
    cfg, opts = split_config(before)
    assert asdict(cfg) == recipe and isinstance(cfg.sizes, SourceSizes)
    assert opts == RunOptions(seed=13, device="cuda", threads=8, time_limit_min=5.0)
    cfg, opts = split_config({**recipe, "batch_size": 4})
    assert cfg.batch_size == 4 and opts == DEFAULT_RUN
    with pytest.raises(ConfigError, match="unknown tagger training option"):
        split_config({**recipe, "learning_rate": 1e-4})


def test_set_values_are_json_or_plain_words() -> None:
    """``--set teacher=none`` is the word (stop 41's GPU plan wrote it so, and ``json.loads``
    alone raised a traceback on it); numbers, booleans and lists stay JSON."""
    from ragsieve.errors import InputError
    from ragsieve.tag.fit.train import parse_sets

    got = parse_sets(["teacher=none", "epochs=2", "lr=1e-4", 'leave_out=["qed"]', "x=true"])
    assert got == {"teacher": "none", "epochs": 2, "lr": 1e-4, "leave_out": ["qed"], "x": True}
    for bad in ("epochs", "=2"):
        with pytest.raises(InputError, match="expected KEY=VALUE"):
            parse_sets([bad])


def test_the_gpu_steps_fit_a_plain_word_option_and_refuse_bad_input_in_one_line(
    tmp_path: Path, examples: list[Example]
) -> None:
    """``python -m ragsieve.tag.fit.train fit`` as a GPU lease runs it (here on the CPU, a few
    real examples): ``--set teacher=none`` reaches the recipe the weights record; every bad
    input is one line and exit 2 before any data is read, and leaves ``--out`` unwritten."""
    from ragsieve.tag.fit.net import load_weights

    path = tmp_path / "examples.jsonl.xz"
    save_examples(path, [e for e in examples if e.split == "train"][:24])
    out = tmp_path / "fit"
    small = ["--set", "batch_size=8", "--set", "max_length=96", "--set", "epochs=1"]
    tag_train = "ragsieve.tag.fit.train"
    p = run(
        "fit",
        "--examples",
        str(path),
        "--out",
        str(out),
        "--set",
        "teacher=none",
        *small,
        module=tag_train,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    fitted = json.loads((out / "fit.json").read_text("utf-8"))
    assert fitted["config"]["teacher"] == "none" and fitted["finished"]
    assert "teacher logits" not in p.stdout  # no teacher is read when there is none
    assert load_weights(out).passage_head.weight.shape[-1] == 384

    bad = tmp_path / "bad"
    cases = [
        (["fit", "--examples", str(path), "--set", "teacher=nonsense"], "teacher must be"),
        (["fit", "--examples", str(path), "--set", "bogus=1"], "unknown tagger training"),
        (["fit", "--examples", str(path), "--set", "look_alike_repeat=abc"], "an integer"),
        (["fit", "--examples", str(path), "--set", "hotpot_repeat=0"], "must be at least 1"),
        (["fit", "--examples", str(path), "--set", "null_span_weight=-1"], "at least 0"),
        (["fit", "--examples", str(path), "--set", "epochs"], "expected KEY=VALUE"),
        (["fit"], "fit needs --examples"),
        (["fit", "--examples", str(tmp_path / "none.xz")], "not a file"),
        (["fit", "--examples", str(path), "--time-limit", "0"], "--time-limit must be"),
        (["export", "--weights", str(out), "--examples", str(path)], "export needs --data"),
        (
            ["operating-point", "--threshold", "0.3", "--passage-threshold", "0.3"],
            "not a trained tagger's folder",
        ),
        (["prepare", "--data", str(tmp_path / "nowhere")], "not a folder"),
        (["train"], "invalid choice"),
    ]
    for argv, fragment in cases:
        assert_one_line_error(run(*argv, "--out", str(bad), module=tag_train), 2, fragment)
        assert not bad.exists(), argv
