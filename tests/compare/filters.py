"""Bloom and cuckoo replies that may differ by design, and the model that tells them.

rocksketch's Bloom and cuckoo filters are blocked: all of an item's bits, or both of
its buckets, lie in one page, so an add is one small blind-merge operand (DESIGN.md).
They keep RedisBloom's sizes, hashes and rules, but not its bit and bucket positions, so
*which* items collide differs: a false positive on one server is a true negative on the
other, a fingerprint deleted by a colliding item is another item's, and the moment a
cuckoo filter is full or grows (kicks that fail, against this store's load target)
differs too. Everything else must be identical, and neither server may ever answer a
false negative.

So each filter key has a model: `truth`, how many times each item was added on both
servers and not deleted since; `loose` once the servers' counts diverged (an add one of
them took for a duplicate, or refused as full); `fuzzy` once a delete may have taken a
colliding item's fingerprint (false negatives are then RedisBloom's behaviour too).
"""

from collections import Counter

ADDS = {"BF.ADD", "BF.MADD", "BF.INSERT", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX"}
READS = {"BF.EXISTS", "BF.MEXISTS", "CF.EXISTS", "CF.MEXISTS", "CF.COUNT"}
INFOS = {"BF.INFO", "BF.CARD", "BF.DEBUG", "CF.INFO", "CF.DEBUG"}
# Fields of CF.INFO (and CF.DEBUG) that follow from when the filter grew, and from
# RedisBloom's compaction: a delete from a filter of several sub-filters, once deletes
# pass a tenth of the items, moves fingerprints from the newest sub-filters into older
# ones, drops the sub-filters left empty and counts deletes from 0 again
# (CuckooFilter_Compact). rocksketch does not compact: moving fingerprints rewrites
# pages, which no write here does (each write is a blind merge of one page's operand),
# and the answers of CF.EXISTS and CF.COUNT are the same without it; only these counts,
# and the Size that follows from the number of sub-filters, differ.
GROWTH = {b"Size", b"Number of filters", b"filters", b"Number of items deleted", b"deletes"}


class Filter:
    def __init__(self):
        self.truth = Counter()
        self.loose = False
        self.fuzzy = False
        self.deleted = False  # a delete RedisBloom may have compacted after

    def copy(self):
        other = Filter()
        other.truth, other.loose, other.fuzzy = Counter(self.truth), self.loose, self.fuzzy
        other.deleted = self.deleted
        return other


def flag(reply):
    """0/1 of a membership reply (an integer in RESP2, a boolean in RESP3), else None."""
    marker, value = reply
    if marker == ":" and value in (0, 1, -1):
        return value
    if marker == "#":
        return int(value)
    return None


def items_of(name, step):
    """The items a filter command names, in reply order."""
    args = list(step[2:])
    if name in ("BF.INSERT", "CF.INSERT", "CF.INSERTNX"):
        upper = [str(a).upper() for a in args]
        return args[upper.index("ITEMS") + 1 :] if "ITEMS" in upper else []
    return args


def elements(reply):
    """A reply's elements if it is an array, else the reply as one element."""
    marker, value = reply
    return list(value) if marker in "*~" and value is not None else [reply]


class Filters:
    def __init__(self):
        self.keys = {}

    def forget(self, key):
        self.keys.pop(key, None)

    def forget_all(self):
        self.keys.clear()

    def copy(self, src, dst):
        self.keys[dst] = self.keys[src].copy() if src in self.keys else Filter()

    def same(self, name, step, ours, theirs):
        """Whether the replies agree up to the by-design differences; updates the model."""
        if len(step) < 2:
            return ours == theirs
        f = self.keys.setdefault(step[1], Filter())
        if name in ADDS:
            return self.add(f, name, items_of(name, step), ours, theirs)
        if name in READS:
            return self.read(f, name, items_of(name, step), ours, theirs)
        if name == "CF.DEL":
            return self.delete(f, step, ours, theirs)
        if name in INFOS:
            return ours == theirs or f.loose or grown(name, ours, theirs, f.deleted)
        return ours == theirs

    def add(self, f, name, items, ours, theirs):
        if f.loose:
            self.count_adds(f, items, ours, theirs)
            return True
        o, t = elements(ours), elements(theirs)
        if ours[0] != theirs[0] or (len(o) != len(t) and ours[0] != "-"):
            # An array cut short by an error on one server only: a full filter there.
            if not full_at_one(o, t):
                return False
        # CF.ADD and CF.INSERT never find duplicates: their false (RESP3) is no room.
        no_room = (-1, 0) if name in ("CF.ADD", "CF.INSERT") else (-1,)
        for item, a, b in zip(items, o, t):
            if a == b:
                continue
            fa, fb = flag(a), flag(b)
            refused = is_full(a) or is_full(b) or fa in no_room or fb in no_room
            duplicate = not refused and fa is not None and fb is not None and {fa, fb} == {0, 1}
            if duplicate and f.truth[item] > 0 and not f.fuzzy:
                return False  # a false negative
            if not (duplicate or refused):
                return False
            f.loose = True
        self.count_adds(f, items, ours, theirs)
        return True

    @staticmethod
    def count_adds(f, items, ours, theirs):
        # Added on both: a 0 (present already, or a false positive) adds no copy.
        for item, a, b in zip(items, elements(ours), elements(theirs)):
            if flag(a) == flag(b) == 1:
                f.truth[item] += 1

    def read(self, f, name, items, ours, theirs):
        if ours[0] != theirs[0]:
            return False
        o, t = elements(ours), elements(theirs)
        if len(o) != len(t):
            return False
        for item, a, b in zip(items, o, t):
            if a == b:
                continue
            if a[0] != b[0] or a[0] not in ":#":
                return False
            if name == "CF.COUNT":
                if not (f.fuzzy or f.loose or min(a[1], b[1]) >= f.truth[item]):
                    return False
            elif f.truth[item] > 0 and not f.fuzzy:
                return False  # one of them answered a false negative
        return True

    def delete(self, f, step, ours, theirs):
        item = step[2] if len(step) == 3 else None
        a, b = flag(ours), flag(theirs)
        if ours != theirs:
            if a is None or b is None:
                return False
            if item is None or (f.truth[item] > 0 and not f.fuzzy and not f.loose):
                return False  # an item added on both must be found on both
            f.loose = True
        if a == 1 or b == 1:
            f.fuzzy = True
            f.deleted = True
            if a == b == 1 and f.truth[item] > 0:
                f.truth[item] -= 1
        return True


def is_full(reply):
    """A refusal for want of room, which comes when the filter grew (see above): a full
    non-scaling filter, or a chain at its most sub-filters (cf-max-expansions)."""
    return reply[0] == "-" and reply[1] in (
        b"Filter is full", b"ERR non scaling filter is full", b"Maximum expansions reached")


def full_at_one(o, t):
    """Equal but that one server's reply stopped at a full filter's error where the
    other went on."""
    for stopped, went_on in ((o, t), (t, o)):
        if stopped and is_full(stopped[-1]) and len(stopped) <= len(went_on):
            if all(a == b or flag(a) is not None for a, b in zip(stopped[:-1], went_on)):
                return True
    return False


def grown(name, ours, theirs, deleted):
    """CF.INFO or CF.DEBUG equal but for the fields that follow from when it grew, where
    one server grew the filter (the other may not have yet), or RedisBloom may have
    compacted it after a delete (and dropped sub-filters, down to one)."""
    if name == "CF.INFO" and ours[0] == theirs[0] and ours[0] in "*%":
        o, t = pairs(ours), pairs(theirs)
        if [k for k, _ in o] != [k for k, _ in t]:
            return False
        filters = [v for k, v in o + t if k == b"Number of filters"]
        return (deleted or max(filters, default=1) > 1) and all(
            a == b or k in GROWTH for (k, a), (_, b) in zip(o, t))
    if name == "CF.DEBUG" and ours[0] == theirs[0] == "$":
        o, t = fields(ours[1]), fields(theirs[1])
        several = deleted or max(int(o["filters"]), int(t["filters"])) > 1
        return o.keys() == t.keys() and several and all(
            o[k] == t[k] or k.encode() in GROWTH for k in o)
    return False


def pairs(reply):
    marker, value = reply
    if marker == "%":
        return [(k[1], v[1]) for k, v in value]
    return [(value[i][1], value[i + 1][1]) for i in range(0, len(value) - 1, 2)]


def fields(text):
    return dict(part.split(":", 1) for part in text.decode().split() if ":" in part)
