"""The evidence viewer (``GET /``) in a real browser: Debian's Chromium, driven by Playwright,
against a real ``ragsieve serve`` process with the real local LLM (SmolLM2).

No browser is downloaded: Playwright launches ``/usr/bin/chromium`` (``make browser`` installs
it). Without it these tests fail, on purpose, instead of skipping: a skipped browser test would
let a broken page pass CI unseen.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import CHROMIUM, CHROMIUM_ARGS, Server, start_server, stop_server

pytestmark = pytest.mark.integration

Q = "In which year did Champollion announce the decipherment of hieroglyphs?"
TOKEN = "viewer-token-0123456789"
#: Playwright's timeout (ms) for one step: an answer from SmolLM2 on 2 busy cores included.
STEP_MS = 180_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} not found: the evidence viewer's browser tests drive Debian's Chromium. "
            "Run `make browser` (apt-get install chromium) and retry.",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: pip install -e '.[dev]'", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def viewer(sentence_index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server on the sentence index (every method in the picker works there)."""
    log = tmp_path_factory.mktemp("viewer") / "server.log"
    srv = start_server(sentence_index_dir, log, "--no-access-log")
    yield srv.url
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


@pytest.fixture(scope="module")
def locked(sample_index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("viewer-locked") / "server.log"
    srv = start_server(sample_index_dir, log, "--token", TOKEN, "--no-access-log")
    yield srv
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context per test (its own localStorage), console errors collected."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(STEP_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    pg.on(
        "console",
        lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None,
    )
    pg.errors = errors
    yield pg
    context.close()


def click_and_wait(page: Any, button: str, path: str) -> Any:
    """Click ``button``, return the page's own response from ``path`` once it is drawn."""
    with page.expect_response(lambda r: r.url.endswith(path)) as info:
        page.click(button)
    page.wait_for_function("() => document.body.dataset.state !== 'busy'")
    return info.value


def kept_ids(page: Any) -> set[str]:
    ids = page.eval_on_selector_all("#documents .kept", "els => els.map(e => e.dataset.chunkId)")
    return set(ids)


def test_ask_highlights_exactly_the_answers_selection(page: Any, viewer: str) -> None:
    resp = page.goto(viewer + "/")
    assert resp.status == 200 and "default-src 'none'" in resp.headers["content-security-policy"]
    page.fill("#question", Q)
    page.select_option("#method", "full")
    res = click_and_wait(page, "#ask", "/ask")
    assert res.status == 200, res.text()
    sent = res.request.post_data_json
    assert sent["method"] == "full" and sent["explain"] is True and "k" not in sent
    body = res.json()
    assert page.evaluate("document.body.dataset.state") == "done", page.text_content("#status")
    # The answer the API returned is on the page.
    answer = page.text_content("#answer-text")
    assert answer.strip() and answer == body["answer"]
    # The span answered for the packaged reader: the LLM's reply shows below it.
    if body["reply"] != body["answer"]:
        assert page.is_visible("#answer-reply")
        assert page.text_content("#answer-reply") == f"LLM reply: {body['reply']}"
    else:
        assert not page.is_visible("#answer-reply")
    assert "Answer (full)" in page.text_content("#answer-heading")
    # The local model costs nothing: no cost on the answer line.
    meta = page.text_content("#answer-meta")
    assert body["cost"] == 0 and "tokens" in meta and "cost" not in meta and "$" not in meta
    # The highlighted (kept) units are exactly the context the answer was generated from...
    selected = [c["chunk_id"] for c in body["context"]]
    assert selected and body["explain"]["selected"] == selected
    assert kept_ids(page) == set(selected)
    # ...which is what the same spec selects on its own (retrieval is deterministic).
    again = httpx.post(viewer + "/search", json={"query": Q, "method": "full"}, timeout=120)
    assert [h["chunk_id"] for h in again.json()["results"]] == selected
    kept_text = " ".join(
        page.eval_on_selector_all("#documents .kept", "e => e.map(x => x.textContent)")
    )
    assert "1822" in kept_text
    # Candidates are shaded by the tagger's keep probability: several shades, a data-score each.
    shades = page.eval_on_selector_all(
        "#documents .cand", "els => els.map(e => [e.dataset.score, e.style.backgroundColor])"
    )
    assert len(shades) > len(selected) and all(float(s) >= 0 for s, _ in shades)
    assert len({bg for _, bg in shades}) > 3
    assert "keep probability" in page.text_content("#shade-label")
    # The first document is the one with the evidence; seconds and tokens per stage are shown.
    assert page.text_content("#documents article h3").startswith("The Rosetta Stone")
    stages = page.eval_on_selector_all(
        "#stages-body tr[data-stage]", "e => e.map(x => x.dataset.stage)"
    )
    assert stages == list(body["timings"]) and {"tag", "generate"} <= set(stages)
    gen = page.text_content("#stages-body tr[data-stage=generate]")
    assert f"{body['tokens']['prompt']} → {body['tokens']['completion']}" in gen
    # The curve marks the selected candidates and draws the tagger's threshold.
    assert page.locator("#curve svg circle.sel").count() == len(selected)
    assert page.locator("#curve svg #cut line.cut").count() == 1
    assert page.errors == []


def test_explain_draws_the_curve_with_the_cut(page: Any, viewer: str) -> None:
    page.goto(viewer + "/")
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/ask") else None)
    page.fill("#question", Q)
    page.fill("#spec", "sage[min_k=2]")  # a spec overrides the picker
    res = click_and_wait(page, "#explain", "/explain")
    assert res.status == 200, res.text()
    rep = res.json()
    assert asked == [] and res.request.post_data_json["method"] == "sage[min_k=2]"
    assert page.text_content("#answer-heading") == "Explain (sage)"
    assert page.text_content("#answer-text") == ""  # no LLM was called
    n_sel, curve = len(rep["selected"]), rep["score_curve"]
    assert rep["cut"]["cut"] == n_sel < len(curve)
    assert kept_ids(page) == set(rep["selected"])
    # The SVG: one point per ranked candidate, the selected ones green, and the cut line
    # between the last selected rank and the next.
    svg = page.locator("#curve svg")
    assert svg.count() == 1
    assert svg.locator("circle").count() == len(curve)
    assert svg.locator("circle.sel").count() == n_sel
    xs = [
        float(x)
        for x in svg.locator("circle").evaluate_all("e => e.map(c => c.getAttribute('cx'))")
    ]
    cut_x = float(svg.locator("#cut line.cut").get_attribute("x1"))
    assert xs[n_sel - 1] < cut_x < xs[n_sel]
    assert f"cut after {n_sel}" in svg.locator("#cut text").text_content()
    assert set(
        page.eval_on_selector_all("#stages-body tr[data-stage]", "e => e.map(x => x.dataset.stage)")
    ) == set(rep["seconds"])
    # A bad spec is the server's one-line error, shown as such.
    page.fill("#spec", "full[flor=1]")
    res = click_and_wait(page, "#explain", "/explain")
    assert res.status == 400
    status = page.text_content("#status")
    assert status.startswith("400: ") and "valid keys are" in status
    assert page.evaluate("document.body.dataset.state") == "error"
    assert page.is_hidden("#results")


def test_token_entered_in_the_page(page: Any, locked: Server) -> None:
    page.goto(locked.url + "/")  # the page itself needs no token
    page.fill("#question", Q)
    page.select_option("#method", "tagger")
    res = click_and_wait(page, "#ask", "/ask")
    assert res.status == 401
    status = page.text_content("#status")
    assert "401" in status and "token" in status.lower() and "Token field" in status
    assert page.is_hidden("#results")
    page.fill("#token", "wrong")
    assert click_and_wait(page, "#ask", "/ask").status == 401
    page.fill("#token", TOKEN)
    res = click_and_wait(page, "#ask", "/ask")
    assert res.status == 200, res.text()
    assert res.request.headers["authorization"] == f"Bearer {TOKEN}"
    body = res.json()
    assert page.text_content("#answer-text") == body["answer"] and body["answer"].strip()
    assert kept_ids(page) == {c["chunk_id"] for c in body["context"]}
    # The token is remembered (localStorage) across a reload, and Explain sends it too.
    page.reload()
    assert page.input_value("#token") == TOKEN
    page.fill("#question", Q)
    assert click_and_wait(page, "#explain", "/explain").status == 200
    assert page.evaluate("document.body.dataset.state") == "done"


def test_a_running_clock_and_a_jump_to_the_kept_evidence(page: Any, viewer: str) -> None:
    """While a request runs the status counts seconds; afterwards the first click brings the
    best kept unit (highest score) into view (a small window, so it starts off screen), each
    further click the next one down in score, round to the best again after the last; and each
    document says under which heading its kept units sit."""
    page.set_viewport_size({"width": 1200, "height": 420})
    page.goto(viewer + "/")
    page.evaluate(
        """() => { window.seen = [];
        new MutationObserver(() => window.seen.push(document.getElementById('status')
          .textContent)).observe(document.getElementById('status'),
          {childList: true, characterData: true, subtree: true}); }"""
    )
    page.fill("#question", Q)
    page.select_option("#method", "tagger")
    res = click_and_wait(page, "#explain", "/explain")
    assert res.status == 200, res.text()
    seen = page.evaluate("window.seen")
    assert any(s.startswith("Explaining: ") and s.endswith(" s") for s in seen), seen
    assert page.is_visible("#jump")
    # The kept units in document order with their scores; the order a reader wants is by score.
    spans = page.eval_on_selector_all(
        "#documents .cand.kept", "els => els.map(e => [e.dataset.chunkId, Number(e.dataset.score)])"
    )
    score = dict(spans)  # every span of a unit carries the unit's score
    by_score = sorted(dict.fromkeys(c for c, _ in spans), key=lambda c: -score[c])
    assert len(by_score) >= 2 and score[by_score[0]] > score[by_score[-1]], spans
    assert by_score[0] != spans[0][0], spans  # the best is not the first in document order
    in_view = """(id) => [...document.querySelectorAll('#documents .cand.kept')]
        .filter((e) => e.dataset.chunkId === id).some((e) => { const r = e.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight; })"""
    current = "els => [...new Set(els.map(e => e.dataset.chunkId))]"
    assert not page.evaluate(in_view, by_score[0])
    for n, chunk_id in enumerate(by_score, start=1):
        page.click("#jump")
        assert page.eval_on_selector_all("#documents .cand.current", current) == [chunk_id]
        assert page.evaluate(in_view, chunk_id), (n, chunk_id)
        assert f"at {n} of {len(by_score)}, score {score[chunk_id]:.3f}" in page.text_content(
            "#jump"
        )
    page.click("#jump")  # after the last, round to the best again
    assert page.eval_on_selector_all("#documents .cand.current", current) == [by_score[0]]
    head = page.text_content("#documents article h3")
    assert "kept on Decipherment" in head and "jump to kept" in head
    where = page.get_attribute("#documents .cand.kept", "data-where")
    assert where == "Decipherment"
    # A new answer starts again from the best.
    click_and_wait(page, "#explain", "/explain")
    assert page.text_content("#jump") == "Jump to the kept evidence (best first)"
    page.click("#jump")
    assert page.eval_on_selector_all("#documents .cand.current", current) == [by_score[0]]
    assert page.errors == []


def test_a_question_the_documents_do_not_answer_says_so(page: Any, viewer: str) -> None:
    """Under the floor the page says the documents do not answer, and why; no LLM was asked for
    a question with no word to search for, and the confidence shows beside the figures."""
    page.goto(viewer + "/")
    page.fill("#question", "What is the boiling point of tungsten?")
    res = click_and_wait(page, "#ask", "/ask")
    body = res.json()
    assert body["abstained"] is True and body["answer"] is None
    text = page.text_content("#answer-text")
    assert text.startswith("The indexed documents do not answer this question")
    assert body["line"]["why"] in text and body["line"]["abstained"] is True
    assert f"confidence {body['confidence']:.2f}" in page.text_content("#answer-meta")
    assert page.errors == []
