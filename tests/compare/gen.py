"""Seeded random command streams over every RedisBloom family, the key commands and
transactions: mostly valid commands that fill the structures, and in between the wrong
types, bad arguments, wrong arities and edge values a client could send.

A stream is a list of steps. A step is a plain command (a tuple of arguments) or a
`Dump(family, src, dst)`, the SCANDUMP/LOADCHUNK round trip each server makes with its own
iterators and chunks (the runner plays it, see `run.py`).
"""

from dataclasses import dataclass

# Keys by family; a command names one of its family's keys most of the time, and any
# key otherwise, so that wrong types come up.
KEYS = {
    "bf": ["b1", "b2", "b3"],
    "cf": ["c1", "c2", "c3"],
    "cms": ["m1", "m2", "m3"],
    "topk": ["k1", "k2", "k3"],
    "td": ["t1", "t2", "t3"],
    "hll": ["h1", "h2", "h3"],
}
ALL_KEYS = [k for ks in KEYS.values() for k in ks] + ["x"]

# Top-K keys whose HeavyKeeper decay is 1 or tiny: no reply depends on RedisBloom's
# rand() (see design.py); the others get any decay.
STEADY_TOPK = {"k1", "k2"}

INTS = ["0", "-1", "1", "2", "-0", "+1", "01", " 1", "1.5", "1e3", "", "abc", "0x10",
        "2147483647", "2147483648", "4294967295", "4294967296", "-2147483648",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "18446744073709551615"]
# Bad values for a size (a width, a k, a compression): RedisBloom allocates what a valid
# size asks for at once, so the huge valid ones are left to rocksketch's own tests.
BAD_SIZES = ["0", "-1", "-0", "+1", "01", " 1", "1.5", "1e3", "", "abc", "0x10",
             "9223372036854775808", "-9223372036854775808", "18446744073709551615"]
BAD_RATES = ["0", "-0", "1", "-1", "1.5", "inf", "-inf", "nan", "abc", "", "1e309", "1e-400"]
DOUBLES = ["0", "-0", "1", "-1", "0.5", "1e-300", "1e308", "1e309", "-1e309", "inf", "-inf",
           "+inf", "nan", "-nan", "NaN", "1e-400", "4.9e-324", "0x10", ".5", "+3", "1E1", "abc",
           "", " 1", "1 ", "1.0000000000000002", "0.1", "1e20", "-1e20"]


@dataclass(frozen=True)
class Dump:
    family: str  # "BF", "CF", or "HLL" (GET then SET)
    src: str
    dst: str


class Gen:
    def __init__(self, rng):
        self.r = rng
        pool = ["a", "b", "c", "", "item", "0", "-1", "x" * 200, "\x00\x01\xff", "é",
                "a b", "\r\n"]
        pool += [f"i{n}" for n in range(rng.choice([8, 40, 300]))]
        self.items_pool = pool
        self.in_multi = False

    # --- values -------------------------------------------------------------------
    def chance(self, p):
        return self.r.random() < p

    def key(self, family):
        if self.chance(0.9):
            return self.r.choice(KEYS[family])
        return self.r.choice(ALL_KEYS)

    def other(self, family, key):
        """Another key of the family's than `key`."""
        return self.r.choice([k for k in KEYS[family] if k != key])

    def item(self):
        pool = self.items_pool
        # Skewed: the first items come up far more often than the tail.
        return pool[min(int(self.r.expovariate(1 / 8)), len(pool) - 1)]

    def items(self, most=6):
        return [self.item() for _ in range(self.r.randint(1, most))]

    def int_(self, *typical, edge=0.08):
        if self.chance(edge):
            return self.r.choice(INTS)
        return str(self.r.choice(typical))

    def size(self, *typical, edge=0.08):
        if self.chance(edge):
            return self.r.choice(BAD_SIZES)
        return str(self.r.choice(typical))

    def rate(self, *typical, edge=0.08):
        if self.chance(edge):
            return self.r.choice(BAD_RATES)
        return repr(self.r.choice(typical))

    def double(self, *typical, edge=0.08):
        if self.chance(edge):
            return self.r.choice(DOUBLES)
        return repr(self.r.choice(typical)) if typical else self.value()

    def value(self):
        """A t-digest observation: mostly ordinary numbers, duplicates, some extremes."""
        r = self.r.random()
        if r < 0.4:
            return repr(round(self.r.gauss(0, 100), self.r.randint(0, 6)))
        if r < 0.7:
            return str(self.r.randint(-5, 5))
        if r < 0.9:
            return repr(self.r.uniform(-1e6, 1e6))
        return self.r.choice(DOUBLES)

    def mangle(self, cmd):
        """Sometimes a wrong arity: a command cut short or with an extra argument."""
        if self.in_multi:
            return cmd
        if self.chance(0.03) and len(cmd) > 1:
            return cmd[: self.r.randint(1, len(cmd) - 1)]
        if self.chance(0.02):
            return cmd + (self.item(),)
        return cmd

    def options(self, pairs):
        """Option words in random order, some repeated or misspelt."""
        chosen = [p for p in pairs if self.chance(0.35)]
        self.r.shuffle(chosen)
        out = []
        for p in chosen:
            out += p
        if self.chance(0.03):
            out.append(self.r.choice(["BOGUS", "items", "", "CAPACITY"]))
        return out

    # --- families -----------------------------------------------------------------
    def bf(self):
        k = self.key("bf")
        c = self.r.random()
        if c < 0.08:
            cmd = ["BF.RESERVE", k, self.double(0.01, 0.001, 0.1, 0.25, 0.5, 0.9, 1e-5),
                   self.size(1, 2, 5, 10, 100, 1000)]
            cmd += self.options([("EXPANSION", self.size(0, 1, 2, 3, 4, 32768, 32769)),
                                 ("NONSCALING",)])
        elif c < 0.3:
            cmd = ["BF.ADD", k, self.item()]
        elif c < 0.42:
            cmd = ["BF.MADD", k, *self.items()]
        elif c < 0.54:
            cmd = ["BF.INSERT", k]
            cmd += self.options([("CAPACITY", self.size(1, 3, 10, 100)),
                                 ("ERROR", self.double(0.01, 0.001, 0.2)),
                                 ("EXPANSION", self.size(0, 1, 2, 5)),
                                 ("NOCREATE",), ("NONSCALING",)])
            if self.chance(0.95):
                cmd += ["ITEMS", *self.items()]
        elif c < 0.7:
            cmd = ["BF.EXISTS", k, self.item()]
        elif c < 0.8:
            cmd = ["BF.MEXISTS", k, *self.items()]
        elif c < 0.88:
            field = self.r.choice(["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION",
                                   "capacity", "BOGUS"])
            cmd = ["BF.INFO", k] + ([field] if self.chance(0.5) else [])
        elif c < 0.92:
            cmd = ["BF.CARD", k]
        elif c < 0.95:
            cmd = ["BF.DEBUG", k]
        elif c < 0.98:
            return Dump("BF", k, self.other("bf", k))
        else:
            return self.bad_chunk("BF", k)
        return self.mangle(tuple(cmd))

    def cf(self):
        k = self.key("cf")
        c = self.r.random()
        if c < 0.08:
            cmd = ["CF.RESERVE", k, self.size(2, 4, 10, 64, 100, 1000)]
            cmd += self.options([("BUCKETSIZE", self.int_(1, 2, 4, 255, 256)),
                                 ("MAXITERATIONS", self.int_(1, 5, 20, 65535, 65536)),
                                 ("EXPANSION", self.size(0, 1, 2, 3, 32768, 32769))])
        elif c < 0.26:
            cmd = [self.r.choice(["CF.ADD", "CF.ADDNX"]), k, self.item()]
        elif c < 0.38:
            cmd = [self.r.choice(["CF.INSERT", "CF.INSERTNX"]), k]
            cmd += self.options([("CAPACITY", self.size(1, 4, 10, 100)), ("NOCREATE",)])
            if self.chance(0.95):
                cmd += ["ITEMS", *self.items()]
        elif c < 0.52:
            cmd = [self.r.choice(["CF.EXISTS", "CF.COUNT"]), k, self.item()]
        elif c < 0.6:
            cmd = ["CF.MEXISTS", k, *self.items()]
        elif c < 0.74:
            cmd = ["CF.DEL", k, self.item()]
        elif c < 0.84:
            cmd = ["CF.INFO", k]
        elif c < 0.9:
            cmd = ["CF.DEBUG", k]
        elif c < 0.97:
            return Dump("CF", k, self.other("cf", k))
        else:
            return self.bad_chunk("CF", k)
        return self.mangle(tuple(cmd))

    def bad_chunk(self, family, k):
        """A SCANDUMP or LOADCHUNK whose answer does not depend on the chunks' format,
        which is each server's own (see design.py): a bad iterator, or a chunk refused
        for the key's state or its length."""
        if self.chance(0.4):
            bad = ["x", "", "1.5"] + (["-1"] if family == "CF" else [])
            return (f"{family}.SCANDUMP", k, self.r.choice(bad))
        if family == "BF":
            # Iterator 1 with 2 to 8 bytes: shorter than any header, and a data chunk
            # that does not fit before its offset; 0 and below: no chunk's.
            it = self.r.choice(["1", "0", "-3", "x", "9"])
            size = self.r.randint(10, 40) if it == "9" else self.r.randint(2, 8)
        else:
            # 1: a header (refused for an existing key, or too short); 0: no position.
            it = self.r.choice(["1", "0", "x", "-"])
            size = self.r.randint(0, 8)
        data = bytes(self.r.randrange(256) for _ in range(size))
        return (f"{family}.LOADCHUNK", k, it, data)

    def cms(self):
        k = self.key("cms")
        c = self.r.random()
        if c < 0.06:
            cmd = ["CMS.INITBYDIM", k, self.size(1, 2, 5, 100, 2000), self.size(1, 2, 3, 7)]
        elif c < 0.1:
            cmd = ["CMS.INITBYPROB", k, self.rate(0.01, 0.001, 0.1, 0.5, 1.5),
                   self.rate(0.01, 0.001, 0.1, 0.5, 0.99, 1e-300)]
        elif c < 0.45:
            cmd = ["CMS.INCRBY", k]
            for _ in range(self.r.randint(1, 4)):
                cmd += [self.item(), self.int_(1, 2, 10, 1000, 4294967295, 2147483648)]
        elif c < 0.75:
            cmd = ["CMS.QUERY", k, *self.items()]
        elif c < 0.88:
            srcs = [self.key("cms") for _ in range(self.r.randint(1, 3))]
            n = len(srcs) if self.chance(0.93) else self.int_(0, 1, 2, 4, edge=0.5)
            cmd = ["CMS.MERGE", k, str(n), *srcs]
            if self.chance(0.4):
                cmd += ["WEIGHTS"] + [self.int_(1, 2, -1, 3, 0, 100000) for _ in srcs]
                if self.chance(0.1):
                    cmd.pop()
        else:
            cmd = ["CMS.INFO", k]
        return self.mangle(tuple(cmd))

    def topk(self):
        k = self.key("topk")
        c = self.r.random()
        if c < 0.06:
            cmd = ["TOPK.RESERVE", k, self.size(1, 2, 3, 5, 10)]
            if k in STEADY_TOPK:
                decay = self.r.choice(["1", "1e-300", "0.999999999999999999"])
                cmd += [self.size(1, 2, 8, 50, edge=0), self.size(1, 3, 7, edge=0), decay]
                return tuple(cmd)  # never cut short to the default (random) decay
            elif self.chance(0.7):
                decay = self.double(0.9, 0.5, 1, 1.5, edge=0.2)
                cmd += [self.size(1, 2, 8, 50), self.size(1, 3, 7), decay]
        elif c < 0.4:
            cmd = ["TOPK.ADD", k, *self.items()]
        elif c < 0.55:
            # A bad increment only in the last pair: RedisBloom answers one before the
            # last with an array shorter than it announced (see design.py).
            cmd = ["TOPK.INCRBY", k]
            for _ in range(self.r.randint(0, 2)):
                cmd += [self.item(), str(self.r.choice([1, 2, 10, 1000, 100000]))]
            cmd += [self.item(), self.int_(1, 2, 10, 100000, 100001)]
        elif c < 0.7:
            cmd = [self.r.choice(["TOPK.QUERY", "TOPK.COUNT"]), k, *self.items()]
        elif c < 0.9:
            cmd = ["TOPK.LIST", k] + (["WITHCOUNT"] if self.chance(0.5) else [])
        else:
            cmd = ["TOPK.INFO", k]
        return self.mangle(tuple(cmd))

    def td(self):
        k = self.key("td")
        c = self.r.random()
        if c < 0.06:
            cmd = ["TDIGEST.CREATE", k]
            if self.chance(0.6):
                cmd += ["COMPRESSION", self.size(1, 2, 10, 100, 500)]
        elif c < 0.4:
            cmd = ["TDIGEST.ADD", k] + [self.value() for _ in range(self.r.randint(1, 30))]
        elif c < 0.43:
            cmd = ["TDIGEST.RESET", k]
        elif c < 0.5:
            srcs = [self.key("td") for _ in range(self.r.randint(1, 3))]
            n = len(srcs) if self.chance(0.93) else self.int_(0, 1, 4, edge=0.5)
            cmd = ["TDIGEST.MERGE", k, str(n), *srcs]
            cmd += self.options([("COMPRESSION", self.size(1, 50, 100, 300)), ("OVERRIDE",)])
        elif c < 0.56:
            cmd = [self.r.choice(["TDIGEST.MIN", "TDIGEST.MAX", "TDIGEST.INFO"]), k]
        elif c < 0.68:
            qs = [self.double(0, 0.01, 0.1, 0.5, 0.9, 0.99, 1, 0.25) for _ in range(3)]
            cmd = ["TDIGEST.QUANTILE", k, *qs[: self.r.randint(1, 3)]]
        elif c < 0.8:
            name = self.r.choice(["TDIGEST.CDF", "TDIGEST.RANK", "TDIGEST.REVRANK"])
            cmd = [name, k] + [self.value() for _ in range(self.r.randint(1, 4))]
        elif c < 0.9:
            name = self.r.choice(["TDIGEST.BYRANK", "TDIGEST.BYREVRANK"])
            cmd = [name, k] + [self.int_(0, 1, 2, 5, 10, 100, 1000) for _ in range(3)]
        else:
            lo = self.double(0, 0.1, 0.25, 0.5)
            hi = self.double(0.5, 0.75, 0.9, 1, 0.3)
            cmd = ["TDIGEST.TRIMMED_MEAN", k, lo, hi]
        return self.mangle(tuple(cmd))

    def hll(self):
        k = self.key("hll")
        c = self.r.random()
        if c < 0.45:
            n = self.r.choice([0, 1, 1, 2, 5, 5, 30, 400])
            cmd = ["PFADD", k] + [self.item() if self.chance(0.5) else f"u{self.r.randrange(10**6)}"
                                  for _ in range(n)]
        elif c < 0.65:
            cmd = ["PFCOUNT", k] + [self.key("hll") for _ in range(self.r.choice([0, 0, 1, 2, 4]))]
        elif c < 0.77:
            cmd = ["PFMERGE", k] + [self.key("hll") for _ in range(self.r.randint(0, 3))]
        elif c < 0.85:
            cmd = ["GET", k]
        elif c < 0.9:
            cmd = ["PFDEBUG", self.r.choice(["GETREG", "getreg", "BOGUS"]), k]
        elif c < 0.95:
            return Dump("HLL", k, self.other("hll", k))
        else:
            cmd = ["TYPE", k]
        return self.mangle(tuple(cmd))

    def keyspace(self):
        k = self.r.choice(ALL_KEYS)
        c = self.r.random()
        if c < 0.15:
            cmd = (self.r.choice(["DEL", "UNLINK"]), *self.r.sample(ALL_KEYS, self.r.randint(1, 3)))
        elif c < 0.3:
            cmd = ("EXISTS", *[self.r.choice(ALL_KEYS) for _ in range(self.r.randint(1, 3))])
        elif c < 0.5:
            cmd = ("TYPE", k)
        elif c < 0.62:
            cmd = (self.r.choice(["EXPIRE", "PEXPIRE"]), k, self.int_(100000, 5000000, 0, -5))
            if self.chance(0.3):
                cmd += (self.r.choice(["NX", "XX", "GT", "LT", "BOGUS"]),)
        elif c < 0.68:
            cmd = (self.r.choice(["EXPIREAT", "PEXPIREAT"]), k, self.int_(1, 100, 4102444800))
        elif c < 0.8:
            cmd = (self.r.choice(["TTL", "PERSIST", "EXPIRETIME"]), k)
        elif c < 0.9:
            cmd = ("DBSIZE",)
        else:
            cmd = ("KEYS", self.r.choice(["*", "b*", "?1", "[ck]*", "x", "h*"]))
        return self.mangle(cmd)

    FAMILIES = ("bf", "cf", "cms", "topk", "td", "hll", "keyspace")

    def step(self, weights):
        family = self.r.choices(self.FAMILIES, weights)[0]
        return getattr(self, family)()

    def stream(self, length):
        """One episode: a stream that leans on a few families, some in transactions."""
        weights = [self.r.choice([0, 1, 3, 6]) for _ in self.FAMILIES]
        if not any(weights):
            weights[self.r.randrange(len(weights))] = 1
        steps = []
        while len(steps) < length:
            if self.chance(0.02):
                # No wrong arities inside: RedisBloom 2.8 queues them (design.py).
                self.in_multi = True
                body = [self.step(weights) for _ in range(self.r.randint(0, 5))]
                self.in_multi = False
                body = [s for s in body if not isinstance(s, Dump)]
                end = self.r.choice(["EXEC", "EXEC", "DISCARD"])
                steps += [("MULTI",), *body, (end,)]
            else:
                steps.append(self.step(weights))
        return steps
