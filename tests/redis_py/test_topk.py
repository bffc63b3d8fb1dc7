"""TOPK.* through redis-py (PyPI `redis`) in RESP2 and RESP3, with the raw reply types
RedisBloom sends (`TOPK.QUERY` booleans in RESP3, nulls for nothing expelled, INFO as a
flat array or a map with a double decay).

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary.
"""

import unittest

import redis

from test_serve import OneServer, fields, text
from test_tdigest import raw


class TopK(OneServer):
    def setUp(self):
        super().setUp()
        self.tk = self.r.topk()

    def test_every_command(self):
        tk = self.tk
        self.assertTrue(tk.reserve("t", 2, 8, 7, 0.9))
        self.assertEqual(self.r.type("t"), b"TopK-TYPE")
        self.assertEqual(tk.add("t", "a", "a", "b"), [None, None, None])
        # c's count (1) reaches the heap's minimum (b's 1): c takes b's place.
        self.assertEqual([text(x) for x in tk.add("t", "c")], ["b"])
        self.assertEqual(tk.incrby("t", ["c", "d"], [5, 1]), [None, None])
        self.assertEqual(tk.query("t", "a", "b", "c"), [1, 0, 1])
        self.assertEqual(tk.count("t", "a", "c"), [2, 6])
        self.assertEqual([text(x) for x in tk.list("t")], ["c", "a"])
        self.assertEqual(
            [text(x) for x in tk.list("t", withcount=True)], ["c", 6, "a", 2]
        )
        info = tk.info("t")
        if isinstance(info, dict):
            info = fields(info)
            self.assertEqual((info["k"], info["width"], info["depth"]), (2, 8, 7))
            self.assertAlmostEqual(float(info["decay"]), 0.9)
        else:
            self.assertEqual((info.k, info.width, info.depth), (2, 8, 7))
            self.assertAlmostEqual(float(info.decay), 0.9)
        # The defaults: width 8, depth 7, decay 0.9.
        self.assertTrue(self.r.execute_command("TOPK.RESERVE", "d", 3))
        self.assertTrue(
            raw(self.server.port, 2, "TOPK.INFO", "d").startswith(
                b"*8\r\n+k\r\n:3\r\n+width\r\n:8\r\n+depth\r\n:7\r\n"
            )
        )

    def test_keyspace_commands(self):
        self.tk.reserve("k1", 3, 8, 7, 0.9)
        self.r.tdigest().create("d1")
        self.assertEqual(sorted(self.r.scan_iter(_type="TopK-TYPE")), [b"k1"])
        self.assertEqual(sorted(self.r.scan_iter(_type="TDIS-TYPE")), [b"d1"])
        self.assertTrue(self.r.expire("k1", 100))
        self.assertGreater(self.r.ttl("k1"), 0)
        self.assertEqual(self.r.delete("k1", "d1"), 2)
        self.assertEqual(self.r.exists("k1", "d1"), 0)

    def test_errors(self):
        with self.assertRaisesRegex(redis.ResponseError, "^TopK: key does not exist$"):
            self.tk.add("missing", "x")
        self.tk.reserve("t", 2, 8, 7, 0.9)
        with self.assertRaisesRegex(redis.ResponseError, "^TopK: key already exists$"):
            self.tk.reserve("t", 2, 8, 7, 0.9)
        with self.assertRaisesRegex(redis.ResponseError, "^TopK: invalid k$"):
            self.tk.reserve("u", 0, 8, 7, 0.9)
        with self.assertRaisesRegex(redis.ResponseError, "^WITHCOUNT keyword expected$"):
            self.r.execute_command("TOPK.LIST", "t", "NOPE")
        self.r.cms().initbydim("c", 10, 2)
        with self.assertRaisesRegex(redis.ResponseError, "^WRONGTYPE"):
            self.tk.add("c", "x")
        self.assertEqual(
            raw(self.server.port, self.protocol, "TOPK.INCRBY", "t", "x", "100001"),
            b"*1\r\n-TopK: increment must be an integer greater or equal to 0"
            + b" " * 28
            + b"and smaller or equal to 100,000\r\n",
        )

    def test_pipelined_adds_count_every_item(self):
        self.tk.reserve("p", 5, 2000, 5, 0.9)
        pipe = self.r.pipeline(transaction=False)
        for i in range(300):
            pipe.execute_command("TOPK.ADD", "p", f"hot{i % 3}")
        self.assertEqual(len(pipe.execute()), 300)
        self.assertEqual(self.tk.count("p", "hot0", "hot1", "hot2"), [100, 100, 100])

    def test_raw_reply_types(self):
        self.tk.reserve("e", 1, 8, 7, 0.9)
        port = self.server.port
        if self.protocol == 2:
            self.assertEqual(raw(port, 2, "TOPK.ADD", "e", "a"), b"*1\r\n$-1\r\n")
            self.assertEqual(raw(port, 2, "TOPK.QUERY", "e", "a", "b"), b"*2\r\n:1\r\n:0\r\n")
            self.assertTrue(raw(port, 2, "TOPK.INFO", "e").endswith(b"+decay\r\n$3\r\n0.9\r\n"))
        else:
            self.assertEqual(raw(port, 3, "TOPK.ADD", "e", "a"), b"*1\r\n_\r\n")
            self.assertEqual(raw(port, 3, "TOPK.QUERY", "e", "a", "b"), b"*2\r\n#t\r\n#f\r\n")
            self.assertTrue(raw(port, 3, "TOPK.INFO", "e").startswith(b"%4\r\n"))
            self.assertTrue(raw(port, 3, "TOPK.INFO", "e").endswith(b"+decay\r\n,0.9\r\n"))


class Resp2(TopK, unittest.TestCase):
    protocol = 2


class Resp3(TopK, unittest.TestCase):
    protocol = 3


if __name__ == "__main__":
    unittest.main()
