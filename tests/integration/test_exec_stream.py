"""An exec's output is read whole even when it arrives with the engine's HTTP answer.

A server on 127.0.0.1 answers an exec start as the Docker engine does (`101 UPGRADED`, then
the command's output in multiplexed frames), but sends everything in one write, as a busy
engine with a fast command does: the output is already in the HTTP parser's buffer when the
headers are read.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import docker

from netdojo.labs.exec_stream import STDERR, exec_frames

FRAMES = [(1, b"first line\n" * 300), (STDERR, b"a warning\n"), (1, b"last line\n")]


def _frame(stream: int, data: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data


@contextmanager
def _engine() -> Iterator[int]:
    """A one-shot engine that answers any request with an upgraded exec stream."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(4096)
            head, _, body = request.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            while len(body) < length:
                body += conn.recv(4096)
            answer = (
                b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
            )
            conn.sendall(answer + b"".join(_frame(s, d) for s, d in FRAMES))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        thread.join(timeout=5)
        listener.close()


def test_output_sent_with_the_answer_is_not_lost() -> None:
    with _engine() as port:
        api = docker.APIClient(base_url=f"tcp://127.0.0.1:{port}", version="1.41", timeout=10)
        assert list(exec_frames(api, "0123abcd")) == FRAMES
