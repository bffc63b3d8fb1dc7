"""A client that makes each write durable on its replicas before the next: BF.ADD,
then WAIT NUMREPLICAS, ROUNDS times; prints the round's p50 and p99 in ms and the
rounds a second. Every WAIT must answer NUMREPLICAS.

    python scripts/wait_latency.py PRIMARY_PORT [NUMREPLICAS] [ROUNDS]
"""

import sys
import time

import redis


def main() -> None:
    port = int(sys.argv[1])
    replicas = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    client = redis.Redis(port=port)
    took = []
    for i in range(rounds):
        started = time.perf_counter()
        client.execute_command("BF.ADD", "wait-latency", f"item-{i}")
        acked = client.execute_command("WAIT", replicas, 5000)
        took.append(time.perf_counter() - started)
        if acked != replicas:
            sys.exit(f"WAIT answered {acked}, not {replicas}")
    took.sort()
    print(
        f"BF.ADD + WAIT {replicas}, {rounds} rounds: p50 {took[len(took) // 2] * 1e3:.2f} ms,"
        f" p99 {took[len(took) * 99 // 100] * 1e3:.2f} ms, {rounds / sum(took):.0f} rounds/s"
    )


if __name__ == "__main__":
    main()
