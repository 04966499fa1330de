"""A real OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves on a schedule.

For testing API-backed components (rmaudit's own, and plugins') against real sockets,
timeouts and retries rather than mocks.  It serves ``POST /v1/chat/completions`` (a judge
when the request shows an answer block of the RETA or MT-bench templates, a chat policy
otherwise) and ``POST /v1/embeddings``, and logs every request it receives with what it did
about it::

    with FakeOpenAI(schedule=flaky) as server:
        ... ApiOptions(base_url=server.base_url, ...) ...
        assert server.count(outcome="ok") == ...

Faults come from ``schedule(request_key, attempt)``, where ``request_key`` hashes the
request body and ``attempt`` counts how often that same body arrived before: the same
request meets the same faults whatever the concurrency or arrival order.  Outcomes:

* ``"ok"``: a proper reply;
* ``"429"``, ``"500"``, ``"503"`` (each with ``retry-after-ms: 1``), ``"401"``: the status,
  no work done;
* ``"timeout"``: the reply is held back for ``stall_s`` seconds (longer than the client's
  timeout), then written if anyone still listens;
* ``"not-json"``: HTTP 200 with a body that is not JSON;
* ``"garbage"``: a proper reply whose judge text holds no score.

``edit_reply`` rewrites each chat completion before it is sent, for replies no schedule
makes: a text with a lone surrogate, absurd log-probabilities, odd rating tokens.

A judge reply's score is :func:`judge_score` of the judged answer and the choice index, and
with ``garbage_every = k`` about one choice in k is garbage (``server.is_garbage(answer, j)``),
so a test can compute the expected averages without looking at the client.

A test of a client's concurrency waits on an event, not on slow replies: with
``hold_until_in_flight = k`` the server holds every reply until k requests have been in flight
at once (``max_in_flight``), so a client that can send k at once always does, however busy
the machine; one that cannot gets its replies after ``hold_s`` seconds, and the test's
``max_in_flight`` check fails.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Schedule = Callable[[str, int], str]
#: a pairwise judge: (question, answer A, answer B) → its reply text
PairJudge = Callable[[str, str, str], str]
#: the verdict token's distribution: (question, answer A, answer B) → {"A": p, "B": p, "C": p}
VerdictProbabilities = Callable[[str, str, str], dict[str, float]]
#: a chat completion's body → the body sent instead
ReplyEdit = Callable[[dict[str, Any]], dict[str, Any]]

_ANSWER = re.compile(
    r"<\|The Start of Assistant A's Answer\|>\n(.*?)\n<\|The End of Assistant A's Answer\|>", re.S
)
_MT_ANSWER = re.compile(
    r"\[The Start of Assistant's Answer\]\n(.*?)\n\[The End of Assistant's Answer\]", re.S
)
_PAIR = re.compile(
    r"\[User Question\]\n(.*?)\n\n\[The Start of Assistant A's Answer\]\n(.*?)\n"
    r"\[The End of Assistant A's Answer\]\n\n\[The Start of Assistant B's Answer\]\n(.*?)\n"
    r"\[The End of Assistant B's Answer\]",
    re.S,
)
_CONVERSATION = re.compile(
    r"### Assistant A:\n(.*?)\n\n### User:.*### Assistant A:\n(.*?)\n+<\|The End", re.S
)


#: how often a background server's loop looks for a stop request: ``shutdown()`` returns at
#: its next look, and the standard library's 0.5 s was paid by every test that stops a server
STOP_POLL_S = 0.01


class _LocalServer(ThreadingHTTPServer):
    daemon_threads = True
    # the standard library's backlog is 5: a client opening more connections at once loses
    # the rest's SYNs, which the kernel sends again only after a second
    request_queue_size = 128


def serve_in_background(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Serve ``handler`` on 127.0.0.1 at a free port, listening when this returns, from a
    daemon thread (its handlers' threads daemons too) until the server's ``shutdown()``, which
    then returns within :data:`STOP_POLL_S`.  Replies leave at once (TCP_NODELAY, as uvicorn
    sets): else a reply's body, written after its headers, waits 40 ms for the client's
    delayed ACK."""
    handler.disable_nagle_algorithm = True  # set on the class: its every connection
    server = _LocalServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_S}, daemon=True
    )
    thread.start()
    return server


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def judge_score(answer: str, choice: int) -> int:
    """The score (1-10) the fake judge gives ``answer`` in choice ``choice`` of a request."""
    return 1 + (_digest(answer) + 3 * choice) % 10


def always_ok(key: str, attempt: int) -> str:
    return "ok"


class FakeOpenAI:
    """Start with ``with FakeOpenAI() as server`` (or ``start()``/``stop()``)."""

    def __init__(
        self,
        schedule: Schedule = always_ok,
        *,
        supports_n: bool = True,
        latency_s: float = 0.0,
        stall_s: float = 2.0,
        garbage_every: int = 0,
        dimensions: int = 8,
        pair_judge: PairJudge | None = None,
        verdict_probabilities: VerdictProbabilities | None = None,
        edit_reply: ReplyEdit | None = None,
        hold_until_in_flight: int = 0,
        hold_s: float = 120.0,
    ) -> None:
        self.schedule = schedule
        #: rewrites each chat completion before it is sent (None: sent as made)
        self.edit_reply = edit_reply
        #: answers the pairwise judge prompts (MT-bench's pair-v2 layout); None: such a
        #: request is answered as a chat policy, with no verdict
        self.pair_judge = pair_judge
        #: with a request's ``logprobs``, the verdict token's distribution to return
        self.verdict_probabilities = verdict_probabilities
        self.supports_n = supports_n
        self.latency_s = latency_s
        self.stall_s = stall_s
        self.garbage_every = garbage_every
        self.dimensions = dimensions
        self.log: list[dict[str, Any]] = []
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._policy_calls = 0
        self._in_flight = 0
        #: the most requests the server was handling at once
        self.max_in_flight = 0
        self.hold_until_in_flight = hold_until_in_flight
        self.hold_s = hold_s
        #: set once ``hold_until_in_flight`` requests were in flight at once
        self._crowded = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                fake._handle(self)

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

        self._server = serve_in_background(Handler)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake server has no address before start()")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- what happened ----------------------------------------------------------------------
    def count(self, **match: Any) -> int:
        """Logged requests whose entries have every ``field=value`` of ``match``."""
        with self._lock:
            return sum(all(entry.get(k) == v for k, v in match.items()) for entry in self.log)

    def is_garbage(self, answer: str, choice: int) -> bool:
        return bool(self.garbage_every) and (_digest(answer) + choice) % self.garbage_every == 0

    # -- serving ----------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self.max_in_flight >= self.hold_until_in_flight:
                self._crowded.set()
        try:
            reply = self._serve(handler)
        finally:
            # a request is in flight until its reply goes out: the client may send its next
            # request the moment it has read this one, before this thread runs on
            with self._lock:
                self._in_flight -= 1
        self._send(handler, *reply)

    def _serve(self, handler: BaseHTTPRequestHandler) -> tuple[int, bytes, dict[str, str]]:
        """The reply to one request: status, body and extra headers."""
        raw = handler.rfile.read(int(handler.headers.get("content-length", 0)))
        key = hashlib.sha256(raw).hexdigest()
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
        outcome = self.schedule(key, attempt)
        body = json.loads(raw)
        entry: dict[str, Any] = {
            "path": handler.path,
            "outcome": outcome,
            "attempt": attempt,
            "authorization": handler.headers.get("authorization"),
            "n": body.get("n", 1),
        }
        if self.latency_s:
            time.sleep(self.latency_s)
        self._crowded.wait(self.hold_s)
        if handler.path.endswith("/chat/completions"):
            reply = self._chat(body, entry, outcome)
            if self.edit_reply is not None:
                reply = self.edit_reply(reply)
        elif handler.path.endswith("/embeddings"):
            reply = self._embeddings(body, entry)
        else:
            entry["outcome"] = outcome = "404"
            reply = {"error": {"message": f"no route {handler.path}"}}
        with self._lock:
            self.log.append(entry)
        if outcome in ("401", "404", "429", "500", "503"):
            return (
                int(outcome),
                json.dumps({"error": {"message": outcome}}).encode(),
                # a real server's hint, which the client honours: no backoff to wait
                {"retry-after-ms": "1"} if outcome in ("429", "500", "503") else {},
            )
        if outcome == "not-json":
            return 200, b"<html>upstream hiccup</html>", {}
        if outcome == "timeout":
            time.sleep(self.stall_s)
        return 200, json.dumps(reply).encode(), {}

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str]
    ) -> None:
        try:
            handler.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
            pass

    def _chat(self, body: dict[str, Any], entry: dict[str, Any], outcome: str) -> dict[str, Any]:
        text = "\n".join(m.get("content", "") for m in body["messages"])
        n = body.get("n", 1) if self.supports_n else 1
        pair_judge = self.pair_judge
        pair = _PAIR.search(text) if pair_judge is not None else None
        judged = _ANSWER.search(text) or _MT_ANSWER.search(text) or _CONVERSATION.search(text)
        if pair and pair_judge is not None:
            entry.update(kind="pair-judge", pair=pair.groups())
            reply = pair_judge(*pair.groups())
            contents = ["I would rather not say." if outcome == "garbage" else reply] * n
        elif judged:
            answer = judged.group(judged.lastindex or 0)  # the (last) answer judged
            entry.update(kind="judge", answer=answer)
            contents = []
            for j in range(n):
                if outcome == "garbage" or self.is_garbage(answer, j):
                    contents.append("I would rather not say.")
                else:
                    contents.append(f"Rating: [[{judge_score(answer, j)}]]")
        else:
            with self._lock:
                self._policy_calls += 1
                call = self._policy_calls
            question = body["messages"][-1]["content"]
            entry.update(kind="policy", question=question)
            # a sampler: the same request gives different texts on different calls
            contents = [f"Answer {call}.{j} to: {question[:40]}" for j in range(n)]
        logprobs = (
            self.verdict_probabilities(*pair.groups())
            if pair and body.get("logprobs") and self.verdict_probabilities
            else None
        )
        return {
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": j,
                    "message": {"role": "assistant", "content": c},
                    "finish_reason": "stop",
                    **({"logprobs": _verdict_logprobs(c, logprobs)} if logprobs else {}),
                }
                for j, c in enumerate(contents)
            ],
            "usage": {
                "prompt_tokens": len(text) // 4,
                "completion_tokens": 5 * n,
                "total_tokens": len(text) // 4 + 5 * n,
            },
        }

    def _embeddings(self, body: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        entry.update(kind="embeddings", inputs=list(inputs))
        return {
            "object": "list",
            "model": body.get("model"),
            "data": [
                {"object": "embedding", "index": i, "embedding": embedding(t, self.dimensions)}
                for i, t in enumerate(inputs)
            ],
            "usage": {
                "prompt_tokens": sum(len(t) // 4 for t in inputs),
                "total_tokens": sum(len(t) // 4 for t in inputs),
            },
        }


def embedding(text: str, dimensions: int = 8) -> list[float]:
    """The fake server's embedding of ``text``: deterministic, unit length."""
    raw = [((_digest(f"{i}:{text}") % 2001) - 1000) / 1000 for i in range(dimensions)]
    norm = sum(v * v for v in raw) ** 0.5 or 1.0
    return [v / norm for v in raw]


def _verdict_logprobs(reply: str, probabilities: dict[str, float]) -> dict[str, Any]:
    """``logprobs.content`` of a reply: its text before the last ``[[`` and ``[[`` as tokens,
    the verdict letter with ``probabilities`` as its top alternatives, then the rest."""
    import math

    cut = reply.rfind("[[")
    if cut < 0:
        return {"content": [{"token": reply, "logprob": 0.0, "top_logprobs": []}]}
    top = [
        {"token": letter, "logprob": math.log(p) if p > 0 else -1e4}
        for letter, p in probabilities.items()
    ]
    head = [{"token": t, "logprob": 0.0, "top_logprobs": []} for t in (reply[:cut], "[[")]
    letter = reply[cut + 2 : cut + 3]
    tail = {"token": reply[cut + 3 :], "logprob": 0.0, "top_logprobs": []}
    return {"content": [*head, {"token": letter, "logprob": 0.0, "top_logprobs": top}, tail]}
