"""Issue 45's bad-input cases: serve (run by bad_input_sweep.py --issue45, areas ``serve45*``).

Two kinds:

* ``serve45-config``: ``ragsieve serve --config FILE.toml`` whose ``[method]`` names a model
  file that is missing (a tagger, agent or cross-encoder folder, a GGUF judge) or holds a bad
  value. Expected: exit 2 with one ``error:`` line before the server listens. A server that
  starts anyway never exits, so these cases run under a 60 s limit: starting counts as a hang,
  a failure.
* ``serve45-http``: the allow-list and the no-LLM rule over HTTP. Each case is Python that
  starts a real ``ragsieve serve`` on 127.0.0.1 (a free port, an ``openai:`` LLM on a closed
  port, so nothing loads an LLM), POSTs its requests with urllib and checks each answer's
  status and error text; any mismatch (or a traceback in the server's log) raises
  :class:`ragsieve.errors.InputError`, an ``error:`` line and exit 2. So such a case expects
  exit 0: every request was refused (or served) as it should be. Several requests share one
  server (a start costs seconds); the case's name says what they check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bad_input_sweep import Case, Setup

#: A ``serve`` that should have failed at start-up but did not is a hang after this long.
HANG_S = 60
LLM = "openai:x@http://127.0.0.1:1/v1"  # nothing listens on port 1: no LLM is ever loaded


def _config(table: str, *dirs: str, files: dict[str, str] | None = None) -> Setup:
    """Write ``{tmp}/m.toml`` with ``[method]`` + ``table`` ({tmp} substituted), and make the
    folders ``dirs`` and ``files`` (relative to the work dir) it points at."""

    def f(tmp: Path, idx: Path) -> None:
        for d in dirs:
            (tmp / d).mkdir(parents=True, exist_ok=True)
        for rel, text in (files or {}).items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
        (tmp / "m.toml").write_text("[method]\n" + table.replace("{tmp}", str(tmp)) + "\n")

    return f


def _serve_config(name: str, table: str, fragment: str, *dirs: str, **kw: Any) -> Case:
    args = ["serve", "--index", "{idx}", "--config", "{tmp}/m.toml", "--port", "{busy}"]
    # --port {busy}: a server that got past the checks would fail on the busy port (exit 2
    # with "cannot listen"), so the fragment, not only the code, tells a pass; the model check
    # runs before the port check.
    return Case(
        "serve45-config",
        name,
        args + kw.pop("extra", []),
        2,
        setup=_config(table, *dirs, files=kw.pop("files", None)),
        timeout=HANG_S,
        fragment=fragment,
    )


# fmt: off
def config_cases() -> list[Case]:
    c = _serve_config
    return [
        c("tagger model folder missing", 'name = "tagger"\nmodel = "{tmp}/nope"',
            "/nope/model.onnx"),
        c("tagger model folder empty", 'name = "tagger"\nmodel = "{tmp}/e"', "/e/model.onnx", "e"),
        c("tagger folder without tokenizer", 'name = "tagger"\nmodel = "{tmp}/h"',
            "/h/tokenizer.json", files={"h/model.onnx": "x"}),
        c("tagger folder without model", 'name = "tagger"\nmodel = "{tmp}/t"', "/t/model.onnx",
            files={"t/tokenizer.json": "{}"}),
        c("tagger model is a file", 'name = "tagger"\nmodel = "{tmp}/f.onnx"', "f.onnx/model.onnx",
            files={"f.onnx": "x"}),
        c("tagger model NUL byte", 'name = "tagger"\nmodel = "a\\u0000b"', "a\\x00b/model.onnx"),
        c("tagger model 5000-char name", f'name = "tagger"\nmodel = "{"n" * 5000}"', "nnnn"),
        c("tagger model under ~", 'name = "tagger"\nmodel = "~/no-such-ragsieve-tagger"',
            "no-such-ragsieve-tagger/model.onnx"),
        c("agent_dir under an unknown user's ~",
            'name = "carrot"\nagent = true\nagent_dir = "~no-such-user-ragsieve/a"',
            "~no-such-user-ragsieve/a/agent.npz is missing"),
        c("full tagger_model missing", 'name = "full"\ntagger_model = "{tmp}/x"', "tagger_model="),
        c("full tagger_model with unit=passage",
            'name = "full"\nunit = "passage"\ntagger_model = "{tmp}/x"', "/x/model.onnx"),
        c("carrot agent_dir missing", 'name = "carrot"\nagent = true\nagent_dir = "{tmp}/a"',
            "/a/agent.npz"),
        c("carrot agent_dir empty", 'name = "carrot"\nagent = true\nagent_dir = "{tmp}/a"',
            "/a/agent.npz", "a"),
        c("carrot agent_dir without agent.json",
            'name = "carrot"\nagent = true\nagent_dir = "{tmp}/a"', "/a/agent.json",
            files={"a/agent.npz": "x"}),
        c("sage reranker cross-encoder:DIR missing",
            'name = "sage"\nreranker = "cross-encoder:{tmp}/ce"', "/ce/model.onnx"),
        c("naive reranker cross-encoder-fp32:DIR empty",
            'name = "naive"\nreranker = "cross-encoder-fp32:{tmp}/ce"', "/ce/model_fp32.onnx",
            "ce"),
        c("naive reranker folder path missing", 'name = "naive"\nreranker = "{tmp}/st-model"',
            "/st-model, but its file"),
        c("full scorer cross-encoder:DIR missing",
            'name = "full"\nscorer = "cross-encoder:{tmp}/ce"', "uses scorer=cross-encoder:"),
        c("carrot scorer cross-encoder:DIR missing",
            'name = "carrot"\nscorer = "cross-encoder:{tmp}/ce"', "/ce/model.onnx"),
        c("saki judge llm local GGUF missing",
            'name = "saki"\njudge = "llm"\nllm = "local:{tmp}/m.gguf"',
            "uses judge=llm (an LLM), but its file", extra=["--llm", "local:{tmp}/m.gguf"]),
        c("saki judge llm other than --llm", f'name = "saki"\njudge = "llm"\nllm = "{LLM}"',
            "judges with llm=openai:"),
        c("tagger threshold not a number", 'name = "tagger"\nthreshold = "high"', "threshold"),
        c("tagger hops 3", 'name = "tagger"\nhops = 3', "hops must be 1 or 2"),
        c("unknown method", 'name = "nope"', "unknown method"),
        c("unknown option", 'name = "tagger"\nmodle = "{tmp}/x"', "unknown option(s) modle"),
        c("carrot agent not a bool", 'name = "carrot"\nagent = "yes"', "agent"),
    ]
# fmt: on


# ----------------------------------------------------------------------------- HTTP
_HTTP = """
import json, subprocess, sys, time, urllib.error, urllib.request
from ragsieve.errors import InputError
from ragsieve.llm.server import free_port

port = free_port()
log_path = r"{tmp}/server.log"
cmd = [sys.executable, "-m", "ragsieve.cli", "serve", "--index", r"{idx}", "--port", str(port)]
cmd += ["--llm", LLM, "--no-access-log", *ARGS]
with open(log_path, "wb") as log:
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)


def call(path, body):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


failed = True
try:
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            tail = open(log_path, errors="replace").read().strip().splitlines()[-1:]
            raise InputError(f"the server exited with {proc.returncode}: {tail}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise InputError("the server did not answer /health in 300 s") from None
            time.sleep(0.3)
    for path, body, status, fragment in CHECKS:
        got, out = call(path, body)
        said = out.get("error", "") if got != 200 else json.dumps(out)
        if got != status or fragment not in said:
            what = body.get("method") or body.get("reranker")
            raise InputError(
                f"{path} {what}: expected {status} with {fragment!r}, got {got}: {said[:160]!r}"
            )
    failed = False
finally:
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
if not failed and "Traceback" in open(log_path, errors="replace").read():
    raise InputError("the server logged a traceback")
"""

Check = tuple[str, dict[str, Any], int, str]
REFUSED = "which this server does not allow (--rerankers bm25); allowed: bm25"


def _http(name: str, args: list[str], checks: list[Check], setup: Setup | None = None) -> Case:
    code = f"ARGS = {args!r}\nCHECKS = {checks!r}\nLLM = {LLM!r}\n" + _HTTP
    return Case("serve45-http", name, [], 0, setup=setup, timeout=600, python=code)


def _ex(method: str, status: int, fragment: str, **extra: Any) -> Check:
    body = {"question": "When was the lighthouse built?", "method": method, **extra}
    return ("/explain", body, status, fragment)


def _every(method: str, fragment: str) -> list[Check]:
    """``method`` refused with ``fragment`` on /search, /explain and /ask."""
    q = "When was the lighthouse built?"
    return [
        ("/search", {"query": q, "method": method}, 400, fragment),
        ("/explain", {"question": q, "method": method}, 400, fragment),
        ("/ask", {"question": q, "method": method, "max_tokens": 8}, 400, fragment),
    ]


# fmt: off
def http_cases() -> list[Case]:
    bm25 = ["--rerankers", "bm25"]
    h = _http
    return [
        h("sage's default ensemble refused on every endpoint (--rerankers bm25)", bm25,
            _every("sage", "method sage uses reranker=ensemble by default, " + REFUSED)),
        h("saki's default cross-encoder reranker and judge refused", bm25,
            _every("saki", "method saki uses reranker=cross-encoder by default")
            + _every("saki[reranker=bm25]", "uses judge=cross-encoder by default, " + REFUSED)),
        h("full[scorer=reranker] (default ensemble) and scorer=NAME refused", bm25, [
            *_every("full[scorer=reranker]", "uses reranker=ensemble by default, " + REFUSED),
            _ex("full[scorer=bi-encoder]", 400, "uses scorer=bi-encoder, " + REFUSED)]),
        h("carrot's default ensemble and its agent refused", bm25, [
            *_every("carrot", "method carrot uses reranker=ensemble by default"),
            _ex("carrot[agent=true,scorer=bm25]", 400, "uses agent=true (the shipped agent)"),
            _ex("carrot[agent=true]", 400, "uses agent=true")]),
        h("a reranker named by option or request field refused", bm25, [
            _ex("naive[reranker=cross-encoder]", 400, "uses reranker=cross-encoder, " + REFUSED),
            _ex("naive", 400, "uses reranker=ensemble, " + REFUSED, reranker="ensemble"),
            _ex("tagger", 400, "reranker=ensemble names a model", reranker="ensemble"),
            ("/search", {"query": "x", "reranker": "ensemble"}, 400, "names a model"),
            _ex("naive[reranker=/etc]", 400, "uses reranker=/etc, " + REFUSED)]),
        h("allowed and preloaded models are served (--rerankers bm25)", bm25, [
            _ex("sage[reranker=bm25,feedback=false]", 200, '"method": "sage"'),
            _ex("carrot[scorer=bm25,iterations=5]", 200, '"method": "carrot"'),
            _ex("tagger", 200, '"method": "tagger"'),  # the default method's model
            _ex("naive", 200, '"method": "naive"', reranker="bm25"),
            ("/search", {"query": "lighthouse", "reranker": "bm25"}, 200, '"results"')]),
        h("an LLM judge refused on /explain and /search", [], [
            _ex("saki[judge=llm]", 400, "/explain never calls the LLM, and method saki"),
            ("/search", {"query": "x", "method": "saki[judge=llm]"}, 400, "/search never"),
            _ex("saki[judge=llm,reranker=bm25,links=1]", 400, "POST /ask")]),
        h("an empty allow-list serves the default method and model-free methods only",
            ["--rerankers", ""], [
            _ex("tagger", 200, '"method": "tagger"'), _ex("naive", 200, '"method": "naive"'),
            _ex("sage", 400, "(--rerankers ''); allowed: none"),
            _ex("carrot[scorer=bm25]", 400, "uses reranker=bm25, which this server")]),
        h("--config sage: its ensemble is loaded at start-up and usable",
            [*bm25, "--config", "{tmp}/m.toml"], [
            _ex("sage[feedback=false]", 200, '"method": "sage"'),
            ("/explain", {"question": "When was the lighthouse built?"}, 200, '"selected"'),
            _ex("saki", 400, "uses reranker=cross-encoder by default"),
            _ex("tagger", 400, "method tagger uses tagger, " + REFUSED)],
            setup=_config('name = "sage"\nfeedback = false')),
        h("--rerankers tagger with --config naive",
            ["--rerankers", "tagger", "--config", "{tmp}/m.toml"], [
            _ex("tagger", 200, '"method": "tagger"'),
            _ex("sage", 400, "(--rerankers tagger); allowed: tagger"),
            _ex("carrot[agent=true,scorer=bm25]", 400, "uses agent=true")],
            setup=_config('name = "naive"')),
        h("model folders over HTTP refused before the allow-list", ["--rerankers", "*"], [
            _ex("tagger[model=/etc]", 400, "option model cannot be set over HTTP"),
            _ex("full[tagger_model=/etc]", 400, "tagger_model cannot be set over HTTP"),
            _ex("carrot[agent=true,agent_dir=/etc]", 400, "agent_dir cannot be set"),
            _ex("saki[judge=llm,llm=local]", 400, "option llm cannot be set over HTTP")]),
    ]
# fmt: on


# fmt: off
def explain_cases() -> list[Case]:
    """``ragsieve explain`` on the command line calls no LLM either: an LLM judge is refused
    in one line before any model loads (a missing GGUF would otherwise be the error)."""
    q = "When did Champollion announce the decipherment?"
    base = ["explain", q, "--index", "{idx}"]
    frag = "never calls the LLM"
    return [
        Case("serve45-explain", "explain saki[judge=llm]", [*base, "--method", "saki[judge=llm]"],
            2, fragment=frag),
        Case("serve45-explain", "explain saki[judge=llm] with a missing GGUF",
            [*base, "--method", "saki[judge=llm,llm=local:/no/such.gguf]"], 2, fragment=frag),
        Case("serve45-explain", "explain --config saki judge=llm",
            [*base, "--config", "{tmp}/m.toml"], 2, setup=_config('name = "saki"\njudge = "llm"'),
            fragment=frag),
    ]
# fmt: on


def cases() -> list[Case]:
    return [*config_cases(), *http_cases(), *explain_cases()]
