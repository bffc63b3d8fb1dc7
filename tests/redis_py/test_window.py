"""Sliding windows through redis-py (PyPI `redis`) in RESP2 and RESP3: the WINDOW option
on the create commands, redis-py's own add/exists/count helpers on windowed keys, its
INFO parsers given the window fields, and items that leave the window by themselves
(on the server's own clock).

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary.
"""

import time
import unittest

from test_serve import OneServer, fields, text

WINDOW_MS = 3000
SLICES = 3
SLICE_MS = WINDOW_MS // SLICES


def info(server, protocol, command, key):
    """The INFO reply as sent: on a client of its own, since redis-py's module helpers
    install their parsers on the client they are called on."""
    r = server.client(protocol=protocol)
    reply = r.execute_command(command, key)
    r.close()
    if isinstance(reply, dict):
        return fields(reply)
    return {text(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}


class Window(OneServer):
    def create(self):
        window = ["WINDOW", WINDOW_MS, "SLICES", SLICES]
        self.assertTrue(self.r.execute_command("BF.RESERVE", "bf", 0.01, 1000, *window))
        self.assertTrue(self.r.execute_command("CF.RESERVE", "cf", 1000, *window))
        self.assertTrue(self.r.execute_command("CMS.INITBYDIM", "cms", 1000, 5, *window))

    def test_items_leave_the_window_by_themselves(self):
        self.create()
        self.assertEqual(self.r.bf().add("bf", "a"), 1)
        self.assertEqual(self.r.bf().add("bf", "a"), 0)
        self.assertEqual(self.r.cf().add("cf", "a"), 1)
        self.assertEqual(self.r.cms().incrby("cms", ["a"], [3]), [3])
        # Well within the window: found and counted.
        self.assertEqual(self.r.bf().exists("bf", "a"), 1)
        self.assertEqual(self.r.bf().mexists("bf", "a", "b"), [1, 0])
        self.assertEqual(self.r.cf().count("cf", "a"), 1)
        self.assertEqual(self.r.cms().query("cms", "a"), [3])
        # A window and a slice later (and a margin): gone, and new again.
        time.sleep((WINDOW_MS + SLICE_MS + 200) / 1000)
        self.assertEqual(self.r.bf().exists("bf", "a"), 0)
        self.assertEqual(self.r.cf().exists("cf", "a"), 0)
        self.assertEqual(self.r.cms().query("cms", "a"), [0])
        self.assertEqual(self.r.bf().add("bf", "a"), 1)
        self.assertEqual(self.r.cf().addnx("cf", "a"), 1)

    def test_info_parsers_take_the_window_fields(self):
        self.create()
        self.r.bf().add("bf", "x")
        bf = self.r.bf().info("bf")
        cf = self.r.cf().info("cf")
        cms = self.r.cms().info("cms")
        if isinstance(bf, dict):
            self.assertEqual(fields(bf)["Window"], WINDOW_MS)
        else:
            self.assertEqual(bf.insertedNum, 1)
            self.assertEqual(cf.insertedNum, 0)
            self.assertEqual((cms.width, cms.depth, cms.count), (1000, 5, 0))
        raw = info(self.server, self.protocol, "BF.INFO", "bf")
        self.assertEqual((raw["Window"], raw["Slices"]), (WINDOW_MS, SLICES))
        self.assertEqual(sum(g[1] for g in raw["Generations"]), 1)
        self.assertEqual(info(self.server, self.protocol, "CMS.INFO", "cms")["slices"], SLICES)
        self.assertEqual(info(self.server, self.protocol, "CF.INFO", "cf")["Window"], WINDOW_MS)

    def test_bad_windows_are_errors_and_create_nothing(self):
        for args in (["WINDOW", 0], ["WINDOW", 10, "SLICES", 65], ["WINDOW", 2, "SLICES", 3]):
            with self.assertRaises(Exception) as caught:
                self.r.execute_command("BF.RESERVE", "k", 0.01, 100, *args)
            self.assertTrue(str(caught.exception).startswith(("WINDOW", "SLICES")), caught.exception)
        self.assertEqual(self.r.exists("k"), 0)


class Resp2(Window, unittest.TestCase):
    protocol = 2


class Resp3(Window, unittest.TestCase):
    protocol = 3


if __name__ == "__main__":
    unittest.main()
