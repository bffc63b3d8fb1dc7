"""A raw RESP2/RESP3 client for the differential test: commands go out pipelined, and
each reply comes back as a tree that keeps what a client could observe (the reply's
type marker and its exact bytes), so two servers' replies compare with `==`.

A reply is a tuple `(marker, value)`: `+ - , ( =` carry the line's bytes, `:` an int,
`#` a bool, `_` None, `$` bytes or None, `* ~ >` a list of replies (or None for a
RESP2 null array), `%` and `|` a list of (key, value) pairs in wire order.
"""

import socket


class Closed(Exception):
    """The server closed the connection (or it died) while a reply was awaited."""


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port, timeout=60.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        self.sock.close()

    def call(self, *args):
        return self.pipeline([args])[0]

    def pipeline(self, commands):
        """Sends every command, then reads one reply for each."""
        self.sock.sendall(b"".join(encode(c) for c in commands))
        return [self.reply() for _ in commands]

    def _fill(self):
        if self.pos > 65536:
            del self.buf[: self.pos]
            self.pos = 0
        try:
            chunk = self.sock.recv(1 << 20)
        except (ConnectionError, socket.timeout) as e:
            raise Closed(str(e)) from e
        if not chunk:
            raise Closed("EOF")
        self.buf += chunk

    def _line(self):
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line = bytes(self.buf[self.pos : end])
                self.pos = end + 2
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        data = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n + 2
        return data

    def reply(self):
        line = self._line()
        marker, rest = chr(line[0]), line[1:]
        if marker in "+-,(":
            return (marker, rest)
        if marker == ":":
            return (marker, int(rest))
        if marker == "#":
            return (marker, rest == b"t")
        if marker == "_":
            return (marker, None)
        if marker in "$=!":
            n = int(rest)
            return (marker, None if n < 0 else self._exact(n))
        if marker in "*~>":
            n = int(rest)
            return (marker, None if n < 0 else [self.reply() for _ in range(n)])
        if marker in "%|":
            return (marker, [(self.reply(), self.reply()) for _ in range(int(rest))])
        raise ValueError(f"not a RESP reply: {line!r}")


def show(reply):
    """A reply as one readable line, in the spirit of redis-cli."""
    marker, value = reply
    if marker in "+-,(=!":
        text = value.decode("utf-8", "backslashreplace")
        return {"+": text, "-": f"(error) {text}", ",": f"(double) {text}"}.get(marker, text)
    if marker == ":":
        return f"(integer) {value}"
    if marker == "#":
        return f"(boolean) {str(value).lower()}"
    if marker == "_" or value is None:
        return "(nil)"
    if marker == "$":
        return repr(value)[1:] if len(value) <= 80 else f"<{len(value)} bytes>"
    if marker in "%|":
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value) + "}"
    open_, close = {"*": "[]", "~": "{}", ">": "<>"}[marker]
    return open_ + ", ".join(show(v) for v in value) + close
