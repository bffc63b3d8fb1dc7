"""CONFIG GET/SET, SLOWLOG and INFO as redis-py reads them, in RESP2 and RESP3."""

import time
import unittest

import redis

from test_serve import OneServer, Server


class Introspection(OneServer):
    def tearDown(self):
        self.r.config_set("slowlog-log-slower-than", 10000)
        self.r.config_set("slowlog-max-len", 128)
        super().tearDown()

    def test_config_get_matches_globs(self):
        self.assertEqual(
            self.r.config_get("slowlog-*"),
            {"slowlog-log-slower-than": "10000", "slowlog-max-len": "128"},
        )
        got = self.r.config_get("maxclients")
        self.assertEqual(list(got), ["maxclients"])
        self.assertGreater(int(got["maxclients"]), 0)
        self.assertEqual(self.r.config_get("port"), {"port": str(self.server.port)})
        self.assertEqual(self.r.config_get("save"), {"save": ""})
        self.assertEqual(self.r.config_get("no-such-*"), {})
        many = self.r.execute_command("CONFIG", "GET", "port", "databases", "p*")
        names = list(many) if isinstance(many, dict) else many[::2]
        self.assertEqual(sorted(names, key=str), sorted([b"port", b"databases", b"proto-max-bulk-len"], key=str))

    def test_config_set_checks_before_it_changes_anything(self):
        with self.assertRaisesRegex(
            redis.ResponseError,
            "^CONFIG SET failed \\(possibly related to argument 'slowlog-max-len'\\) - "
            "argument couldn't be parsed into an integer$",
        ):
            self.r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "5", "slowlog-max-len", "x")
        # All or nothing: the first pair was not applied.
        self.assertEqual(self.r.config_get("slowlog-log-slower-than"), {"slowlog-log-slower-than": "10000"})
        # The slow log is bounded: no client can make it hold the server's memory.
        with self.assertRaisesRegex(redis.ResponseError, "argument must be between 0 and 10000 inclusive$"):
            self.r.config_set("slowlog-max-len", 10001)
        with self.assertRaisesRegex(redis.ResponseError, "can't set immutable config$"):
            self.r.config_set("port", 1)
        with self.assertRaisesRegex(redis.ResponseError, "Unknown option or number of arguments for CONFIG SET - 'nope'"):
            self.r.config_set("nope", 1)
        with self.assertRaisesRegex(redis.ResponseError, "wrong number of arguments for 'config\\|set'"):
            self.r.execute_command("CONFIG", "SET", "loglevel")
        self.assertTrue(self.r.config_set("loglevel", "warning"))
        self.assertEqual(self.r.config_get("loglevel"), {"loglevel": "warning"})
        self.assertTrue(self.r.config_set("loglevel", "notice"))
        with self.assertRaisesRegex(redis.ResponseError, "must be one of the following"):
            self.r.config_set("loglevel", "loud")

    def test_config_set_of_a_fixed_parameters_own_value_succeeds(self):
        # Test fixtures and tools turn off snapshots and memory limits this way; this
        # host has neither, so the value they set is the one it keeps.
        self.assertTrue(self.r.config_set("save", ""))
        self.assertTrue(self.r.config_set("maxmemory", "0"))
        self.assertTrue(self.r.config_set("maxmemory", "0mb"))
        self.assertTrue(self.r.config_set("maxmemory-policy", "NOEVICTION"))
        self.assertTrue(self.r.config_set("appendonly", "no"))
        self.assertTrue(self.r.config_set("port", self.server.port))
        for name, value in [("maxmemory", "1gb"), ("appendonly", "yes"), ("save", "60 1"), ("databases", "16")]:
            with self.assertRaisesRegex(redis.ResponseError, "can't set immutable config$"):
                self.r.config_set(name, value)
        # All or nothing still: a refused pair undoes an accepted one.
        with self.assertRaisesRegex(redis.ResponseError, "'maxmemory'"):
            self.r.execute_command("CONFIG", "SET", "loglevel", "warning", "maxmemory", "1")
        self.assertEqual(self.r.config_get("loglevel"), {"loglevel": "notice"})
        self.assertEqual(self.r.config_get("maxmemory"), {"maxmemory": "0"})

    def test_slowlog_logs_commands_over_the_threshold(self):
        self.assertTrue(self.r.config_set("slowlog-log-slower-than", 0))
        self.assertTrue(self.r.slowlog_reset())
        self.r.cms().initbydim("slow", 100, 3)
        self.r.execute_command("CMS.INCRBY", "slow", "a" * 200, 1)
        entries = self.r.slowlog_get(3)
        self.assertEqual(len(entries), 3)
        newest = entries[0]
        self.assertGreater(newest["id"], entries[1]["id"])
        # An entry is logged once its command ends: the newest is the increment, not
        # the SLOWLOG GET that reads it.
        command = newest["command"]
        command = command.decode() if isinstance(command, bytes) else command
        self.assertEqual(command, "CMS.INCRBY slow " + "a" * 128 + "... (72 more bytes) 1")
        self.assertGreaterEqual(newest["duration"], 0)
        self.assertIn("127.0.0.1:", newest["client_address"].decode() if isinstance(newest["client_address"], bytes) else newest["client_address"])
        self.assertGreaterEqual(self.r.slowlog_len(), 4)
        self.assertTrue(self.r.config_set("slowlog-max-len", 2))
        self.assertLessEqual(self.r.slowlog_len(), 2)
        self.assertTrue(self.r.config_set("slowlog-log-slower-than", -1))
        self.r.slowlog_reset()
        self.r.ping()
        self.assertEqual(self.r.slowlog_len(), 0)
        with self.assertRaisesRegex(redis.ResponseError, "count should be greater than or equal to -1"):
            self.r.execute_command("SLOWLOG", "GET", -2)

    def test_info_sections_parse(self):
        self.r.cms().initbydim("k", 100, 3)
        info = self.r.info()
        for field in ["redis_version", "connected_clients", "used_memory", "used_memory_rss",
                      "loading", "instantaneous_ops_per_sec", "total_commands_processed", "db0"]:
            self.assertIn(field, info)
        self.assertGreater(info["used_memory_rss"], 1 << 20)
        self.assertEqual(info["db0"]["keys"], 1)
        self.assertNotIn("cmdstat_ping", info)
        memory = self.r.info("memory")
        self.assertIn("page_cache_hit_rate", memory)
        self.assertNotIn("connected_clients", memory)
        self.assertIn("rocksdb_pending_compaction_bytes", self.r.info("persistence"))

    def test_keyspace_hits_and_misses_count_reads_only(self):
        self.assertTrue(self.r.config_resetstat())
        self.r.bf().exists("nothing-here", "x")  # a miss
        with self.assertRaises(redis.ResponseError):
            self.r.cms().query("no-sketch", "x")  # a miss
        self.r.bf().add("f", "x")  # a write: not counted
        self.r.bf().exists("f", "x")  # a hit
        self.r.bf().exists("f", "y")  # a hit: the key is there
        stats = self.r.info("stats")
        self.assertEqual((stats["keyspace_hits"], stats["keyspace_misses"]), (2, 2))

    def test_save_flushes_and_lastsave_says_when(self):
        started = int(self.r.lastsave().timestamp())
        self.r.cms().initbydim("saved", 10, 2)
        while int(time.time()) <= started:
            time.sleep(0.05)
        before = int(time.time())
        self.assertTrue(self.r.save())
        saved = int(self.r.lastsave().timestamp())
        self.assertGreaterEqual(saved, before)
        persistence = self.r.info("persistence")
        self.assertEqual(persistence["rdb_last_save_time"], saved)
        self.assertEqual(persistence["rdb_last_bgsave_status"], "ok")
        self.assertTrue(self.r.bgsave())
        deadline = time.time() + 30
        while self.r.info("persistence")["rdb_bgsave_in_progress"]:
            self.assertLess(time.time(), deadline)
            time.sleep(0.05)
        with self.assertRaisesRegex(redis.ResponseError, "^syntax error$"):
            self.r.execute_command("BGSAVE", "NOW")
        self.assertEqual(self.r.cms().query("saved", "x"), [0])

    def test_commandstats_count_calls_and_failures(self):
        self.assertTrue(self.r.config_resetstat())
        self.r.cms().initbydim("c", 100, 3)
        for _ in range(3):
            self.r.execute_command("CMS.INCRBY", "c", "x", 1)
        with self.assertRaises(redis.ResponseError):
            self.r.execute_command("CMS.INCRBY", "c", "x", "nan")
        stats = self.r.info("commandstats")
        self.assertEqual(stats["cmdstat_cms.incrby"]["calls"], 4)
        self.assertEqual(stats["cmdstat_cms.incrby"]["failed_calls"], 1)
        self.assertEqual(stats["cmdstat_cms.initbydim"]["calls"], 1)
        self.assertIn("usec_per_call", stats["cmdstat_cms.incrby"])
        self.assertTrue(self.r.config_resetstat())
        self.assertNotIn("cmdstat_cms.incrby", self.r.info("commandstats"))


class Resp2(Introspection, unittest.TestCase):
    protocol = 2


class Resp3(Introspection, unittest.TestCase):
    protocol = 3


class LiveSettings(unittest.TestCase):
    """Settings that change who may connect, on a server of their own."""

    def setUp(self):
        self.server = Server()

    def tearDown(self):
        self.server.close()

    def test_requirepass_applies_to_new_connections(self):
        admin = self.server.client()
        self.assertTrue(admin.config_set("requirepass", "s3cret"))
        with self.assertRaisesRegex(redis.AuthenticationError, "Authentication required"):
            self.server.client().ping()
        self.assertTrue(self.server.client(password="s3cret").ping())
        self.assertTrue(admin.ping())  # an authenticated connection stays so
        self.assertEqual(admin.config_get("requirepass"), {"requirepass": "s3cret"})
        self.assertTrue(admin.config_set("requirepass", ""))
        self.assertTrue(self.server.client().ping())

    def test_request_limits_apply_to_the_next_request(self):
        admin = self.server.client()
        other = self.server.client()
        other.ping()
        # Under 1 MiB is refused, as Redis refuses it (it would lock clients out).
        with self.assertRaisesRegex(redis.ResponseError, "between 1048576 and"):
            admin.config_set("proto-max-bulk-len", "1kb")
        self.assertTrue(admin.config_set("proto-max-bulk-len", "1mb"))
        self.assertEqual(admin.config_get("proto-max-bulk-len"), {"proto-max-bulk-len": "1048576"})
        with self.assertRaisesRegex(redis.ResponseError, "Protocol error"):
            other.execute_command("ECHO", "x" * (2 << 20))
        self.assertTrue(admin.config_set("proto-max-bulk-len", "512mb"))
        self.assertEqual(len(self.server.client().echo("x" * (2 << 20))), 2 << 20)
        with self.assertRaisesRegex(redis.ResponseError, "argument must be a memory value"):
            admin.config_set("client-query-buffer-limit", "lots")

    def test_maxclients_refuses_connections_past_it(self):
        admin = self.server.client()
        admin.ping()
        self.assertTrue(admin.config_set("maxclients", 1))
        with self.assertRaisesRegex(redis.ConnectionError, "max number of clients reached"):
            self.server.client().ping()
        self.assertTrue(admin.config_set("maxclients", 100))
        self.assertTrue(self.server.client().ping())


if __name__ == "__main__":
    unittest.main()
