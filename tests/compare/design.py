"""The differences between rocksketch's replies and RedisBloom 2.8.2's that are correct
by design, each listed once with its reason. Everything else must be identical.

The oracle here is RedisBloom 2.8.2 (Redis Stack 7.4's module). Where RedisBloom 8 changed
an error text or a range rule after 2.8, rocksketch answers as 8 does: COMPAT.md and the
transcripts in shared/vectors, recorded from RedisBloom 8.x, are the authority there, and
the texts below were checked against RedisBloom 8.2's source (src/rebloom.c, rm_topk.c,
rm_tdigest.c, rm_cms.c).
"""

import math
import re
import time

import filters
import hll
import versions
from filters import Filters
from gen import ALL_KEYS, STEADY_TOPK, Dump

# Replies that depend on the moment they are asked: seconds or milliseconds to or since
# an expiry. Both servers are asked within the same moment, give or take the clock
# ticking between them.
TIMING = {"TTL": 2, "EXPIRETIME": 2, "PTTL": 2000, "PEXPIRETIME": 2000}


def shape(reply):
    """A reply with its values blanked: the structure a random draw cannot change."""
    marker, value = reply
    if marker == "-":
        return reply
    if marker in "*~>" and value is not None:
        return (marker, len(value) and "items")
    return (marker, None)


def same_doubles(ours, theirs):
    """Equal replies but for how doubles are spelt: the same value (sign of zero and NaN
    included) in every bulk string or RESP3 double that holds one.

    Doubles are printed by Redis, not by the module: Redis 7.2 and later (the transcripts'
    Redis 7.4, and rocksketch) print the shortest text that reads back exactly
    (`795258.1865585393`, `0.9`); the Debian Redis 7.0 this RedisBloom runs on prints
    `%.17g` (`795258.18655853928`, `0.90000000000000002`)."""
    (mo, vo), (mt, vt) = ours, theirs
    if mo != mt:
        return False
    if mo in "$," and vo is not None and vt is not None:
        a, b = as_double(vo), as_double(vt)
        if a is None or b is None:
            return vo == vt
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if mo in "*~>" and vo is not None and vt is not None:
        return len(vo) == len(vt) and all(map(same_doubles, vo, vt))
    if mo in "%|":
        return len(vo) == len(vt) and all(
            same_doubles(ko, kt) and same_doubles(xo, xt) for (ko, xo), (kt, xt) in zip(vo, vt))
    return vo == vt


def without_hashes(reply):
    if reply[0] != "*" or reply[1] is None:
        return reply
    return [re.sub(rb" hashes:\d+ ", b" ", v[1] or b"") for v in reply[1]]


def as_double(text):
    try:
        return float(text)
    except ValueError:
        return None


def error(reply):
    return reply[1].decode("utf-8", "replace") if reply[0] == "-" else None


class Context:
    """What the stream did so far that a comparison needs: the filters' models, which
    Top-K keys may hold a random decay, and the commands a transaction queued."""

    def __init__(self):
        self.random_topk = set()
        self.filters = Filters()
        self.queued = None  # the commands of an open MULTI
        self.diverged = set()  # keys a range rule left different (versions.py)
        # Keys with an expiry about to fall (or just fallen), and when: each server
        # deletes them at its own moment, so until both have (EXPIRY_LEEWAY_MS later)
        # they are compared as diverged.
        self.expiring = {}
        self.expiry_at = {}  # the last expiry a command set on each key, roughly
        self.arity_queued = False

    def same(self, step, ours, theirs):
        """Whether the two servers' outcomes of `step` agree (but for the listed
        differences); keeps the context up to date."""
        if isinstance(step, Dump):
            return self.dump(step, ours, theirs)
        name = str(step[0]).upper()
        if self.queued is not None and name not in ("EXEC", "DISCARD", "MULTI"):
            if ours == theirs == ("+", b"QUEUED"):
                self.queued.append(step)
            elif theirs == ("+", b"QUEUED") and ours[1].startswith(b"ERR wrong number of"):
                # 8 declares each command's arity, so the command is refused as it is
                # queued and EXEC aborts; 2.8 declared none: it queued it, and EXEC ran
                # the rest (versions.py).
                self.queued.append(step)
                self.arity_queued = True
                return True
            return ours == theirs
        if name in ("EXEC", "DISCARD") and self.queued is not None:
            queued, self.queued = self.queued, None
            if self.arity_queued:
                self.arity_queued = False
                for s in queued:
                    self.diverged.update(a for a in s[1:] if a in ALL_KEYS)
                return name == "DISCARD" and ours == theirs or name == "EXEC"
            if name == "EXEC" and ours[0] == theirs[0] == "*" and ours[1] and theirs[1]:
                if len(ours[1]) == len(theirs[1]) == len(queued):
                    return all(map(self.same, queued, ours[1], theirs[1]))
            return ours == theirs
        if name == "MULTI" and ours == theirs == ("+", b"OK"):
            self.queued = []
            return True
        keys = {a for a in step[1:] if a in ALL_KEYS}
        self.settle()
        loose = self.loose_keys()
        if keys & loose or (loose and name in ("DBSIZE", "KEYS")):
            result = self.compare_diverged(name, step, keys, ours, theirs)
            if name in MERGES:
                # A destination made from a diverged source is diverged too.
                self.diverged.add(step[1])
        else:
            result = self.compare(name, step, ours, theirs)
        self.track_keys(name, step, ours, theirs)
        return result

    def settle(self):
        """Ends the leeway of keys whose expiry has passed on both servers by now."""
        now = time.time() * 1000
        for key, at in list(self.expiring.items()):
            if now > at + EXPIRY_LEEWAY_MS:
                del self.expiring[key]

    def loose_keys(self):
        """The keys compared loosely now: diverged ones and those about to expire."""
        return self.diverged | self.expiring.keys()

    def compare_diverged(self, name, step, keys, ours, theirs):
        """A command on keys one server holds and the other does not, or holds otherwise:
        anything but what the other keys show."""
        loose = self.loose_keys()
        if name == "KEYS" and ours[0] == theirs[0] == "*":
            mine = lambda r: sorted(k for k in r[1] if k[1].decode() not in loose)
            return mine(ours) == mine(theirs)
        if name == "DBSIZE" and ours[0] == theirs[0] == ":":
            return abs(ours[1] - theirs[1]) <= len(loose)
        if name in ("DEL", "UNLINK", "EXISTS") and ours[0] == theirs[0] == ":":
            # EXISTS counts a key named twice twice.
            named = step[1:] if name == "EXISTS" else set(step[1:])
            return abs(ours[1] - theirs[1]) <= sum(1 for k in named if k in loose)
        return ours == theirs or ours[0] != "-" or theirs[0] != "-" or bool(keys & loose)

    def compare(self, name, step, ours, theirs):
        if name.startswith(("BF.", "CF.")) and self.filters.same(name, step, ours, theirs):
            return True
        if ours == theirs:
            return True
        # Top-K with a decay below 1: HeavyKeeper decrements a colliding counter when
        # glibc's rand() (seeded from the clock and pid at Redis's start) draws under
        # decay^count, so RedisBloom's own replies differ from run to run; only their
        # shape is RedisBloom's. Keys with decay 1 or 1e-300 (gen.STEADY_TOPK) have no
        # such draw and are compared exactly.
        if name.startswith("TOPK.") and name not in ("TOPK.RESERVE", "TOPK.INFO"):
            if len(step) > 1 and step[1] in self.random_topk and step[1] not in STEADY_TOPK:
                return shape(ours) == shape(theirs)
        # A HyperLogLog's string: the same registers (hll.py says why not the same bytes).
        if name == "GET" and ours[0] == theirs[0] == "$" and None not in (ours[1], theirs[1]):
            regs = hll.registers(ours[1])
            return regs is not None and regs == hll.registers(theirs[1])
        if name == "BF.DEBUG" and without_hashes(ours) == without_hashes(theirs):
            # hashes: this store's count, from ln 2 exactly; RedisBloom's truncated ln 2
            # constants give one more where ln 2 x bits per item is an integer (an
            # error rate of 0.125: 3 against 4). Stored filters keep their count.
            return True
        if name.startswith("TDIGEST.") or name == "TOPK.INFO":
            if same_doubles(ours, theirs):
                return True
        # KEYS answers in hash-table order, which Redis does not define.
        if name == "KEYS" and ours[0] == theirs[0] == "*":
            return sorted(ours[1]) == sorted(theirs[1])
        if self.close_call(name, step, ours, theirs):
            return True
        if name in TIMING and ours[0] == theirs[0] == ":" and min(ours[1], theirs[1]) >= 0:
            return abs(ours[1] - theirs[1]) <= TIMING[name]
        return by_design(name, step, ours, theirs, self.diverged)

    def close_call(self, name, step, ours, theirs):
        """An expiry with GT or LT against one set a moment before from a relative time
        (PEXPIRE k 5000 then PEXPIRE k 5000 GT): whether the new time is later depends on
        the millisecond each server read its clock in, so either answer is right."""
        options = {str(a).upper() for a in step[3:]}
        if name not in EXPIRES or not options & {"GT", "LT"} or step[1] not in self.expiry_at:
            return False
        if {filters.flag(ours), filters.flag(theirs)} != {0, 1}:
            return False
        try:
            at = EXPIRES[name](int(step[2]), time.time() * 1000)
        except ValueError:
            return False
        return abs(at - self.expiry_at[step[1]]) < EXPIRY_LEEWAY_MS

    def track_keys(self, name, step, ours, theirs):
        """Forgets the models of keys the command deleted."""
        if name == "TOPK.RESERVE" and len(step) > 1:
            self.random_topk.add(step[1])
        if name in ("BF.RESERVE", "BF.INSERT") and len(step) > 2 and ours[0] != "-":
            rates = step[2:3] if name == "BF.RESERVE" else [
                step[i + 1] for i in range(2, len(step) - 1) if str(step[i]).upper() == "ERROR"]
            if any((as_double(r) or 0) > versions.ERROR_RATE_CAP for r in rates):
                self.diverged.add(step[1])
        if name in ("FLUSHALL", "FLUSHDB"):
            self.filters.forget_all()
            self.diverged.clear()
            self.expiring.clear()
            self.expiry_at.clear()
        elif name in ("DEL", "UNLINK"):
            for key in step[1:]:
                self.filters.forget(key)
                self.diverged.discard(key)
                self.expiring.pop(key, None)
                self.expiry_at.pop(key, None)
        elif name in EXPIRES and len(step) >= 3 and 1 in (filters.flag(ours), filters.flag(theirs)):
            try:
                n = int(step[2])
            except ValueError:
                return
            now = time.time() * 1000
            at = EXPIRES[name](n, now)
            self.expiry_at[step[1]] = at
            if at <= now:
                self.filters.forget(step[1])
            elif at <= now + EXPIRY_LEEWAY_MS:
                self.expiring[step[1]] = at
                self.filters.forget(step[1])

    def dump(self, step, ours, theirs):
        src = self.filters.keys.get(step.src)
        self.settle()
        apart = step.src in self.loose_keys()
        loose = src is not None and src.loose or apart
        # The round trip deletes the destination first.
        self.diverged.discard(step.dst)
        self.expiring.pop(step.dst, None)
        self.filters.forget(step.dst)
        if apart:
            self.diverged.add(step.dst)
            return True
        if ours != theirs and not loose:
            return False
        if ours[1] == "loaded" and ours[2] == (("+", b"OK"),):
            self.filters.copy(step.src, step.dst)
            if ours != theirs:
                self.filters.keys[step.dst].loose = True
        return True


# Commands that write their first key from the others they name.
MERGES = {"CMS.MERGE", "TDIGEST.MERGE", "PFMERGE"}

# How long after an expiry falls both servers are sure to have deleted the key (Redis
# finds an expired key on access, and its active cycle runs ten times a second).
EXPIRY_LEEWAY_MS = 1000

# When an expiry set by each command falls, in ms, given its argument and the time now.
EXPIRES = {
    "EXPIRE": lambda n, now: now + n * 1000,
    "PEXPIRE": lambda n, now: now + n,
    "EXPIREAT": lambda n, now: n * 1000,
    "PEXPIREAT": lambda n, now: n,
}


def by_design(name, step, ours, theirs, diverged):
    """Whether (ours, theirs) is a listed difference between RedisBloom 2.8 and 8
    (versions.py); a range rule marks the key diverged."""
    change = versions.explain(name, step, ours, theirs)
    if change and change.diverges and len(step) > 1:
        diverged.add(step[1])
    return change is not None
