"""The differential test: seeded random command streams sent to rocksketch and to a live
RedisBloom, in RESP2 and RESP3, every reply compared. A difference that `design.py` does
not explain is shrunk to the shortest command sequence that still shows a difference,
and printed with both servers' replies.

    run.py --ours PORT --theirs PORT [--episodes N] [--length L] [--seed S] [--resp 2|3]
           [--seconds T] [--commands C]

Exits 1 if any difference was found, 2 if a server failed (closed or stopped answering).
"""

import argparse
import random
import sys
import time

import design
from gen import Dump, Gen
from wire import Closed, Conn, encode, show

PIPELINE = 64  # commands sent before their replies are read


class Pair:
    """One connection to each server, in the same protocol, on empty databases."""

    def __init__(self, ports, resp):
        self.conns = [Conn(p) for p in ports]
        self.conns[0].name, self.conns[1].name = "rocksketch", "RedisBloom"
        self.in_multi = False
        for c in self.conns:
            c.call("FLUSHALL")
            if resp == 3:
                hello = c.call("HELLO", "3")
                assert hello[0] == "%", f"HELLO 3 answered {show(hello)}"

    def close(self):
        for c in self.conns:
            c.close()

    def play(self, steps):
        """Each server's outcome of every step, as two lists."""
        outcomes = ([], [])
        i = 0
        while i < len(steps):
            if isinstance(steps[i], Dump):
                for side, c in enumerate(self.conns):
                    try:
                        outcomes[side].append(round_trip(c, steps[i]))
                    except Closed as e:
                        raise Closed(f"{c.name}: {e}, in {describe(steps[i])}") from e
                i += 1
                continue
            group = []
            while i < len(steps) and not isinstance(steps[i], Dump) and len(group) < PIPELINE:
                group.append(steps[i])
                i += 1
            for cmd in group:
                name = str(cmd[0]).upper()
                if name in ("MULTI", "EXEC", "DISCARD"):
                    self.in_multi = name == "MULTI"
            for c in self.conns:
                c.sock.sendall(b"".join(map(encode, group)))
            for side, c in enumerate(self.conns):
                try:
                    outcomes[side].extend(c.reply() for _ in group)
                    if not self.in_multi:
                        in_step(c)
                except Closed as e:
                    what = "; ".join(map(describe, group))[-2000:]
                    raise Closed(f"{c.name}: {e}, answering ... {what}") from e
        return outcomes


def in_step(conn):
    """Checks that the connection's replies still answer its commands: a reply a server
    split in two, or cut short, puts every later one out of step."""
    token = f"in-step {id(conn)} {time.monotonic_ns()}"
    reply = conn.call("ECHO", token)
    if reply[1] != token.encode():
        raise Closed(f"replies out of step: ECHO answered {show(reply)}")


def copy_hll(conn, step):
    """A client's copy of a HyperLogLog with GET and SET, summed up as what it observes:
    the GET's error or nil, or the SET's reply and the copy's count and registers."""
    # The destination goes first, as in every round trip (design.Context.dump counts
    # on it), even when the source has nothing to copy.
    conn.call("DEL", step.dst)
    got = conn.call("GET", step.src)
    if got[0] != "$" or got[1] is None:
        return ("copy", "get", got)
    return ("copy", conn.call("SET", step.dst, got[1]), conn.call("PFCOUNT", step.dst),
            conn.call("PFDEBUG", "GETREG", step.dst))


def round_trip(conn, step):
    """A client's dump and restore (SCANDUMP until the iterator is 0, then LOADCHUNK
    of every chunk), summed up as what a client observes: an error, an empty dump, or
    the load's replies (repeats folded, since the chunk counts are each server's own)."""
    if step.family == "HLL":
        return copy_hll(conn, step)
    scan, load = f"{step.family}.SCANDUMP", f"{step.family}.LOADCHUNK"
    # Into a fresh key: RedisBloom 2.8 copies chunks into an existing filter's bitmaps
    # at the offsets they name, and can crash doing so.
    conn.call("DEL", step.dst)
    chunks, it = [], 0
    for _ in range(1 << 16):
        reply = conn.call(scan, step.src, it)
        if reply[0] == "-":
            return ("dump", "error", reply, len(chunks))
        if reply[0] != "*" or len(reply[1] or ()) != 2 or reply[1][0][0] != ":":
            return ("dump", "not an iterator and a chunk", reply)
        it = reply[1][0][1]
        if it == 0:
            break
        chunks.append((it, reply[1][1][1]))
    else:
        return ("dump", "never ended")
    if not chunks:
        return ("dump", "empty", reply)
    loads = []
    for it, data in chunks:
        r = conn.call(load, step.dst, it, data)
        if not loads or loads[-1] != r:
            loads.append(r)
    return ("dump", "loaded", tuple(loads))


def first_difference(ports, resp, steps):
    """Plays `steps` on fresh databases: the index of the first unexplained difference
    and both outcomes there, or None."""
    pair = Pair(ports, resp)
    try:
        ours, theirs = pair.play(steps)
    finally:
        pair.close()
    context = design.Context()
    for i, step in enumerate(steps):
        if not context.same(step, ours[i], theirs[i]):
            return i, ours[i], theirs[i]
    return None


def well_formed(steps):
    """Whether a candidate is a stream the generator could make: no round trip inside a
    transaction (the shrinker may drop a MULTI's EXEC and leave one inside)."""
    in_multi = False
    for step in steps:
        if isinstance(step, Dump):
            if in_multi:
                return False
            continue
        name = str(step[0]).upper()
        if name == "MULTI":
            in_multi = True
        elif name in ("EXEC", "DISCARD"):
            in_multi = False
    return True


def shrink(ports, resp, steps, sig):
    """Delta debugging: drops chunks of steps while the same kind of difference (`sig`)
    remains, cutting after it. The result is 1-minimal for single steps."""
    n = 2
    while len(steps) >= 2:
        size = -(-len(steps) // n)
        for start in range(0, len(steps), size):
            candidate = steps[:start] + steps[start + size :]
            found = None
            if candidate and well_formed(candidate):
                found = first_difference(ports, resp, candidate)
            if found and signature(candidate[found[0]], found[1], found[2]) != sig:
                found = None
            if found:
                steps = candidate[: found[0] + 1]
                n = max(n - 1, 2)
                break
        else:
            if n >= len(steps):
                break
            n = min(len(steps), 2 * n)
    return steps


def describe(step):
    if isinstance(step, Dump):
        return f"<DEL {step.dst}, {step.family}.SCANDUMP {step.src} and LOADCHUNK into {step.dst}>"
    return " ".join(repr(a)[1:-1] if " " in str(a) or not str(a) else str(a)
                    if isinstance(a, str) else repr(a) for a in step)


def outcome_text(o):
    if isinstance(o, tuple) and o and o[0] == "dump":
        return " ".join(show(x) if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str)
                        and len(x[0]) == 1 else str(x) for x in o[1:])
    return show(o)


def report(ports, resp, steps, found):
    i, ours, theirs = found
    print(f"\n== difference (RESP{resp}), shortest sequence: {i + 1} commands")
    pair = Pair(ports, resp)
    try:
        o, t = pair.play(steps)
    finally:
        pair.close()
    for n, step in enumerate(steps):
        mark = ">>" if n == len(steps) - 1 else "  "
        print(f"{mark} {describe(step)}")
        if n == len(steps) - 1 or o[n] != t[n]:
            print(f"     rocksketch: {outcome_text(o[n])}")
            print(f"     RedisBloom: {outcome_text(t[n])}")
    sys.stdout.flush()


def signature(step, ours, theirs):
    name = "DUMP" if isinstance(step, Dump) else str(step[0]).upper()
    kind = lambda o: o[1] if o[0] == "dump" else (o[0], o[1] if o[0] == "-" else None)
    return (name, str(kind(ours)), str(kind(theirs)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ours", type=int, required=True)
    p.add_argument("--theirs", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--episodes", type=int, default=1 << 30)
    p.add_argument("--length", type=int, default=300)
    p.add_argument("--commands", type=int, default=1 << 62, help="stop after this many")
    p.add_argument("--seconds", type=float, default=1e9, help="stop after this long")
    p.add_argument("--resp", type=int, choices=[2, 3], help="default: both, alternating")
    p.add_argument("--max-findings", type=int, default=20)
    a = p.parse_args()
    ports = (a.ours, a.theirs)
    start, sent, seen = time.time(), 0, {}
    try:
        for episode in range(a.episodes):
            if sent >= a.commands or time.time() - start > a.seconds:
                break
            seed = a.seed * 1_000_003 + episode
            resp = a.resp or (2 + episode % 2)
            steps = Gen(random.Random(seed)).stream(a.length)
            sent += len(steps)
            found = first_difference(ports, resp, steps)
            if not found:
                continue
            sig = signature(steps[found[0]], found[1], found[2])
            seen[sig] = seen.get(sig, 0) + 1
            if seen[sig] > 1:
                continue
            print(f"\nseed {seed} (episode {episode}): difference at step {found[0]}")
            small = shrink(ports, resp, steps[: found[0] + 1], sig)
            report(ports, resp, small, first_difference(ports, resp, small) or found)
            if len(seen) >= a.max_findings:
                break
    except Closed as e:
        print(f"\na server closed the connection in seed {seed}: {e}", file=sys.stderr)
        return 2
    elapsed = time.time() - start
    print(f"\n{sent} commands in {episode + 1} episodes, {elapsed:.0f} s "
          f"({sent / max(elapsed, 1e-9):.0f}/s): {len(seen)} kinds of difference, "
          f"{sum(seen.values())} episodes with one")
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
