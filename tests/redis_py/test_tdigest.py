"""TDIGEST.* through redis-py (PyPI `redis`) in RESP2 and RESP3, and the raw reply
types RedisBloom sends: doubles as bulk strings in RESP2 and RESP3 doubles
(`,nan`, `,inf`, `,-inf` included), INFO as a flat array or a map.

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary.
"""

import math
import socket
import unittest

import redis

from test_serve import OneServer, fields


def raw(port, protocol, *args):
    """One command's reply bytes on a fresh connection speaking `protocol`."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        def send(words):
            out = b"*%d\r\n" % len(words)
            for w in words:
                w = w.encode() if isinstance(w, str) else w
                out += b"$%d\r\n%s\r\n" % (len(w), w)
            s.sendall(out)

        def read_reply():
            data = b""
            while True:
                chunk = s.recv(65536)
                data += chunk
                if not chunk or data.endswith(b"\r\n"):
                    return data

        if protocol == 3:
            send(["HELLO", "3"])
            read_reply()
        send(list(args))
        return read_reply()


class Digests(OneServer):
    def setUp(self):
        super().setUp()
        self.td = self.r.tdigest()

    def test_every_command(self):
        td = self.td
        self.assertTrue(td.create("t", compression=100))
        self.assertEqual(self.r.type("t"), b"TDIS-TYPE")
        self.assertTrue(td.add("t", list(range(1, 101))))
        self.assertEqual(td.min("t"), 1.0)
        self.assertEqual(td.max("t"), 100.0)
        q = td.quantile("t", 0.5, 0.9)
        self.assertAlmostEqual(float(q[0]), 50.5, delta=1)
        self.assertAlmostEqual(float(q[1]), 90.5, delta=1)
        self.assertAlmostEqual(float(td.cdf("t", 50)[0]), 0.495, delta=0.01)
        self.assertEqual(td.rank("t", 0, 50, 1000), [-1, 49, 100])
        self.assertEqual(td.revrank("t", 0, 50, 1000), [100, 50, -1])
        self.assertEqual([float(x) for x in td.byrank("t", 0, 99)], [1.0, 100.0])
        self.assertEqual(float(td.byrank("t", 100)[0]), math.inf)
        self.assertEqual([float(x) for x in td.byrevrank("t", 0)], [100.0])
        self.assertAlmostEqual(td.trimmed_mean("t", 0.1, 0.9), 50.5, delta=0.5)
        info = td.info("t")
        info = fields(info) if isinstance(info, dict) else {
            "Compression": info.compression,
            "Capacity": info.capacity,
            "Observations": info.merged_weight + info.unmerged_weight,
            "Merged nodes": info.merged_nodes,
        }
        self.assertEqual(info["Compression"], 100)
        self.assertEqual(info["Capacity"], 610)
        self.assertEqual(info["Observations"], 100)
        self.assertGreater(info["Merged nodes"], 0)
        self.assertTrue(td.create("u", compression=50))
        self.assertTrue(td.add("u", [1000, 2000]))
        self.assertTrue(td.merge("m", 2, "t", "u", compression=200))
        self.assertEqual(td.max("m"), 2000.0)
        self.assertTrue(td.merge("m", 1, "u", override=True))
        self.assertEqual(td.min("m"), 1000.0)
        self.assertTrue(td.reset("t"))
        self.assertTrue(math.isnan(td.min("t")))

    def test_errors(self):
        td = self.td
        with self.assertRaisesRegex(redis.ResponseError, "^T-Digest: key does not exist$"):
            td.add("missing", [1])
        td.create("t")
        with self.assertRaisesRegex(redis.ResponseError, "^T-Digest: key already exists$"):
            td.create("t")
        with self.assertRaisesRegex(
            redis.ResponseError, "^T-Digest: error parsing val parameter$"
        ):
            self.r.execute_command("TDIGEST.ADD", "t", "1", "abc")
        with self.assertRaisesRegex(
            redis.ResponseError, r"^T-Digest: quantile should be in \[0,1\]$"
        ):
            td.quantile("t", 1.5)
        with self.assertRaisesRegex(
            redis.ResponseError,
            "^T-Digest: low_cut_percentile should be lower than high_cut_percentile$",
        ):
            td.trimmed_mean("t", 0.5, 0.5)
        self.r.cms().initbydim("c", 10, 2)
        with self.assertRaisesRegex(redis.ResponseError, "^WRONGTYPE"):
            td.add("c", [1])

    def test_merge_drops_the_destinations_ttl(self):
        # RedisBloom sets the destination's value anew (RedisModule_ModuleTypeSetValue),
        # which drops a TTL it had; found by scripts/compare.
        self.assertTrue(self.td.create("src"))
        self.assertTrue(self.td.add("src", [1, 2, 3]))
        self.assertTrue(self.td.create("dst"))
        self.assertTrue(self.r.expire("dst", 1000))
        self.assertTrue(self.td.merge("dst", 1, "src"))
        self.assertEqual(self.r.ttl("dst"), -1)
        self.assertEqual(self.td.min("dst"), 1.0)

    def test_pipelined_adds(self):
        self.td.create("p", compression=10)
        pipe = self.r.pipeline(transaction=False)
        for start in range(0, 5000, 50):
            pipe.execute_command("TDIGEST.ADD", "p", *range(start, start + 50))
        self.assertEqual(pipe.execute(), [b"OK"] * 100)
        self.assertEqual(self.r.execute_command("TDIGEST.RANK", "p", 2500), [2500])
        self.assertEqual(self.td.max("p"), 4999.0)

    def test_raw_reply_types(self):
        self.td.create("e")
        port = self.server.port
        if self.protocol == 2:
            self.assertEqual(raw(port, 2, "TDIGEST.MIN", "e"), b"$3\r\nnan\r\n")
            self.assertEqual(
                raw(port, 2, "TDIGEST.BYRANK", "e", "0"), b"*1\r\n$3\r\nnan\r\n"
            )
            self.td.add("e", [1.5, 2])
            self.assertEqual(
                raw(port, 2, "TDIGEST.BYRANK", "e", "0", "5"),
                b"*2\r\n$3\r\n1.5\r\n$3\r\ninf\r\n",
            )
            self.assertTrue(raw(port, 2, "TDIGEST.INFO", "e").startswith(b"*18\r\n"))
        else:
            self.assertEqual(raw(port, 3, "TDIGEST.MIN", "e"), b",nan\r\n")
            self.td.add("e", [1.5, 2])
            self.assertEqual(
                raw(port, 3, "TDIGEST.BYREVRANK", "e", "0", "5"),
                b"*2\r\n,2\r\n,-inf\r\n",
            )
            self.assertTrue(raw(port, 3, "TDIGEST.INFO", "e").startswith(b"%9\r\n"))
            self.assertEqual(raw(port, 3, "TDIGEST.RANK", "e", "2"), b"*1\r\n:1\r\n")


class Resp2(Digests, unittest.TestCase):
    protocol = 2


class Resp3(Digests, unittest.TestCase):
    protocol = 3


if __name__ == "__main__":
    unittest.main()
