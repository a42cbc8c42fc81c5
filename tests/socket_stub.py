"""A stand-in for Slack's Socket Mode WebSocket server on loopback: RFC 6455 over stdlib sockets, nothing more.

How the bot gets here: slack_sdk's builtin SocketModeClient calls `apps.connections.open` with the app token on
the Web API (tests/slack_stub.py answers it with `stub.socket_url = ws.url`) and dials the returned URL; for a
port other than 443 it uses a plain TCP socket, so `ws://127.0.0.1:PORT/link/?ticket=...` needs no TLS.

What this server does, as Slack's does (https://docs.slack.dev/apis/events-api/using-socket-mode/):
- the opening handshake: `GET <path>` with Upgrade/Connection/Sec-WebSocket-Key/-Version 13, answered
  `101 Switching Protocols` with the Sec-WebSocket-Accept of RFC 6455 section 4.2.2 (a bad request gets a 400);
- a `hello` message first, then whatever the test sends: `envelope(type, payload)` wraps a payload the way
  Slack does (envelope_id, type, accepts_response_payload, and for events_api retry_attempt/retry_reason);
- text frames from the client (which must be masked, section 5.1) are recorded as JSON in `received`; the bot
  ACKs an envelope with `{"envelope_id": ..., "payload"?: ...}` (`wait_ack(envelope_id)`);
- pings from the client are answered with a pong carrying the same payload; `ping()` sends one to the client
  and `wait_pong()` waits for its answer; a close frame is echoed and ends the connection.
Not supported (the builtin client never sends them): fragmented messages, binary frames, extensions.
Protocol errors seen on the client's side are collected in `errors` for the test to assert empty.
"""
from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import time
import uuid
from typing import Any, Callable

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
MAX_FRAME = 1 << 20


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def frame(opcode: int, payload: bytes = b"") -> bytes:
    """One unmasked, final frame (servers never mask, RFC 6455 section 5.1)."""
    n = len(payload)
    if n <= 125:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n <= 0xFFFF:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


class _Closed(Exception):
    pass


class SocketModeStub:
    def __init__(self, app_id: str = "A0GPUADV"):
        self.app_id = app_id
        self.ticket = uuid.uuid4().hex
        self.path = f"/link/?ticket={self.ticket}&app_id={app_id}"
        self.handshakes: list[dict[str, Any]] = []       # {"path", "headers"} per accepted connection
        self.received: list[dict[str, Any]] = []         # text frames from the client, parsed
        self.pings: list[bytes] = []                     # pings the client sent (each answered)
        self.pongs: list[bytes] = []                     # pongs the client sent
        self.errors: list[str] = []                      # protocol violations by the client
        self._cond = threading.Condition()
        self._send_lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._conn: socket.socket | None = None          # the newest connection: where send() goes
        self._closing = False
        self._threads: list[threading.Thread] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.url = f"ws://127.0.0.1:{self.port}{self.path}"
        self._spawn(self._accept_loop, "socket-stub-accept")

    # ----- the test's side --------------------------------------------------------------------------------
    def wait_for(self, pred: Callable[["SocketModeStub"], Any], timeout: float = 5.0, what: str = "") -> Any:
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                value = pred(self)
                if value:
                    return value
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout}s waiting for {what or pred}; "
                                         f"received: {self.received}, errors: {self.errors}")
                self._cond.wait(min(left, 0.05))

    @property
    def connected(self) -> bool:
        """Whether a client is connected now (False once it closed its connection)."""
        return self._conn is not None

    def wait_connected(self, timeout: float = 10.0) -> dict[str, Any]:
        return self.wait_for(lambda s: s.connected and s.handshakes[-1], timeout, "a connection")

    def send_json(self, message: dict[str, Any]) -> None:
        self._send(OP_TEXT, json.dumps(message).encode())

    def envelope(self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0, retry_reason: str = "",
                 envelope_id: str | None = None) -> str:
        """Send `payload` in a Socket Mode envelope of type `kind`; its envelope_id."""
        envelope_id = envelope_id or str(uuid.uuid4())
        message: dict[str, Any] = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                                   "accepts_response_payload": kind != "events_api"}
        if kind == "events_api":
            message.update(retry_attempt=retry_attempt, retry_reason=retry_reason)
        self.send_json(message)
        return envelope_id

    def acks(self, envelope_id: str) -> list[dict[str, Any]]:
        with self._cond:
            return [m for m in self.received if m.get("envelope_id") == envelope_id]

    def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict[str, Any]:
        return self.wait_for(lambda s: s.acks(envelope_id), timeout, f"the ACK of {envelope_id}")[0]

    def ping(self, payload: bytes) -> None:
        self._send(OP_PING, payload)

    def wait_pong(self, payload: bytes, timeout: float = 5.0) -> bytes:
        return self.wait_for(lambda s: payload in s.pongs and payload, timeout, f"a pong {payload!r}")

    def close(self) -> None:
        self._closing = True
        with self._cond:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
        self.server.close()
        for t in self._threads:
            t.join(2)

    # ----- the server -------------------------------------------------------------------------------------
    def _spawn(self, target: Callable, name: str, *args: Any) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def _error(self, message: str) -> None:
        with self._cond:
            self.errors.append(message)
            self._cond.notify_all()

    def _accept_loop(self) -> None:
        while not self._closing:
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._spawn(self._serve, "socket-stub-conn", conn)

    def _send(self, opcode: int, payload: bytes, conn: socket.socket | None = None) -> None:
        conn = conn or self._conn
        if conn is None:
            raise AssertionError("no client is connected")
        with self._send_lock:
            conn.sendall(frame(opcode, payload))

    def _serve(self, conn: socket.socket) -> None:
        with self._cond:
            self._conns.append(conn)
        try:
            if self._handshake(conn):
                self._frames(conn)
        except (_Closed, OSError):
            pass
        finally:
            with self._cond:
                if self._conn is conn:
                    self._conn = None
                self._cond.notify_all()
            conn.close()

    def _handshake(self, conn: socket.socket) -> bool:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk or len(data) > 16384:
                self._error("the handshake request ended early or is too long")
                return False
            data += chunk
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        request_line, *lines = head.split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        method, path, version = (request_line.split(" ") + ["", "", ""])[:3]
        key = headers.get("sec-websocket-key", "")
        problems = []
        if method != "GET" or version != "HTTP/1.1":
            problems.append(f"request line {request_line!r}")
        if path != self.path:
            problems.append(f"path {path!r}, not {self.path!r}")
        if headers.get("upgrade", "").lower() != "websocket":
            problems.append("no Upgrade: websocket")
        if "upgrade" not in headers.get("connection", "").lower():
            problems.append("no Connection: Upgrade")
        if headers.get("sec-websocket-version") != "13":
            problems.append("Sec-WebSocket-Version is not 13")
        try:
            if len(base64.b64decode(key, validate=True)) != 16:
                problems.append("Sec-WebSocket-Key is not 16 bytes")
        except ValueError:
            problems.append("Sec-WebSocket-Key is not base64")
        if problems:
            self._error("bad handshake: " + "; ".join(problems))
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return False
        conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept_key(key)}\r\n\r\n").encode())
        conn.settimeout(None)                  # close() unblocks recv by shutting the socket down
        with self._cond:
            self.handshakes.append({"path": path, "headers": headers})
            self._conn = conn
            self._cond.notify_all()
        self._send(OP_TEXT, json.dumps({
            "type": "hello", "num_connections": 1,
            "debug_info": {"host": "applink-stub", "build_number": 1, "approximate_connection_time": 18060},
            "connection_info": {"app_id": self.app_id}}).encode(), conn)
        return True

    def _recv_exact(self, conn: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise _Closed()
            data += chunk
        return data

    def _frames(self, conn: socket.socket) -> None:
        while not self._closing:
            b1, b2 = self._recv_exact(conn, 2)
            fin, opcode, masked, n = b1 & 0x80, b1 & 0x0F, b2 & 0x80, b2 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._recv_exact(conn, 2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._recv_exact(conn, 8))[0]
            if n > MAX_FRAME:
                self._error(f"a frame of {n} bytes")
                return
            mask = self._recv_exact(conn, 4) if masked else b""
            data = self._recv_exact(conn, n)
            if masked:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            else:
                self._error(f"an unmasked frame (opcode {opcode}) from the client")
            if not fin or opcode in (OP_CONT, OP_BINARY):
                self._error(f"an unsupported frame (fin {bool(fin)}, opcode {opcode})")
                continue
            if opcode == OP_PING:
                with self._cond:
                    self.pings.append(data)
                self._send(OP_PONG, data, conn)
            elif opcode == OP_PONG:
                with self._cond:
                    self.pongs.append(data)
                    self._cond.notify_all()
            elif opcode == OP_TEXT:
                try:
                    message = json.loads(data.decode("utf-8"))
                except ValueError:
                    self._error(f"a text frame that is not JSON: {data[:200]!r}")
                    continue
                with self._cond:
                    self.received.append(message)
                    self._cond.notify_all()
            elif opcode == OP_CLOSE:
                self._send(OP_CLOSE, data[:2], conn)
                return
            else:
                self._error(f"an unknown opcode {opcode}")
