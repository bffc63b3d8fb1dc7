"""Where RedisBloom 8 answers otherwise than the 2.8.2 this test runs against, rocksketch
answers as 8 does (COMPAT.md; shared/vectors' transcripts were recorded from 8.x). Each
entry: the command, what 2.8.2 answers, what 8 answers, and the reason, checked against
RedisBloom's source at HEAD b28c2945, the transcripts' (src/rebloom.c, config.c).

An entry whose `diverges` is set is a range rule: one server created (or changed) a key
the other refused, so the two keys are compared no further until they are deleted.
"""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    command: str
    theirs: str  # a regular expression over RedisBloom 2.8.2's reply, "+OK" for OK
    ours: str  # the same over rocksketch's (RedisBloom 8's) reply
    why: str
    diverges: bool = False
    # Where set, the change explains only the steps for which check(step, ours) holds.
    check: object = None


CHANGES = [
    Change("BF.RESERVE", r"ERR \(0 < error rate range < 1\) ",
           r"ERR error rate must be in the range \(0\.000000, 1\.000000\)",
           "8 states the range of its bf-error-rate setting"),
    Change("BF.RESERVE", r"ERR \(capacity should be larger than 0\)",
           r"ERR capacity must be in the range \[1, 1073741824\]",
           "8 states the range of its bf-initial-size setting"),
    Change("BF.RESERVE", r"\+OK", r"ERR capacity must be in the range \[1, 1073741824\]",
           "8 caps a capacity at 2^30 (bf-initial-size's maximum); 2.8 had no cap", True),
    Change("BF.RESERVE", r"ERR expansion should be greater or equal to 1", r"\+OK",
           "8 takes EXPANSION 0 as a non-scaling filter", True),
    Change("BF.RESERVE", r"Nonscaling filters cannot expand", r"ERR bad expansion",
           "8 parses the expansion before it checks NONSCALING"),
    Change("BF.RESERVE", r"Nonscaling filters cannot expand", r"ERR item exists",
           "8 takes EXPANSION 0 as non-scaling, and then finds the key exists"),
    Change("BF.RESERVE", r"Nonscaling filters cannot expand", r"\+OK",
           "8 takes EXPANSION 0 as non-scaling, NONSCALING or not", True),
    Change("BF.RESERVE", r"Nonscaling filters cannot expand|ERR item exists|\+OK|"
           r"ERR expansion should be greater or equal to 1|ERR bad expansion|ERR no expansion",
           r"ERR capacity must be in the range \[1, 1073741824\]",
           "8 checks the capacity's range before the options and the key", True),
    Change("BF.RESERVE", r"\+OK", r"ERR expansion must be in the range \[0, 32768\]",
           "8 caps the expansion at 32768 (bf-expansion-factor's maximum)", True),
    Change("BF.RESERVE", r"ERR could not create filter",
           r"ERR expansion must be in the range \[0, 32768\]",
           "8 checks the expansion's range before it creates the filter (2.8 had no range, "
           "and then failed to size it)"),
    Change("BF.RESERVE", r"ERR expansion should be greater or equal to 1",
           r"ERR expansion must be in the range \[0, 32768\]",
           "8 states the range of its bf-expansion-factor setting"),
    Change("BF.INSERT", r"Bad argument received", r".*",
           "2.8 refused an out-of-range option only after parsing all of them, with one text; "
           "8 checks each option's range as it reads it (Bad capacity / Bad error rate / "
           "Bad expansion) and takes EXPANSION 0 as non-scaling", True),
    Change("BF.INSERT", r"\*.*|Unknown argument received|ERR not found|WRONGTYPE .*",
           r"Bad (capacity|error rate|expansion)",
           "8 checks each option's range as it reads it; 2.8 took a capacity above 2^30, "
           "an expansion above 32768 or an error rate of 1 or more", True),
    Change("BF.INSERT", r"Bad (capacity|error rate|expansion)", r"Bad (capacity|error rate|expansion)",
           "8 checks each option's range as it reads it, so an out-of-range option is "
           "refused before a later one that does not parse (which 2.8 refused first)",
           check=lambda step, ours: ours == bf_insert_option_error(step)),
    Change("BF.RESERVE", r"ERR item exists|WRONGTYPE .*",
           r"ERR (expansion must be in the range \[0, 32768\]|capacity must be in the range .*|bad expansion)",
           "8 checks every argument before the key (2.8 some after)"),
    Change("BF.RESERVE", r"ERR expansion should be greater or equal to 1|Nonscaling filters cannot expand",
           r"ERR item exists|WRONGTYPE .*",
           "8 takes EXPANSION 0, then finds the key exists"),
    Change("CF.RESERVE", r"Capacity must be at least \(BucketSize \* 2\)",
           r"Capacity must be in the range \[2 \* BUCKETSIZE, 1073741824\]",
           "8 states the range, with the cap of its cf-initial-size setting"),
    Change("CF.RESERVE", r"ERR item exists", r"Capacity must be in the range \[2 \* BUCKETSIZE, 1073741824\]",
           "8 checks the capacity's range before the key"),
    Change("CF.INSERTNX", r"Capacity must be at least \(BucketSize \* 2\)",
           r"Capacity must be in the range \[cf-bucket-size \* 2, 1073741824\]",
           "as CF.INSERT"),
    Change("CF.INSERT", r"Capacity must be at least \(BucketSize \* 2\)",
           r"Capacity must be in the range \[cf-bucket-size \* 2, 1073741824\]",
           "8 checks CF.INSERT's capacity against its cf-initial-size setting's range"),
    Change("CF.INSERT", r"\*.*", r"Capacity must be in the range \[cf-bucket-size \* 2, 1073741824\]",
           "8 caps CF.INSERT's capacity at 2^30; 2.8 had no cap", True),
    Change("CF.RESERVE", r"(BUCKETSIZE|MAXITERATIONS|EXPANSION): value must be an integer "
           r"between (\d+) and (\d+), inclusive\.",
           r"\1: value must be in the range \[\2, \3\]", "8's wording of the same range"),
    Change("CF.INSERT", r"ERR wrong number of arguments for 'cf.insert' command", r"#.*|:.*",
           "ours, not 8's: CF.INSERT key item is the cuckoo-module design's short form, "
           "answered as CF.ADD (src/command/cuckoo.rs)", True),
    Change("TDIGEST.INFO", r"MEMORY", r"MEMORY",
           "8's Memory usage is 80 + 16 x capacity (the transcripts); 2.8's struct is 8 "
           "bytes smaller and it sizes tiny compressions' buffers otherwise"),
]

# Error rates above 0.25: 8 caps them at 0.25 (BF_ERROR_RATE_CAP), 2.8 took them as they
# were, so the filters' sizes differ from then on (design.py marks the key diverged).
ERROR_RATE_CAP = 0.25

# Not generated, so not compared, by design:
# - Capacities above 2^30: 8 refuses them (in the CHANGES above); 2.8 allocates them, and
#   dumping one takes minutes.
# - A wrong number of arguments inside MULTI: 8 declares each command's arity (cmd_info),
#   so Redis refuses the command when it is queued, as rocksketch does; 2.8 declared
#   none, so Redis queued it and EXEC answered the error.
# - TOPK.INCRBY with a bad increment before its last pair: RedisBloom (2.8 and 8) then
#   sends an array shorter than the length it announced, and the connection is out of
#   step from there; rocksketch sends the array up to the error.
# - SCANDUMP iterators and chunks are each server's own, so only iterators a SCANDUMP
#   returned (the round trip), and ones no format takes, are sent; RedisBloom 2.8 also
#   believes a header chunk's sizes and aborts when it cannot allocate them.
# - Sizes a client controls past what RedisBloom can allocate at once (a width, a k, a
#   compression of billions): RedisBloom allocates them whole and the server is
#   killed; rocksketch's own tests (hostile_sizes.rs) take them to their limits.


def text(reply):
    marker, value = reply
    if marker in "+-":
        return (marker if marker == "+" else "") + value.decode("utf-8", "replace")
    return marker + repr(value)


def explain(name, step, ours, theirs):
    """The change that explains the difference, or None."""
    t, o = text(theirs), text(ours)
    for change in CHANGES:
        if change.command != name:
            continue
        if change.theirs == "MEMORY":
            if memory_usage_only(ours, theirs):
                return change
            continue
        if change.check is not None and not change.check(step, o):
            continue
        m = re.fullmatch(change.theirs, t, re.S)
        if m and re.fullmatch(m.expand(change.ours) if m.groups() else change.ours, o, re.S):
            return change
    return None


def memory_usage_only(ours, theirs):
    """TDIGEST.INFO replies equal but for Memory usage, which in ours is 8's figure,
    80 + 16 x Capacity (2.8's struct is smaller, and its buffers differ for tiny
    compressions)."""
    if ours[0] != theirs[0] or ours[0] not in "*%":
        return False
    flat = lambda r: [x for kv in r[1] for x in kv] if r[0] == "%" else list(r[1])
    o, t = flat(ours), flat(theirs)
    if len(o) != len(t) or len(o) < 4 or o[-2] != ("+", b"Memory usage") or o[2] != ("+", b"Capacity"):
        return False
    return o[:-1] == t[:-1] and o[-1] == (":", 80 + 16 * o[3][1])


INTEGER = re.compile(r"0|-?[1-9][0-9]*")
DOUBLE = re.compile(r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity)", re.I)


def redis_integer(text):
    """Redis's string2ll: an integer with no sign but '-', no leading zero, in 64 bits."""
    if not INTEGER.fullmatch(text) or not -(1 << 63) <= int(text) < 1 << 63:
        return None
    return int(text)


def redis_double(text):
    """Redis's string2d: strtod over the whole text, no NaN, no overflow or underflow to 0."""
    if not DOUBLE.fullmatch(text):
        return None
    value = float(text)
    finite = text.strip("+-").lower() not in ("inf", "infinity")
    if finite and (value in (float("inf"), float("-inf")) or value == 0 and re.search("[1-9]", text.split("e")[0].split("E")[0])):
        return None
    return value


def bf_insert_option_error(step):
    """The error RedisBloom 8 answers for BF.INSERT's options (rebloom.c at HEAD): each
    option by its first letter, its value parsed and range-checked as it is read."""
    args = [str(a) for a in step]
    at = 2
    while at < len(args):
        word = args[at].lower()
        if word.startswith("i"):
            return None
        if word.startswith(("e", "c")):
            at += 1
            if at == len(args):
                return None
            value = args[at]
            at += 1
            if word.startswith("er"):
                v = redis_double(value)
                if v is None or not 0 < v < 1:
                    return "Bad error rate"
            elif word.startswith("e"):
                v = redis_integer(value)
                if v is None or not 0 <= v <= 32768:
                    return "Bad expansion"
            else:
                v = redis_integer(value)
                if v is None or not 1 <= v <= 1 << 30:
                    return "Bad capacity"
        elif word.startswith("n"):
            at += 1
        else:
            return "Unknown argument received"
    return None
