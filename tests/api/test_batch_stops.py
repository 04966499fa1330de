"""When one request of a batch fails (a reply the component refuses), the batch stops: no
request is sent after it, and the ones already sent are awaited, their replies cached, so a
rerun pays for none of them again (``ApiSession.gather``)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

import pytest

from rmaudit.backends.openai_api.client import ApiClient
from rmaudit.backends.openai_api.options import ApiConnection
from rmaudit.errors import BadInput
from rmaudit.testing.fake_openai import serve_in_background

#: what the client does with the refused reply: it raises as it reads it
REFUSED = "refused"
#: a request in flight when the refused reply is read: its reply is held until then
IN_FLIGHT = "in flight"
#: a request waiting for a free slot (concurrency 2) when the batch stops
QUEUED = "queued"


class _Server:
    def __init__(self) -> None:
        self.received: list[str] = []
        self.refused_read = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                which = body["messages"][0]["content"]
                server.received.append(which)
                if which == IN_FLIGHT:
                    assert server.refused_read.wait(timeout=600)
                reply = json.dumps({"choices": [{"message": {"content": which}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.http = serve_in_background(Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"


@pytest.fixture
def server():
    found = _Server()
    yield found
    found.refused_read.set()
    found.http.shutdown()
    found.http.server_close()


def _client(server: _Server, tmp_path, concurrency: int) -> ApiClient:
    connection = ApiConnection(
        base_url=server.base_url,
        api_key_env=None,
        concurrency=concurrency,
        cache=tmp_path / "requests.sqlite",
    )
    return ApiClient(connection)


def _request(which: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": which}]}


def test_a_refused_reply_stops_the_batch_and_keeps_the_replies_in_flight(server, tmp_path):
    client = _client(server, tmp_path, concurrency=2)
    keys = {w: client.request_key("chat/completions", _request(w)) for w in (IN_FLIGHT, QUEUED)}

    async def call(session, which: str) -> str:
        body = await session.post("chat/completions", _request(which), cache_key=keys.get(which))
        if which == REFUSED:
            server.refused_read.set()
            raise BadInput("the reply holds no rating", field="reply")
        return body["choices"][0]["message"]["content"]

    def work(session):
        return session.gather(call(session, w) for w in (REFUSED, IN_FLIGHT, QUEUED))

    with pytest.raises(BadInput, match="no rating"):
        client.run(work)
    # the request in flight was answered and cached; the queued one was never sent
    assert sorted(server.received) == sorted([REFUSED, IN_FLIGHT])
    assert client.cache.get(keys[IN_FLIGHT]) is not None
    assert client.cache.get(keys[QUEUED]) is None


def test_a_call_not_sent_is_never_the_error_raised(server, tmp_path):
    # a nested batch: the inner one's refusal stops the session while a call of the outer
    # batch, listed first, waits for the one slot; the refusal is raised, not that call's stop
    client = _client(server, tmp_path, concurrency=1)

    async def work(session) -> list:
        import asyncio

        holds_the_slot = asyncio.Event()

        async def refused() -> str:
            holds_the_slot.set()  # its post takes the free slot before this task yields
            await session.post("chat/completions", _request(REFUSED), cache_key=None)
            server.refused_read.set()
            raise BadInput("the reply holds no verdict", field="reply")

        async def queued() -> dict:
            await holds_the_slot.wait()
            return await session.post("chat/completions", _request(QUEUED), cache_key=None)

        return await session.gather([queued(), session.gather([refused()])])

    with pytest.raises(BadInput, match="no verdict"):
        client.run(work)
    assert server.received == [REFUSED]
