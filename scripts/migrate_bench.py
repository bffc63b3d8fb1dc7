"""A slot's migration measured: node 0 serves every slot, node 1 none; the slot of
`{big}` is filled with SIZE_MB of count-min sketches (pages written by increments),
migrated to node 1 (`CLUSTERX MIGRATE`) with nothing else running, then back to node 0
while a writer follows the redirections on that slot (CMS.INCRBY, counting what is
acknowledged) and redis-benchmark writes to another slot of node 0. Prints for each the
bytes sent, the time and rate and the hand-over's write pause; under load also the
writer's acknowledged and lost increments and its slowest answer, and the other slot's
throughput during the migration against before it.

    python scripts/migrate_bench.py PORT_A PORT_B [SIZE_MB]
"""

import random
import statistics
import subprocess
import sys
import threading
import time

import redis

SKETCH_WIDTH, SKETCH_DEPTH = 1 << 20, 8  # 8 Mi counters each


def node_list(a, b, a_slots, b_slots):
    return "\n".join(
        [
            f"{'a' * 40} 127.0.0.1 {a} master - {a_slots}",
            f"{'b' * 40} 127.0.0.1 {b} master - {b_slots}".rstrip(),
        ]
    )


def info(client):
    text = client.execute_command("CLUSTER", "INFO")
    text = text.decode() if isinstance(text, bytes) else text
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def fill(client, size_mb):
    """Sketches of the slot until the node's migrated bytes would pass size_mb:
    every page of each sketch written (one increment per 1000 counters of a row)."""
    rng = random.Random(7)
    sketches = max(1, size_mb * (1 << 20) // (SKETCH_WIDTH * SKETCH_DEPTH * 4))
    for i in range(sketches):
        key = f"{{big}}cms{i}"
        client.execute_command("CMS.INITBYDIM", key, SKETCH_WIDTH, SKETCH_DEPTH)
        pipe = client.pipeline(transaction=False)
        for _ in range(SKETCH_WIDTH // 1000):
            args = []
            for _ in range(100):
                args += [str(rng.random()), 1]
            pipe.execute_command("CMS.INCRBY", key, *args)
        pipe.execute()
    return sketches


class Writer(threading.Thread):
    """CMS.INCRBY on the migrating slot, following MOVED, ASK and TRYAGAIN."""

    def __init__(self, port):
        super().__init__()
        self.home = port
        self.links = {}
        self.stop = threading.Event()
        self.acked = 0
        self.slowest = 0.0

    def link(self, port):
        if port not in self.links:
            self.links[port] = redis.Redis(port=port)
        return self.links[port]

    def send(self, *command):
        asking = None
        while True:
            try:
                if asking:
                    self.link(asking).execute_command("ASKING")
                    return self.link(asking).execute_command(*command)
                return self.link(self.home).execute_command(*command)
            except redis.exceptions.MovedError as e:
                self.home, asking = e.port, None
            except redis.exceptions.AskError as e:
                asking = e.port
            except redis.exceptions.TryAgainError:
                asking = None
                time.sleep(0.001)

    def run(self):
        while not self.stop.is_set():
            started = time.monotonic()
            counts = self.send("CMS.INCRBY", "{big}writer", "x", 1)
            self.slowest = max(self.slowest, time.monotonic() - started)
            self.acked += 1
            assert counts == [self.acked], (counts, self.acked)


def benchmark(port):
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-c", "16", "-P", "16", "-n", "300000",
         "-r", "1000000", "--csv", "BF.ADD", "{other}bf", "__rand_int__"],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()
    return float(out[-1].split(",")[1].strip('"'))


def migrate(nodes, slot, source, target, version, loaded):
    """Migrates `slot` from node `source` to `target` (indexes into `nodes`, a list of
    (port, client, id)), then pushes the topology that moves it; prints what it
    measured. `loaded`: with the writer and redis-benchmark on the other node's slot."""
    (src_port, src, _), (dst_port, dst, dst_id) = nodes[source], nodes[target]
    other_port = nodes[0][0]
    before, during, writer = None, [], None
    if loaded:
        before = statistics.median(benchmark(other_port) for _ in range(3))
        writer = Writer(src_port)
        writer.start()
        time.sleep(0.5)
    started = time.monotonic()
    src.execute_command("CLUSTERX", "MIGRATE", slot, dst_id)
    while info(src).get("migrating_state", "").strip() == "start":
        if loaded:
            during.append(benchmark(other_port))
        else:
            time.sleep(0.005)
    elapsed = time.monotonic() - started
    state = info(src)
    time.sleep(0.3)
    rest = f"0-{slot - 1} {slot + 1}-16383" if slot else "1-16383"
    slots = [rest, str(slot)] if target == 1 else [f"0-16383", ""]
    for _, c, _ in nodes:
        c.execute_command("CLUSTERX", "SETNODES", node_list(nodes[0][0], nodes[1][0], *slots), version)
    sent = int(state["migrating_bytes"])
    print(f"### {'under load' if loaded else 'quiet'}: node {source} to node {target}, "
          f"migrating_state: {state['migrating_state'].strip()}")
    print(f"migrated: {sent / 2**20:.0f} MiB in {elapsed:.1f} s = {sent / 2**20 / elapsed:.0f} MiB/s")
    print(f"write pause at the hand-over: {int(state['migrating_pause_us']) / 1000:.1f} ms")
    if loaded:
        time.sleep(0.3)
        writer.stop.set()
        writer.join()
        counted = dst.execute_command("CMS.QUERY", "{big}writer", "x")[0]
        print(f"writer on the slot: {writer.acked} increments acknowledged, {counted} on the "
              f"target, {writer.acked - counted} lost; slowest answer {writer.slowest * 1000:.0f} ms")
        during_rps = statistics.median(during) if during else float("nan")
        print(f"BF.ADD on node 0's other slot (-c 16 -P 16): {before:.0f} req/s before, "
              f"{during_rps:.0f} during ({len(during)} runs), ratio {during_rps / before:.2f}")
    print(f"keys in the slot: {src.execute_command('CLUSTER', 'COUNTKEYSINSLOT', slot)} on the "
          f"source after the topology, {dst.execute_command('CLUSTER', 'COUNTKEYSINSLOT', slot)} "
          f"on the target")


def main():
    a_port, b_port = int(sys.argv[1]), int(sys.argv[2])
    size_mb = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    a, b = redis.Redis(port=a_port), redis.Redis(port=b_port)
    nodes = [(a_port, a, "a" * 40), (b_port, b, "b" * 40)]
    for c in (a, b):
        c.execute_command("CLUSTERX", "SETNODES", node_list(a_port, b_port, "0-16383", ""), 1)
    slot = a.execute_command("CLUSTER", "KEYSLOT", "{big}")
    started = time.monotonic()
    sketches = fill(a, size_mb)
    a.execute_command("CMS.INITBYDIM", "{big}writer", 100, 3)
    a.execute_command("BF.RESERVE", "{other}bf", 0.01, 10_000_000)
    print(f"filled slot {slot}: {sketches} sketches of {SKETCH_WIDTH}x{SKETCH_DEPTH} "
          f"in {time.monotonic() - started:.1f} s")
    migrate(nodes, slot, 0, 1, 2, loaded=False)
    migrate(nodes, slot, 1, 0, 3, loaded=True)


if __name__ == "__main__":
    main()
