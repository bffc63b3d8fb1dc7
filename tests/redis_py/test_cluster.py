"""Cluster mode through redis-py's own cluster client (`redis.cluster.RedisCluster`).

Three primaries and three replicas (`rocksketch serve --cluster-enabled`) get their
topology as Kvrocks' controller pushes it (`CLUSTERX SETNODES`, played by this test).
A mixed workload over thousands of keys, sent through RedisCluster in RESP2 and RESP3,
one command at a time and in cluster pipelines, must get exactly the answers a single
non-cluster server gives to the same workload; reads from replicas (READONLY) too.
Then a slot migrates (`CLUSTERX MIGRATE`) while RedisCluster clients write to it:
every acknowledged write is on the target once the topology moves the slot. Then a
primary is SIGKILLed, its replica promoted by a new topology, and the client carries
on: every write acknowledged with WAIT is still there.

Run by scripts/test with ROCKSKETCH_BIN pointing at the built binary.
"""

import random
import signal
import threading
import time
import unittest

import redis
from redis.cluster import ClusterNode, LoadBalancingStrategy, RedisCluster

from test_serve import Server

SHARDS = [(0, 5460), (5461, 10922), (10923, 16383)]
KEYS = 2000


def node_id(n):
    return f"{n:040x}"


def node_list(primaries, replicas, promoted=None, moved=None):
    """Kvrocks' node list: primary i owns SHARDS[i], replica i follows it; `promoted`
    names a shard whose replica took over (its old primary gone); `moved`, a slot and
    the shard it moved to."""
    lines = []
    for i, (p, r) in enumerate(zip(primaries, replicas)):
        first, last = SHARDS[i]
        slots = [(first, last)]
        if moved is not None and first <= moved[0] <= last:
            slots = [(first, moved[0] - 1), (moved[0] + 1, last)]
        if moved is not None and moved[1] == i:
            slots.append((moved[0], moved[0]))
        slots = " ".join(f"{a}-{b}" if a < b else f"{a}" for a, b in slots if a <= b)
        if i == promoted:
            lines.append(f"{node_id(10 + i)} 127.0.0.1 {r.port} master - {slots}")
            continue
        lines.append(f"{node_id(i)} 127.0.0.1 {p.port} master - {slots}")
        lines.append(f"{node_id(10 + i)} 127.0.0.1 {r.port} slave {node_id(i)}")
    return "\n".join(lines)


def writes(rng):
    """Creates and writes over KEYS keys of every family, and merges of tagged keys."""
    out = []
    for k in range(KEYS):
        family = k % 6
        key = f"key:{k}"
        items = [f"i{rng.randrange(50)}" for _ in range(3)]
        if family == 0:
            out.append(("BF.RESERVE", key, 0.01, 100))
            out += [("BF.ADD", key, item) for item in items]
        elif family == 1:
            out += [("CF.ADD", key, item) for item in items]
        elif family == 2:
            out.append(("CMS.INITBYDIM", key, 100, 4))
            out.append(("CMS.INCRBY", key, items[0], 3, items[1], 1))
        elif family == 3:
            out.append(("TOPK.RESERVE", key, 3, 50, 4, 0.9))
            out.append(("TOPK.ADD", key, *items))
        elif family == 4:
            out.append(("TDIGEST.CREATE", key))
            out.append(("TDIGEST.ADD", key, *[rng.randrange(100) for _ in range(5)]))
        else:
            out.append(("PFADD", key, *items))
    for t in range(50):
        a, b, dest = (f"{{tag{t}}}:{n}" for n in ("a", "b", "sum"))
        out += [("CMS.INITBYDIM", x, 50, 3) for x in (a, b, dest)]
        out += [("CMS.INCRBY", a, "x", t + 1), ("CMS.INCRBY", b, "x", 2)]
        out.append(("CMS.MERGE", dest, 2, a, b))
        out.append(("PFADD", a, "x", "y"))
    return out


def reads():
    out = []
    for k in range(KEYS):
        key = f"key:{k}"
        out.append((
            ("BF.MEXISTS", key, "i1", "i2", "i3"),
            ("CF.EXISTS", key, "i4"),
            ("CMS.QUERY", key, "i5", "i6"),
            ("TOPK.LIST", key),
            ("TDIGEST.QUANTILE", key, 0.5),
            ("PFCOUNT", key),
        )[k % 6])
        out.append(("EXISTS", key))
    out += [("CMS.QUERY", f"{{tag{t}}}:sum", "x") for t in range(50)]
    out += [("PFCOUNT", f"{{tag{t}}}:a", f"{{tag{t}}}:b") for t in range(50)]
    return out


def answer(client, command):
    try:
        return client.execute_command(*command)
    except redis.ResponseError as e:
        return f"error: {e}"


class Cluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.primaries = [Server("--cluster-enabled") for _ in SHARDS]
        cls.replicas = [Server("--cluster-enabled") for _ in SHARDS]
        cls.single = Server()
        cls.push(node_list(cls.primaries, cls.replicas), 1)

    @classmethod
    def tearDownClass(cls):
        for server in cls.primaries + cls.replicas + [cls.single]:
            server.close()

    @classmethod
    def push(cls, nodes, version, servers=None):
        for server in servers or cls.primaries + cls.replicas:
            c = server.client()
            assert c.execute_command("CLUSTERX", "SETNODES", nodes, version)
            c.close()

    def cluster_client(self, protocol, **kwargs):
        start = [ClusterNode("127.0.0.1", p.port) for p in self.primaries]
        return RedisCluster(startup_nodes=start, protocol=protocol, **kwargs)

    def wait_replicas(self, primaries):
        for p in primaries:
            c = p.client()
            self.assertEqual(c.execute_command("WAIT", 1, 10000), 1)
            c.close()

    def test_1_a_workload_answers_as_on_one_server(self):
        for protocol in (2, 3):
            rng = random.Random(protocol)
            work = writes(rng)
            single = self.single.client(protocol=protocol)
            single.flushall()
            rc = self.cluster_client(protocol)
            rc.flushall(target_nodes=RedisCluster.PRIMARIES)
            want = [answer(single, c) for c in work]
            half = len(work) // 2
            got = [answer(rc, c) for c in work[:half]]
            pipe = rc.pipeline()
            for command in work[half:]:
                pipe.execute_command(*command)
            got += [
                f"error: {r}" if isinstance(r, redis.ResponseError) else r
                for r in pipe.execute(raise_on_error=False)
            ]
            self.assertEqual(got, want)
            queries = reads()
            want = [answer(single, c) for c in queries]
            self.assertEqual([answer(rc, c) for c in queries], want)
            self.assertEqual(rc.dbsize(target_nodes=RedisCluster.PRIMARIES), single.dbsize())
            keys = set(rc.keys(target_nodes=RedisCluster.PRIMARIES))
            self.assertEqual(keys, set(single.keys()))
            self.assertEqual(set(rc.scan_iter(count=50)), keys)
            # Reads from the replicas, once they have every write.
            self.wait_replicas(self.primaries)
            replicas = self.cluster_client(
                protocol, load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN_REPLICAS
            )
            self.assertEqual([answer(replicas, c) for c in queries], want)
            served = 0
            for r in self.replicas:
                c = r.client()
                served += c.info("commandstats").get("cmdstat_exists", {}).get("calls", 0)
                c.close()
            # redis-py sends its own list of read commands (EXISTS among them) to replicas.
            self.assertGreater(served, 0, "the replicas served reads")
            with self.assertRaises((redis.RedisClusterException, redis.ResponseError)):
                rc.execute_command("CMS.MERGE", "{tag1}:sum", 2, "{tag1}:a", "key:1")
            for c in (rc, replicas, single):
                c.close()

    def test_2_a_slot_migrated_under_load_loses_nothing(self):
        rc = self.cluster_client(2)
        slot = rc.keyslot("{mig}")
        source = next(i for i, (a, b) in enumerate(SHARDS) if a <= slot <= b)
        target = (source + 1) % len(SHARDS)
        for k in range(200):
            rc.execute_command("BF.ADD", f"{{mig}}:bf{k}", "x")
        stop = threading.Event()
        results = []

        def writer(w):
            client = self.cluster_client(2 if w % 2 else 3)
            sketch, bloom = f"{{mig}}:w{w}", f"{{mig}}:f{w}"
            client.execute_command("CMS.INITBYDIM", sketch, 100, 3)
            acked, items = 0, []
            while not stop.is_set():
                self.assertEqual(client.execute_command("CMS.INCRBY", sketch, "x", 1), [acked + 1])
                acked += 1
                item = f"i{len(items)}"
                client.execute_command("BF.ADD", bloom, item)
                items.append(item)
            results.append((sketch, acked, bloom, items))
            client.close()

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        c = self.primaries[source].client()
        self.assertTrue(c.execute_command("CLUSTERX", "MIGRATE", slot, node_id(target)))
        deadline = time.time() + 60
        while b"migrating_state: success" not in c.execute_command("CLUSTER", "INFO"):
            self.assertLess(time.time(), deadline)
            time.sleep(0.02)
        time.sleep(0.3)  # writers asked to the target meanwhile
        type(self).moved = (slot, target)
        self.push(node_list(self.primaries, self.replicas, moved=self.moved), 2)
        time.sleep(0.3)
        stop.set()
        for t in threads:
            t.join()
        self.assertEqual(len(results), 4, "every writer ran to the end")
        on_target = self.primaries[target].client()
        for sketch, acked, bloom, items in results:
            self.assertGreater(acked, 0)
            self.assertEqual(on_target.execute_command("CMS.QUERY", sketch, "x"), [acked])
            self.assertEqual(on_target.execute_command("BF.MEXISTS", bloom, *items), [1] * len(items))
        self.assertEqual(on_target.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot), 208)
        self.assertEqual(c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot), 0)
        for client in (c, on_target, rc):
            client.close()

    def test_3_the_clients_carry_on_after_a_primary_is_killed_and_its_replica_promoted(self):
        rc = self.cluster_client(2)
        rc.flushall(target_nodes=RedisCluster.PRIMARIES)
        keys = [f"fo:{k}" for k in range(600)]
        for key in keys:
            self.assertEqual(rc.execute_command("BF.ADD", key, "before"), 1)
        self.wait_replicas(self.primaries)
        victim = self.primaries[0]
        victim.stop(signal.SIGKILL)
        survivors = self.primaries[1:] + self.replicas
        moved = getattr(self, "moved", None)
        nodes = node_list(self.primaries, self.replicas, promoted=0, moved=moved)
        self.push(nodes, 3, survivors)
        for key in keys:
            self.assertEqual(rc.execute_command("BF.EXISTS", key, "before"), 1, key)
            self.assertEqual(rc.execute_command("BF.ADD", key, "after"), 1, key)
        promoted = self.replicas[0].client()
        self.assertEqual(promoted.execute_command("ROLE")[0], b"master")
        promoted.close()
        rc.close()


if __name__ == "__main__":
    unittest.main()
