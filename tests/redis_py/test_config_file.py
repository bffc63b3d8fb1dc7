"""`rocksketch serve CONFIG-FILE [flags]`: a redis.conf-style file, flags overriding it,
and bad files refused with the line named."""

import os
import subprocess
import tempfile
import unittest

import redis

from test_serve import BIN


def start(*args):
    proc = subprocess.Popen([BIN, "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r} {proc.stderr.read()!r}")
    return proc, int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])


class ConfigFile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.conf = os.path.join(self.tmp.name, "rocksketch.conf")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        with open(self.conf, "w") as f:
            f.write(text)

    def test_directives_apply_and_flags_override_them(self):
        data = os.path.join(self.tmp.name, "data")
        self.write(
            "# rocksketch.conf\n"
            f"dir \"{data}\"\n"
            "port 0\n"
            "databases 4\n"
            "requirepass \"from the file\"\n"
            "enable-debug-command yes\n"
        )
        proc, port = start(self.conf, "--requirepass", "from-flags")
        try:
            r = redis.Redis(port=port, password="from-flags")
            self.assertEqual(r.config_get("databases"), {"databases": "4"})
            self.assertEqual(r.config_get("enable-debug-command"), {"enable-debug-command": "yes"})
            self.assertTrue(r.cms().initbydim("k", 10, 2))
            with self.assertRaises(redis.AuthenticationError):
                redis.Redis(port=port, password="from the file").ping()
            r.close()
        finally:
            proc.terminate()
            self.assertEqual(proc.wait(timeout=60), 0)
            proc.stdout.close()
            proc.stderr.close()
        self.assertTrue(os.path.isdir(data))

    def test_the_example_file_is_valid(self):
        example = os.path.join(os.path.dirname(__file__), "..", "..", "rocksketch.conf")
        data = os.path.join(self.tmp.name, "data")
        proc, port = start(example, "--dir", data, "--port", "0")
        try:
            self.assertTrue(redis.Redis(port=port).ping())
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            proc.stdout.close()
            proc.stderr.close()

    def test_bad_files_name_the_line(self):
        for text, error in [
            ("port 0\n\nsave 60 1\n", "rocksketch.conf:3: unknown directive 'save'"),
            ("port 0 1\n", "rocksketch.conf:1: 'port' takes one value, got 2"),
            ("sync perhaps\n", "rocksketch.conf:1: 'sync' takes yes or no, not 'perhaps'"),
            ("port zero\n", "--port: cannot parse 'zero'"),
        ]:
            self.write(text)
            done = subprocess.run([BIN, "serve", self.conf], capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 1, text)
            self.assertIn(error, done.stderr)
            self.assertEqual(done.stdout, "")
        done = subprocess.run([BIN, "serve", self.conf + ".missing"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 1)
        self.assertIn("reading the config file", done.stderr)


class Logs(unittest.TestCase):
    def test_log_lines_by_level(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "rocksketch.log")
            proc, port = start("--dir", os.path.join(tmp, "data"), "--port", "0",
                               "--loglevel", "debug", "--logfile", log)
            r = redis.Redis(port=port)
            r.config_set("slowlog-log-slower-than", 0)
            r.cms().initbydim("k", 10, 2)
            import socket
            with socket.create_connection(("127.0.0.1", port)) as raw:
                raw.sendall(b"*1\r\n$x\r\n")
                self.assertIn(b"Protocol error", raw.recv(1024))
            self.assertEqual(r.config_get("loglevel"), {"loglevel": "debug"})
            r.config_set("loglevel", "warning")
            r.cms().query("k", "quiet")  # slow, but below the level now
            r.config_set("loglevel", "notice")
            try:
                r.shutdown()
            except redis.ConnectionError:
                pass
            self.assertEqual(proc.wait(timeout=60), 0)
            proc.stdout.close()
            proc.stderr.close()
            with open(log) as f:
                text = f.read()
        for expected in [
            "* rocksketch ", "started: pid ", f"listening on 127.0.0.1:{port}",
            ". accepted client ", "- protocol error from client ",
            "- slow command: ", "CMS.INITBYDIM k 10 2",
            "* shutting down: closing ", "* connections closed; flushing the memtables",
            "* memtables flushed",
        ]:
            self.assertIn(expected, text)
        self.assertNotIn("CMS.QUERY k quiet", text)
        # Redis's format: pid:role, the time, the level's mark, the message.
        for line in text.splitlines():
            self.assertRegex(
                line, r"^\d+:M \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} [.\-*#] "
            )


if __name__ == "__main__":
    unittest.main()
