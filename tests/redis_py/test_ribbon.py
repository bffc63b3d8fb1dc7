"""RIBBON.* through redis-py (PyPI `redis`) in RESP2 and RESP3: every command, its
errors, the raw reply types, pipelines, the keyspace commands, and a dump restored into
a new key.

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary.
"""

import unittest

import redis

from test_serve import OneServer, fields, text
from test_tdigest import raw


def info(r, key):
    reply = r.execute_command("RIBBON.INFO", key)
    if isinstance(reply, dict):
        return fields(reply)
    return {text(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}


class Ribbon(OneServer):
    def cmd(self, *args):
        return self.r.execute_command(*args)

    def test_every_command(self):
        self.assertTrue(self.cmd("RIBBON.RESERVE", "r", "0.0078125"))
        self.assertEqual(self.r.type("r"), b"RKribbon-")
        self.assertEqual(self.cmd("RIBBON.ADD", "r", "a", "b", "c"), 3)
        self.assertEqual(self.cmd("RIBBON.EXISTS", "r", "a"), 1)
        self.assertEqual(self.cmd("RIBBON.EXISTS", "r", "nope"), 0)
        staged = info(self.r, "r")
        self.assertEqual(staged["Items staged"], 3)
        self.assertEqual(staged["Result bits"], 7)
        self.assertEqual(self.cmd("RIBBON.BUILD", "r"), 3)
        self.assertEqual(self.cmd("RIBBON.MEXISTS", "r", "a", "b", "c", "x"), [1, 1, 1, 0])
        built = info(self.r, "r")
        self.assertEqual((built["Generations"], built["Items built"]), (1, 3))
        self.assertEqual(built["Items staged"], 0)
        self.assertGreater(built["Size"], 0)
        # One field: its value in RESP2, a map of it in RESP3 (as BF.INFO answers).
        one = {b"Items built": 3} if self.protocol == 3 else [3]
        self.assertEqual(self.cmd("RIBBON.INFO", "r", "built"), one)
        self.assertEqual(self.cmd("RIBBON.BUILD", "r"), 0)
        # A missing key: ADD creates it, EXISTS says 0, INFO and BUILD say not found.
        self.assertEqual(self.cmd("RIBBON.EXISTS", "new", "a"), 0)
        self.assertEqual(self.cmd("RIBBON.MEXISTS", "new", "a", "b"), [0, 0])
        self.assertEqual(self.cmd("RIBBON.ADD", "new", "a"), 1)
        self.assertAlmostEqual(float(info(self.r, "new")["Error rate"]), 0.01)

    def test_many_items_across_builds(self):
        items = [f"item:{i}" for i in range(20000)]
        for start in range(0, 20000, 5000):
            self.cmd("RIBBON.ADD", "m", *items[start : start + 5000])
            if start % 10000 == 0:
                self.assertEqual(self.cmd("RIBBON.BUILD", "m"), 5000 + (start > 0) * 5000)
        found = self.cmd("RIBBON.MEXISTS", "m", *items)
        self.assertEqual(sum(found), 20000)
        absent = self.cmd("RIBBON.MEXISTS", "m", *[f"absent:{i}" for i in range(20000)])
        # Two generations at 2^-7 each: about 312 expected; far below 700.
        self.assertLess(sum(absent), 700)

    def test_errors(self):
        with self.assertRaisesRegex(redis.ResponseError, "^not found$"):
            self.cmd("RIBBON.INFO", "missing")
        with self.assertRaisesRegex(redis.ResponseError, "^not found$"):
            self.cmd("RIBBON.BUILD", "missing")
        for bad in ["abc", "nan", ""]:
            with self.assertRaisesRegex(redis.ResponseError, "^bad error rate$"):
                self.cmd("RIBBON.RESERVE", "e", bad)
        for bad in ["0", "1", "-0.5", "1e-10", "inf"]:
            with self.assertRaisesRegex(redis.ResponseError, "^error rate must be in the range"):
                self.cmd("RIBBON.RESERVE", "e", bad)
        self.cmd("RIBBON.RESERVE", "e", "0.1")
        with self.assertRaisesRegex(redis.ResponseError, "^item exists$"):
            self.cmd("RIBBON.RESERVE", "e", "0.1")
        with self.assertRaisesRegex(redis.ResponseError, "^Invalid information value$"):
            self.cmd("RIBBON.INFO", "e", "nope")
        for args in [("RIBBON.ADD", "e"), ("RIBBON.EXISTS", "e"), ("RIBBON.BUILD",),
                     ("RIBBON.RESERVE", "e"), ("RIBBON.MEXISTS", "e")]:
            with self.assertRaisesRegex(redis.ResponseError, "^wrong number of arguments"):
                self.cmd(*args)
        self.r.cms().initbydim("c", 10, 2)
        for args in [("RIBBON.ADD", "c", "x"), ("RIBBON.EXISTS", "c", "x"),
                     ("RIBBON.BUILD", "c"), ("RIBBON.INFO", "c")]:
            with self.assertRaisesRegex(redis.ResponseError, "^WRONGTYPE"):
                self.cmd(*args)

    def test_pipelines_stage_every_item(self):
        pipe = self.r.pipeline(transaction=False)
        for i in range(300):
            pipe.execute_command("RIBBON.ADD", "p", f"x{i}", f"y{i}")
        self.assertEqual(pipe.execute(), [2] * 300)
        pipe = self.r.pipeline(transaction=False)
        for i in range(300):
            pipe.execute_command("RIBBON.EXISTS", "p", f"y{i}")
        self.assertEqual(pipe.execute(), [1] * 300)
        self.assertEqual(self.cmd("RIBBON.BUILD", "p"), 600)

    def test_keyspace_and_dump(self):
        self.cmd("RIBBON.ADD", "k", *[f"i{n}" for n in range(30000)])
        self.cmd("RIBBON.BUILD", "k")
        self.cmd("RIBBON.ADD", "k", "staged1", "staged2")
        self.assertEqual(list(self.r.scan_iter(_type="RKribbon-")), [b"k"])
        chunks, cursor = [], 0
        while True:
            cursor, data = self.cmd("RIBBON.SCANDUMP", "k", cursor)
            if cursor == 0:
                break
            chunks.append((cursor, data))
        self.assertGreater(len(chunks), 2)
        for cursor, data in chunks:
            self.assertTrue(self.cmd("RIBBON.LOADCHUNK", "copy", cursor, data))
        self.assertEqual(info(self.r, "copy"), info(self.r, "k"))
        probe = ["staged1", "staged2"] + [f"i{n}" for n in range(0, 30000, 7)]
        self.assertEqual(sum(self.cmd("RIBBON.MEXISTS", "copy", *probe)), len(probe))
        with self.assertRaisesRegex(redis.ResponseError, "^received bad data$"):
            self.cmd("RIBBON.LOADCHUNK", "copy2", 1, b"garbage")
        self.assertTrue(self.r.expire("k", 100))
        self.assertGreater(self.r.ttl("k"), 0)
        self.assertEqual(self.r.delete("k", "copy"), 2)
        self.assertEqual(self.cmd("RIBBON.EXISTS", "k", "i1"), 0)

    def test_raw_reply_types(self):
        port = self.server.port
        self.cmd("RIBBON.ADD", "t", "a")
        if self.protocol == 2:
            self.assertEqual(raw(port, 2, "RIBBON.EXISTS", "t", "a"), b":1\r\n")
            self.assertEqual(raw(port, 2, "RIBBON.MEXISTS", "t", "a", "b"), b"*2\r\n:1\r\n:0\r\n")
            self.assertTrue(raw(port, 2, "RIBBON.INFO", "t").startswith(
                b"*14\r\n+Error rate\r\n$4\r\n0.01\r\n+Result bits\r\n:7\r\n"))
        else:
            self.assertEqual(raw(port, 3, "RIBBON.EXISTS", "t", "a"), b"#t\r\n")
            self.assertEqual(raw(port, 3, "RIBBON.MEXISTS", "t", "a", "b"), b"*2\r\n#t\r\n#f\r\n")
            self.assertTrue(raw(port, 3, "RIBBON.INFO", "t").startswith(
                b"%7\r\n+Error rate\r\n,0.01\r\n+Result bits\r\n:7\r\n"))


class Resp2(Ribbon, unittest.TestCase):
    protocol = 2


class Resp3(Ribbon, unittest.TestCase):
    protocol = 3


if __name__ == "__main__":
    unittest.main()
