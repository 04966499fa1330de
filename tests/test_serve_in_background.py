"""rmaudit.testing.fake_openai.serve_in_background, the server under every test server: it
listens before it returns, answers a burst of connections at once, sends each reply without
waiting for the client's ACK (TCP_NODELAY), and refuses connections once it is shut down."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler

from rmaudit.testing.fake_openai import serve_in_background

BURST = 64  # more connections at once than the standard library's backlog of 5


class Echo(BaseHTTPRequestHandler):
    """Replies with whether its connection has TCP_NODELAY set, headers and body apart."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - the http.server hook
        body = str(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _get(port: int) -> bytes:
    connection = HTTPConnection("127.0.0.1", port)
    try:
        connection.request("GET", "/")
        return connection.getresponse().read()
    finally:
        connection.close()


def test_a_burst_of_connections_is_answered_each_without_nagle_and_stops_when_shut_down():
    server = serve_in_background(Echo)
    port = server.server_address[1]
    try:
        with ThreadPoolExecutor(BURST) as pool:
            replies = list(pool.map(_get, [port] * BURST))
        assert len(replies) == BURST and all(int(reply) != 0 for reply in replies)
        assert server.request_queue_size >= BURST  # listen()'s backlog, set before it ran
    finally:
        server.shutdown()
        server.server_close()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # nothing listens any more
