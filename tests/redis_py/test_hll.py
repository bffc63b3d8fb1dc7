"""HyperLogLogs through redis-py's own helpers (`pfadd`, `pfcount`, `pfmerge`, `get`,
`set`, `type`, pipelines) in RESP2 and RESP3, each answer checked against a plain
redis-server run side by side when one is installed (Debian's; scripts/setup installs
it), and against Redis 7.0.15's recorded answers otherwise.

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary.
"""

import shutil
import socket
import subprocess
import time
import unittest

import redis

from test_serve import OneServer


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PlainRedis:
    """Debian's redis-server on a free port, in memory only."""

    def __init__(self):
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=subprocess.DEVNULL)
        for _ in range(200):
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def close(self):
        self.proc.kill()
        self.proc.wait()


class Hll(OneServer):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.plain = PlainRedis() if shutil.which("redis-server") else None

    @classmethod
    def tearDownClass(cls):
        if cls.plain:
            cls.plain.close()
        super().tearDownClass()

    def both(self, run):
        """`run(client)` on rocksketch, and on redis-server if there is one: equal."""
        ours = run(self.r)
        if self.plain:
            theirs = redis.Redis(port=self.plain.port, protocol=self.protocol)
            self.assertEqual(ours, run(theirs))
            theirs.close()
        return ours

    def test_helpers_answer_as_redis(self):
        def steps(r):
            r.flushall()
            out = [r.pfadd("day1", "alice", "bob", "carol"), r.pfadd("day1", "alice"),
                   r.pfadd("day2", *[f"user{i}" for i in range(5000)]), r.pfadd("empty"),
                   r.pfcount("day1"), r.pfcount("day2"), r.pfcount("day1", "day2", "none"),
                   r.pfmerge("week", "day1", "day2"), r.pfcount("week"), r.type("week"),
                   r.pfcount("none"), r.pfcount("empty")]
            pipe = r.pipeline(transaction=False)
            for i in range(100):
                pipe.pfadd("piped", f"p{i % 37}")
                pipe.pfcount("piped")
            out.append(pipe.execute())
            return out

        got = self.both(steps)
        self.assertEqual(got[:4], [1, 0, 1, 1])
        self.assertEqual(got[4:7], [3, 4994, 4998])
        self.assertEqual(got[9], b"string")

    def test_errors_answer_as_redis(self):
        self.r.execute_command("BF.ADD", "filter", "x")
        for call in (lambda: self.r.pfadd("filter", "a"), lambda: self.r.pfcount("filter"),
                     lambda: self.r.pfmerge("d", "filter"), lambda: self.r.get("filter")):
            with self.assertRaisesRegex(redis.ResponseError, "^WRONGTYPE Operation against"):
                call()
        with self.assertRaisesRegex(redis.ResponseError, "not a valid HyperLogLog"):
            self.r.set("s", "hello")
        with self.assertRaisesRegex(redis.ResponseError, "^The specified key does not exist"):
            self.r.execute_command("PFDEBUG", "GETREG", "missing")

    def test_a_copy_moves_both_ways_with_get_and_set(self):
        self.r.pfadd("src", *[f"v{i}" for i in range(2000)])
        ours = self.r.get("src")
        self.assertTrue(ours.startswith(b"HYLL"))
        self.assertTrue(self.r.set("copy", ours))
        self.assertEqual(self.r.pfcount("copy"), self.r.pfcount("src"))
        if self.plain:
            theirs = redis.Redis(port=self.plain.port, protocol=self.protocol)
            theirs.set("from-rocksketch", ours)
            self.assertEqual(theirs.pfcount("from-rocksketch"), self.r.pfcount("src"))
            theirs.pfadd("native", *[f"n{i}" for i in range(300)])
            self.assertTrue(self.r.set("from-redis", theirs.get("native")))
            self.assertEqual(self.r.pfcount("from-redis"), theirs.pfcount("native"))
            theirs.close()


class Resp2(Hll, unittest.TestCase):
    protocol = 2


class Resp3(Hll, unittest.TestCase):
    protocol = 3


if __name__ == "__main__":
    unittest.main()
