"""Real HTTP servers of reward models for the served-RM tests: each protocol's request and
reply exactly as its server's source defines them (src/rmaudit/backends/served/protocols.py
cites them), on 127.0.0.1 at a free port (bound and listening before ``start`` returns).

A server serves a :class:`Served` model: :class:`TinyRM`, a tiny Hugging Face sequence
classifier built in the test session (run as the servers run theirs: its tokenizer's chat
template for chat requests, no special tokens added to texts, a padded batch per request), or
:class:`Digest`, a scorer of the text's hash with no torch, for the fault tests.  Like vLLM, a
text longer than ``max_tokens`` is refused (HTTP 400) unless the request asks the server to
keep its last ``truncate_prompt_tokens``; OpenRLHF's server cuts it to ``max_tokens`` on the
right, as its tokenizer call does.

Misbehaviour on request: ``perturb(batch_size, position)`` is added to each score of a
request of ``batch_size`` texts (a server whose scores depend on the batch);
``schedule(path, body, attempt)`` picks each request's fate (``body``: the request as JSON;
``attempt``: how often the same body came before), so the same request meets the same faults
whatever the concurrency: ``ok``; ``429``, ``500``, ``503``: the status (with
``retry-after-ms: 1``); ``html``: HTTP 200 with an HTML body; ``drop``: the reply's headers
and half its body, then the connection closed; ``stall``: no reply until the server stops;
``nan``, ``string``, ``short``: a reply whose first score is NaN, a string, or missing.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from rmaudit.testing.fake_openai import serve_in_background

Schedule = Callable[[str, dict[str, Any], int], str]
Perturb = Callable[[int, int], float]

ENDPOINTS = {
    "vllm-pooling": "/pooling",
    "vllm-classify": "/classify",
    "openrlhf-rm": "/get_reward",
    "sglang-classify": "/classify",
}


class Served(Protocol):
    """What a server serves: a chat template, a tokenizer and a model's head values."""

    def render(self, messages: list[dict[str, str]]) -> str: ...

    def tokens(self, text: str) -> list[int]: ...

    def heads(self, batch: list[list[int]]) -> list[list[float]]: ...


class TinyRM:
    """A tiny Hugging Face decoder sequence classifier (a folder from the ``tiny_models``
    fixture, or a benchmark's), in float32; each request's texts one batch, padded on the
    right without an attention mask (a causal model's real tokens never see the padding
    after them), pooled at each row's last real token."""

    def __init__(self, folder: str) -> None:
        import torch
        import transformers

        self.torch = torch
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        self.model = transformers.AutoModelForSequenceClassification.from_pretrained(
            folder, dtype=torch.float32
        ).eval()
        self.pad = self.tokenizer.pad_token_id or 0
        self._lock = threading.Lock()

    def render(self, messages: list[dict[str, str]]) -> str:
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=False
        )

    def tokens(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def heads(self, batch: list[list[int]]) -> list[list[float]]:
        torch = self.torch
        width = max(len(ids) for ids in batch)
        ids = torch.tensor([row + [self.pad] * (width - len(row)) for row in batch])
        with self._lock, torch.inference_mode():  # one forward at a time, as a GPU runs them
            hidden = self.model.base_model(input_ids=ids, use_cache=False).last_hidden_state
            last = torch.tensor([len(row) - 1 for row in batch])
            logits = self.model.score(hidden[torch.arange(len(batch)), last])
        return logits.float().tolist()


class Digest:
    """No model: a text's score is a number drawn from its hash, its tokens its words."""

    def render(self, messages: list[dict[str, str]]) -> str:
        return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages)

    def tokens(self, text: str) -> list[int]:
        return [len(word) for word in text.split()]

    def heads(self, batch: list[list[int]]) -> list[list[float]]:
        return [[score_of(ids)] for ids in batch]


def score_of(ids: Sequence[int]) -> float:
    """:class:`Digest`'s score of a text's tokens."""
    digest = hashlib.sha256(json.dumps(list(ids)).encode()).hexdigest()
    return (int(digest[:8], 16) % 20_000) / 1000 - 10


def always_ok(path: str, body: dict[str, Any], attempt: int) -> str:
    return "ok"


class RewardServer:
    """``with RewardServer("vllm-pooling", TinyRM(folder)) as server: server.url``."""

    def __init__(
        self,
        protocol: str,
        served: Served,
        *,
        model_name: str = "tiny-rm",
        max_tokens: int = 256,
        schedule: Schedule = always_ok,
        perturb: Perturb | None = None,
        reply_shape: str = "probs",
    ) -> None:
        self.protocol = protocol
        self.served = served
        self.model_name = model_name
        self.max_tokens = max_tokens
        self.schedule = schedule
        self.perturb = perturb
        #: vllm-classify's reply: "probs" (its releases up to 2026) or "logits" (after)
        self.reply_shape = reply_shape
        self.log: list[dict[str, Any]] = []
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> RewardServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                owner._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve_in_background(Handler)
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> RewardServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def count(self, **match: Any) -> int:
        with self._lock:
            return sum(all(e.get(k) == v for k, v in match.items()) for e in self.log)

    # -- serving --------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length", 0)))
        digest = hashlib.sha256(raw).hexdigest()
        with self._lock:
            attempt = self._attempts.get(digest, 0)
            self._attempts[digest] = attempt + 1
        request = json.loads(raw)
        fate = self.schedule(handler.path, request, attempt)
        entry = {"path": handler.path, "fate": fate, "attempt": attempt}
        entry["authorization"] = handler.headers.get("authorization")
        headers: dict[str, str] = {}
        if handler.path != ENDPOINTS[self.protocol]:
            entry["fate"] = "404"
            status, body = 404, {"detail": "Not Found"}  # FastAPI's reply to an unknown path
        elif fate in ("429", "500", "503"):
            status, body = int(fate), {"error": {"message": fate}}
            # a real server's hint, which the client honours: its retry need not wait its backoff
            headers = {"retry-after-ms": "1"}
        else:
            status, body = self._reply(request, entry)
        with self._lock:
            self.log.append(entry)
        if fate == "stall":
            self._stopped.wait()
            return
        data = json.dumps(body).encode() if fate != "html" else b"<html>502 Bad Gateway</html>"
        if status == 200 and fate in ("nan", "string", "short"):
            data = json.dumps(_spoiled(body, fate)).encode()
        self._send(handler, status, data, headers, drop=fate == "drop")

    def _reply(self, body: dict[str, Any], entry: dict[str, Any]) -> tuple[int, Any]:
        if self.protocol == "openrlhf-rm":
            texts = list(body["query"])
            rows = [self.served.tokens(t)[: self.max_tokens] for t in texts]
        elif self.protocol == "sglang-classify":  # one text: a list is answered with an array
            texts = [body["text"]]
            rows = [self.served.tokens(t)[: self.max_tokens] for t in texts]
        else:
            if "messages" in body:
                texts = [self.served.render(body["messages"])]
                entry["messages"] = True
            else:
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if body.get("model") not in (None, self.model_name):
                return 404, {"error": {"message": f"The model `{body['model']}` does not exist."}}
            rows, refusal = self._rows(texts, body.get("truncate_prompt_tokens"))
            if refusal:
                return 400, {"error": {"message": refusal, "type": "BadRequestError"}}
        entry.update(texts=list(texts), tokens=[len(r) for r in rows])
        scores = [
            [v + (self.perturb(len(rows), i) if self.perturb else 0.0) for v in heads]
            for i, heads in enumerate(self.served.heads(rows))
        ]
        return 200, self._shaped(scores, sum(len(r) for r in rows))

    def _rows(self, texts: list[str], keep: int | None) -> tuple[list[list[int]], str | None]:
        """vLLM's tokens of each text: its last ``keep`` where asked, else refused if long."""
        rows = [self.served.tokens(t) for t in texts]
        if keep is not None:
            return [r[-keep:] for r in rows], None
        for row in rows:
            if len(row) > self.max_tokens:
                return rows, (
                    f"This model's maximum context length is {self.max_tokens} tokens. "
                    f"However, your request has {len(row)} input tokens."
                )
        return rows, None

    def _shaped(self, scores: list[list[float]], tokens: int) -> Any:
        usage = {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}
        created = int(time.time())
        if self.protocol == "openrlhf-rm":
            first = [s[0] for s in scores]
            return {"rewards": first, "scores": first, "extra_logs": {"dummy_scores": first}}
        if self.protocol == "sglang-classify":
            info = {"id": "1", "finish_reason": None, "prompt_tokens": tokens, "cached_tokens": 0}
            return {"embedding": scores[0], "meta_info": info}
        if self.protocol == "vllm-pooling":
            data = [{"index": i, "object": "pooling", "data": s} for i, s in enumerate(scores)]
            return {"id": "pool-1", "object": "list", "created": created,
                    "model": self.model_name, "data": data, "usage": usage}  # fmt: skip
        if self.reply_shape == "logits":
            data = [{"index": i, "logits": s, "probabilities": []} for i, s in enumerate(scores)]
        else:
            data = [
                {"index": i, "label": "LABEL_0", "probs": s, "num_classes": len(s)}
                for i, s in enumerate(scores)
            ]
        return {"id": "classify-1", "object": "list", "created": created,
                "model": self.model_name, "data": data, "usage": usage}  # fmt: skip

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        headers: dict[str, str],
        *,
        drop: bool,
    ) -> None:
        kind = "text/html" if data.startswith(b"<html>") else "application/json"
        try:
            handler.send_response(status)
            for name, value in {"Content-Type": kind, **headers}.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2] if drop else data)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        if drop:
            handler.close_connection = True


def _spoiled(body: Any, fate: str) -> Any:
    """A reply whose first score is NaN or a string, or which lacks its last score."""
    if "embedding" in body:
        values = [] if fate == "short" else [float("nan")] if fate == "nan" else "high"
        return {**body, "embedding": values}
    if "rewards" in body:
        values = list(body["rewards"])
        if fate == "short":
            return {"rewards": values[:-1], "scores": values[:-1]}
        values[0] = float("nan") if fate == "nan" else "high"
        return {"rewards": values, "scores": values}
    data = [dict(item) for item in body["data"]]
    if fate == "short":
        return {**body, "data": data[:-1]}
    field = next(k for k in ("data", "logits", "probs") if k in data[0])
    data[0][field] = [float("nan")] if fate == "nan" else "high"
    return {**body, "data": data}


def main() -> None:
    """``python tests/_served_rm.py PROTOCOL FOLDER PORT_FILE``: serve the tiny RM in FOLDER
    (:class:`TinyRM`) until killed, the port written to PORT_FILE once it listens (for a
    benchmark that measures a server in a process of its own)."""
    import sys
    from pathlib import Path

    protocol, folder, port_file = sys.argv[1:4]
    server = RewardServer(protocol, TinyRM(folder), max_tokens=10**6).start()
    Path(port_file).write_text(server.url.rsplit(":", 1)[1], encoding="utf-8")
    threading.Event().wait()


if __name__ == "__main__":
    main()
