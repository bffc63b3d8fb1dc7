"""rocksketch serve, driven by redis-py (PyPI `redis`) in RESP2 and RESP3.

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary:
    ROCKSKETCH_BIN=target/debug/rocksketch python -m unittest discover -s tests/redis_py
Each test class starts its own server on a free port over a temporary directory.
"""

import os
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import redis

# redis-py strips the "ERR " prefix from error replies; other prefixes (WRONGTYPE,
# NOAUTH) stay, and so do the texts RedisBloom sends without one ("CMS: ...").

BIN = os.environ.get("ROCKSKETCH_BIN", "target/debug/rocksketch")


class Server:
    """A `rocksketch serve` process on a port it picks itself (`--port 0`)."""

    def __init__(self, *flags, data_dir=None):
        self.owned_dir = None
        if data_dir is None:
            self.owned_dir = tempfile.TemporaryDirectory()
            data_dir = self.owned_dir.name
        self.dir = data_dir
        self.proc = subprocess.Popen(
            [BIN, "serve", "--dir", data_dir, "--port", "0", *flags],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r}")
        self.port = int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])

    def client(self, **kwargs):
        return redis.Redis(port=self.port, socket_timeout=60, **kwargs)

    def stop(self, sig=signal.SIGTERM):
        """Stops the server with `sig` and returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        status = self.proc.wait(timeout=60)
        self.proc.stdout.close()
        return status

    def close(self):
        self.stop()
        if self.owned_dir is not None:
            self.owned_dir.cleanup()


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def fields(reply):
    """An INFO reply as a dict of str -> value: redis-py parses it into an object in
    RESP2 (BFInfo, CMSInfo) and leaves RESP3's map as a dict of bytes keys."""
    if isinstance(reply, dict):
        return {text(k): v for k, v in reply.items()}
    return {k: v for k, v in vars(reply).items()}


class OneServer:
    """One server for the class, a fresh client on an empty keyspace per test, speaking
    `protocol` (subclasses pick 2 or 3)."""

    protocol = 2

    @classmethod
    def setUpClass(cls):
        cls.server = Server()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def setUp(self):
        self.r = self.server.client(protocol=self.protocol)
        self.r.flushall()

    def tearDown(self):
        self.r.close()


class Families(OneServer):
    """Every command family, run once per protocol version by the subclasses."""

    def bf_info(self, key):
        reply = self.r.bf().info(key)
        if isinstance(reply, dict):
            return fields(reply)
        return {
            "Capacity": reply.capacity,
            "Size": reply.size,
            "Number of filters": reply.filterNum,
            "Number of items inserted": reply.insertedNum,
            "Expansion rate": reply.expansionRate,
        }

    # ---- count-min sketch ----

    def test_cms(self):
        cms = self.r.cms()
        self.assertTrue(cms.initbydim("dim", 2000, 5))
        self.assertTrue(cms.initbyprob("prob", 0.001, 0.01))
        self.assertEqual(cms.incrby("dim", ["a", "b", "a"], [3, 2, 4]), [3, 2, 7])
        self.assertEqual(cms.query("dim", "a", "b", "never"), [7, 2, 0])
        info = fields(cms.info("dim"))
        self.assertEqual((info["width"], info["depth"], info["count"]), (2000, 5, 9))
        info = fields(cms.info("prob"))
        self.assertEqual((info["width"], info["depth"]), (2000, 7))
        self.assertTrue(cms.initbydim("sum", 2000, 5))
        self.assertTrue(cms.merge("sum", 2, ["dim", "dim"], [2, -1]))
        self.assertEqual(cms.query("sum", "a", "b"), [7, 2])
        with self.assertRaisesRegex(redis.ResponseError, "^CMS: key does not exist$"):
            cms.query("missing", "a")
        with self.assertRaisesRegex(redis.ResponseError, "^CMS: key already exists$"):
            cms.initbydim("dim", 10, 2)
        with self.assertRaisesRegex(redis.ResponseError, "^CMS: Cannot parse number$"):
            self.r.execute_command("CMS.INCRBY", "dim", "a", "x")
        with self.assertRaisesRegex(redis.ResponseError, "^CMS: width/depth is not equal$"):
            cms.merge("prob", 1, ["dim"])
        self.r.bf().add("bloom", "x")
        with self.assertRaisesRegex(redis.ResponseError, "^WRONGTYPE"):
            cms.query("bloom", "x")

    # ---- cuckoo filter ----

    def test_cuckoo(self):
        cf = self.r.cf()
        self.assertTrue(cf.reserve("cf", 1000, bucket_size=4, max_iterations=50, expansion=2))
        self.assertEqual(cf.add("cf", "a"), 1)
        self.assertEqual(cf.add("cf", "a"), 1)
        self.assertEqual(cf.count("cf", "a"), 2)
        self.assertEqual(cf.addnx("cf", "a"), 0)
        self.assertEqual(cf.addnx("cf", "b"), 1)
        self.assertEqual(cf.exists("cf", "b"), 1)
        self.assertEqual(cf.exists("cf", "never"), 0)
        self.assertEqual(cf.mexists("cf", "a", "never", "b"), [1, 0, 1])
        self.assertEqual(cf.delete("cf", "a"), 1)
        self.assertEqual(cf.delete("cf", "never"), 0)
        self.assertEqual(cf.count("cf", "a"), 1)
        self.assertEqual(cf.insert("ins", ["x", "y"], capacity=100), [1, 1])
        self.assertEqual(cf.insertnx("ins", ["x", "z"]), [0, 1])
        with self.assertRaisesRegex(redis.ResponseError, "^not found$"):
            cf.insert("nokey", ["x"], nocreate=True)
        with self.assertRaisesRegex(redis.ResponseError, "^Not found$"):
            cf.delete("nokey", "x")
        with self.assertRaisesRegex(redis.ResponseError, "^item exists$"):
            cf.reserve("cf", 1000)
        with self.assertRaisesRegex(
            redis.ResponseError, r"^BUCKETSIZE: value must be in the range \[1, 255\]$"
        ):
            cf.reserve("bad", 1000, bucket_size=300)
        self.assertEqual(self.r.type("cf"), b"MBbloomCF")
        info = self.cf_info("cf")
        self.assertEqual(info["Number of buckets"], 256)
        self.assertEqual(info["Number of items inserted"], 2)
        self.assertEqual(info["Number of items deleted"], 1)
        self.assertEqual(info["Bucket size"], 4)
        self.assertEqual(info["Expansion rate"], 2)
        self.assertEqual(info["Max iterations"], 50)
        # A growing filter keeps every item.
        cf.reserve("grow", 100, expansion=2)
        items = [f"item-{i}" for i in range(3000)]
        for start in range(0, len(items), 500):
            pipe = self.r.pipeline(transaction=False)
            for item in items[start : start + 500]:
                pipe.execute_command("CF.ADD", "grow", item)
            pipe.execute()
        self.assertEqual(cf.mexists("grow", *items), [1] * len(items))
        self.assertGreater(self.cf_info("grow")["Number of filters"], 1)

    def test_cuckoo_dump_and_restore_through_the_client(self):
        cf = self.r.cf()
        cf.reserve("src", 2000, bucket_size=4, expansion=2)
        items = [f"member-{i}" for i in range(5000)]
        for start in range(0, len(items), 1000):
            pipe = self.r.pipeline(transaction=False)
            for item in items[start : start + 1000]:
                pipe.execute_command("CF.ADD", "src", item)
            pipe.execute()
        chunks = []
        cursor = 0
        while True:
            cursor, data = cf.scandump("src", cursor)
            if cursor == 0:
                break
            chunks.append((cursor, data))
        self.assertGreater(len(chunks), 1)
        for cursor, data in chunks:
            self.assertTrue(cf.loadchunk("copy", cursor, data))
        probes = items + [f"absent-{i}" for i in range(5000)]
        self.assertEqual(cf.mexists("copy", *probes), cf.mexists("src", *probes))
        self.assertEqual(self.cf_info("copy"), self.cf_info("src"))

    def cf_info(self, key):
        reply = self.r.cf().info(key)
        if isinstance(reply, dict):
            return fields(reply)
        return {
            "Size": reply.size,
            "Number of buckets": reply.bucketNum,
            "Number of filters": reply.filterNum,
            "Number of items inserted": reply.insertedNum,
            "Number of items deleted": reply.deletedNum,
            "Bucket size": reply.bucketSize,
            "Expansion rate": reply.expansionRate,
            "Max iterations": reply.maxIteration,
        }

    # ---- Bloom filter ----

    def test_bloom(self):
        bf = self.r.bf()
        self.assertTrue(bf.create("f", 0.01, 1000))
        self.assertEqual(bf.add("f", "a"), 1)
        self.assertEqual(bf.add("f", "a"), 0)
        self.assertEqual(bf.madd("f", "a", "b", "c"), [0, 1, 1])
        self.assertEqual(bf.exists("f", "b"), 1)
        self.assertEqual(bf.exists("f", "zz"), 0)
        self.assertEqual(bf.mexists("f", "a", "zz", "c"), [1, 0, 1])
        self.assertEqual(bf.card("f"), 3)
        self.assertEqual(bf.card("missing"), 0)
        self.assertEqual(bf.exists("missing", "a"), 0)
        info = self.bf_info("f")
        self.assertEqual(info["Capacity"], 1000)
        self.assertEqual(info["Number of filters"], 1)
        self.assertEqual(info["Number of items inserted"], 3)
        self.assertEqual(info["Expansion rate"], 2)
        self.assertGreater(info["Size"], 1000 * 9 // 8)
        # redis-py parses every BF.INFO reply as the whole map, so ask on a plain client.
        plain = self.server.client(protocol=self.protocol)
        # RedisBloom 8 answers one field as its value in RESP2, a map of it in RESP3.
        one = {b"Number of items inserted": 3} if self.protocol == 3 else [3]
        self.assertEqual(plain.execute_command("BF.INFO", "f", "ITEMS"), one)
        plain.close()
        self.assertEqual(
            bf.insert("g", ["x", "y", "x"], capacity=50, error=0.001, expansion=4),
            [1, 1, 0],
        )
        self.assertEqual(self.bf_info("g")["Expansion rate"], 4)
        with self.assertRaisesRegex(redis.ResponseError, "^not found$"):
            bf.insert("nokey", ["x"], noCreate=True)
        with self.assertRaisesRegex(redis.ResponseError, "^item exists$"):
            bf.create("f", 0.01, 10)
        with self.assertRaisesRegex(redis.ResponseError, "^bad error rate$"):
            self.r.execute_command("BF.RESERVE", "h", "abc", 10)
        self.assertTrue(bf.create("tiny", 0.01, 2, noScale=True))
        replies = self.r.execute_command("BF.MADD", "tiny", "1", "2", "3", "4")
        self.assertEqual(replies[:2], [1, 1])
        self.assertIsInstance(replies[-1], redis.ResponseError)
        self.assertEqual(str(replies[-1]), "non scaling filter is full")
        # A growing filter keeps every item through many sub-filters.
        items = [f"item-{i}" for i in range(2000)]
        bf.create("grow", 0.01, 100)
        for start in range(0, len(items), 500):
            bf.madd("grow", *items[start : start + 500])
        self.assertEqual(bf.mexists("grow", *items), [1] * len(items))
        self.assertGreater(self.bf_info("grow")["Number of filters"], 1)

    def test_bloom_dump_and_restore_through_the_client(self):
        bf = self.r.bf()
        bf.create("src", 0.001, 500)
        items = [f"member-{i}" for i in range(3000)]
        for start in range(0, len(items), 1000):
            bf.madd("src", *items[start : start + 1000])
        chunks = []
        cursor = 0
        while True:
            cursor, data = bf.scandump("src", cursor)
            if cursor == 0:
                break
            chunks.append((cursor, data))
        self.assertGreater(len(chunks), 1)
        for cursor, data in chunks:
            self.assertTrue(bf.loadchunk("copy", cursor, data))
        probes = items + [f"absent-{i}" for i in range(3000)]
        self.assertEqual(bf.mexists("copy", *probes), bf.mexists("src", *probes))
        self.assertEqual(self.bf_info("copy"), self.bf_info("src"))
        self.assertEqual(bf.card("copy"), bf.card("src"))
        with self.assertRaisesRegex(redis.ResponseError, "Invalid position"):
            bf.scandump("src", -1)

    # ---- keyspace, connection, server ----

    def test_keyspace(self):
        r = self.r
        r.bf().add("user:1:seen", "x")
        r.bf().add("user:2:seen", "x")
        r.cms().initbydim("hits", 100, 2)
        self.assertEqual(r.dbsize(), 3)
        self.assertEqual(r.exists("hits", "user:1:seen", "nothing"), 2)
        self.assertEqual(r.type("hits"), b"CMSk-TYPE")
        self.assertEqual(r.type("user:1:seen"), b"MBbloom--")
        self.assertEqual(r.type("nothing"), b"none")
        self.assertEqual(sorted(r.keys("user:*")), [b"user:1:seen", b"user:2:seen"])
        self.assertEqual(sorted(r.scan_iter(count=1)), [b"hits", b"user:1:seen", b"user:2:seen"])
        self.assertEqual(list(r.scan_iter(match="user:2*")), [b"user:2:seen"])
        self.assertEqual(list(r.scan_iter(_type="CMSk-TYPE")), [b"hits"])
        self.assertEqual(r.delete("hits", "nothing"), 1)
        self.assertEqual(r.unlink("user:2:seen"), 1)
        self.assertEqual(r.dbsize(), 1)
        other = self.server.client(protocol=self.protocol, db=3)
        self.assertEqual(other.dbsize(), 0)
        other.bf().add("user:1:seen", "only-in-3")
        self.assertEqual(r.bf().exists("user:1:seen", "only-in-3"), 0)
        self.assertTrue(other.flushdb())
        self.assertEqual(other.dbsize(), 0)
        self.assertEqual(r.dbsize(), 1)
        other.close()
        self.assertTrue(r.flushall())
        self.assertEqual(r.dbsize(), 0)

    def test_expiry(self):
        r = self.r
        r.bf().add("short", "x")
        r.bf().add("long", "x")
        self.assertEqual(r.ttl("long"), -1)
        self.assertEqual(r.ttl("missing"), -2)
        self.assertTrue(r.expire("long", 100))
        self.assertEqual(r.ttl("long"), 100)
        self.assertFalse(r.expire("long", 10, nx=True))
        self.assertTrue(r.expire("long", 10, lt=True))
        self.assertTrue(r.persist("long"))
        self.assertEqual(r.ttl("long"), -1)
        self.assertTrue(r.pexpire("short", 100))
        time.sleep(0.2)
        self.assertEqual(r.exists("short"), 0)
        self.assertEqual(r.bf().exists("short", "x"), 0)
        self.assertEqual(r.bf().exists("long", "x"), 1)

    def test_connection(self):
        r = self.r
        self.assertTrue(r.ping())
        self.assertEqual(r.echo("hello"), b"hello")
        self.assertTrue(r.client_setname("py-test"))
        self.assertEqual(text(r.client_getname()), "py-test")
        self.assertIsInstance(r.client_id(), int)
        names = [c["name"] for c in r.client_list()]
        self.assertIn("py-test", names)
        info = r.info()
        self.assertEqual(info["cluster_enabled"], 0)
        self.assertEqual(info["arch_bits"], 64)
        self.assertIn("redis_version", info)
        self.assertIn("pages_estimated_keys", r.info("rocksketch"))
        self.assertGreater(r.command_count(), 30)
        with self.assertRaisesRegex(redis.ResponseError, "unknown command 'NOSUCH'"):
            r.execute_command("NOSUCH", "arg")
        with self.assertRaisesRegex(redis.ResponseError, "wrong number of arguments for 'bf.add'"):
            r.execute_command("BF.ADD", "k")

    def test_pipeline(self):
        pipe = self.r.pipeline(transaction=False)
        pipe.cms().initbydim("c", 1000, 4)
        for i in range(200):
            pipe.execute_command("CMS.INCRBY", "c", f"k{i % 10}", 1)
        pipe.execute_command("CMS.QUERY", "c", *[f"k{i}" for i in range(10)])
        replies = pipe.execute()
        self.assertEqual(replies[-1], [20] * 10)

    def test_transaction_pipeline_runs_each_command_once(self):
        # redis-py's default pipeline() is MULTI ... EXEC: before EXEC existed, every
        # queued command ran at once and the client retried the whole pipeline.
        self.r.cms().initbydim("t", 1000, 4)
        pipe = self.r.pipeline()
        pipe.execute_command("CMS.INCRBY", "t", "x", 1)
        pipe.execute_command("BF.ADD", "tb", "a")
        pipe.execute_command("BF.ADD", "tb", "a")
        replies = pipe.execute()
        self.assertEqual(replies[0], [1])
        self.assertEqual([bool(r) for r in replies[1:]], [True, False])
        self.assertEqual(self.r.cms().query("t", "x"), [1])
        # A queueing error aborts the transaction: redis-py raises the command's error.
        with self.assertRaisesRegex(redis.ResponseError, "wrong number of arguments"):
            pipe = self.r.pipeline()
            pipe.execute_command("CMS.INCRBY", "t", "x")  # wrong arity
            pipe.execute_command("CMS.INCRBY", "t", "x", 1)
            pipe.execute()
        self.assertEqual(self.r.cms().query("t", "x"), [1])


class Resp2(Families, unittest.TestCase):
    protocol = 2


class Resp3(Families, unittest.TestCase):
    protocol = 3

    def test_resp3_reply_types(self):
        self.assertIs(self.r.execute_command("BF.ADD", "t", "a"), True)
        self.assertIs(self.r.execute_command("BF.EXISTS", "t", "b"), False)
        info = self.r.execute_command("BF.INFO", "t")
        self.assertIsInstance(info, dict)
        self.r.execute_command("CMS.INITBYDIM", "c", 10, 2)
        self.assertEqual(
            self.r.execute_command("CMS.INFO", "c"), {b"width": 10, b"depth": 2, b"count": 0}
        )


class Concurrency(unittest.TestCase):
    def test_sixteen_clients_exact_results(self):
        server = Server()
        try:
            setup = server.client()
            setup.cms().initbydim("counts", 100000, 4)
            setup.bf().create("seen", 0.001, 20000)
            errors = []

            def worker(t):
                try:
                    c = server.client(protocol=3 if t % 2 else 2)
                    for round_ in range(10):
                        pipe = c.pipeline(transaction=False)
                        for i in range(50):
                            pipe.execute_command("CMS.INCRBY", "counts", f"item-{i}", 1)
                            pipe.execute_command("BF.ADD", "seen", f"t{t}-r{round_}-i{i}")
                        pipe.execute()
                    c.close()
                except Exception as e:  # surfaced by the main thread
                    errors.append(e)

            threads = [threading.Thread(target=worker, args=(t,)) for t in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            items = [f"item-{i}" for i in range(50)]
            self.assertEqual(setup.cms().query("counts", *items), [16 * 10] * 50)
            seen = [f"t{t}-r{r}-i{i}" for t in range(16) for r in range(10) for i in range(50)]
            self.assertEqual(setup.bf().mexists("seen", *seen), [1] * len(seen))
            setup.close()
        finally:
            server.close()


class Lifecycle(unittest.TestCase):
    def test_auth(self):
        server = Server("--requirepass", "s3cret")
        try:
            with self.assertRaises(redis.AuthenticationError):
                server.client().ping()
            with self.assertRaises(redis.AuthenticationError):
                server.client(password="wrong").ping()
            for protocol in (2, 3):
                r = server.client(password="s3cret", protocol=protocol)
                self.assertTrue(r.ping())
                r.bf().add("f", "x")
                self.assertEqual(r.bf().exists("f", "x"), 1)
                r.close()
        finally:
            server.close()

    def test_sigterm_and_shutdown_keep_acknowledged_writes(self):
        with tempfile.TemporaryDirectory() as data:
            server = Server(data_dir=data)
            r = server.client()
            r.cms().initbydim("c", 100, 3)
            r.cms().incrby("c", ["a"], [5])
            r.bf().add("f", "kept")
            r.close()
            self.assertEqual(server.stop(signal.SIGTERM), 0)

            server = Server(data_dir=data)
            r = server.client()
            self.assertEqual(r.cms().query("c", "a"), [5])
            r.cms().incrby("c", ["a"], [1])
            try:
                r.shutdown()
            except redis.ConnectionError:
                pass  # the server closes the connection instead of replying
            self.assertEqual(server.proc.wait(timeout=60), 0)
            server.stop()

            server = Server(data_dir=data)
            r = server.client()
            self.assertEqual(r.cms().query("c", "a"), [6])
            self.assertEqual(r.bf().exists("f", "kept"), 1)
            r.close()
            self.assertEqual(server.stop(signal.SIGINT), 0)


if __name__ == "__main__":
    unittest.main()
