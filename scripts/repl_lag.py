"""Replica lag under load: every INTERVAL seconds a marker item is added to a Bloom
filter on the primary and the replica is polled until it holds it; the time from the
primary's answer to the replica's is one sample. Prints p50, p99 and max in ms.

    python scripts/repl_lag.py PRIMARY_PORT REPLICA_PORT [SECONDS] [INTERVAL]
"""

import sys
import time

import redis


def main() -> None:
    primary_port, replica_port = int(sys.argv[1]), int(sys.argv[2])
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0.02
    primary = redis.Redis(port=primary_port)
    replica = redis.Redis(port=replica_port)
    primary.delete("lag-marker")
    primary.execute_command("BF.RESERVE", "lag-marker", 0.001, 1_000_000)
    samples = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        item = f"marker-{i}"
        primary.execute_command("BF.ADD", "lag-marker", item)
        acked = time.monotonic()
        while not replica.execute_command("BF.EXISTS", "lag-marker", item):
            if time.monotonic() - acked > 30:
                raise SystemExit(f"the replica never got {item}")
        samples.append((time.monotonic() - acked) * 1000)
        time.sleep(interval)
    samples.sort()

    def pct(p: float) -> float:
        return samples[min(len(samples) - 1, int(p * len(samples)))]

    print(
        f"lag over {len(samples)} samples: p50 {pct(0.5):.2f} ms, "
        f"p99 {pct(0.99):.2f} ms, max {samples[-1]:.2f} ms"
    )


if __name__ == "__main__":
    main()
