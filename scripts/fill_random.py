"""Fills a rocksketch server with SIZE_MB MiB of Bloom filter pages of random bits, which
no compression shrinks, quickly: each page goes in as a `BF.LOADCHUNK` page chunk (the
format of src/bloom/dump.rs: magic, version, kind, crc32 of the payload, then sub-filter,
page and bitmap) into filters that `BF.RESERVE` made. Random increments would make
such a store too, but at one page operand per counter touched, a gigabyte takes most of
an hour (every flush rewrites every page); this takes seconds.

    python scripts/fill_random.py PORT SIZE_MB
"""

import os
import struct
import sys
import zlib

import redis

CAPACITY = 100_000_000  # ~114 MiB of bits at 1 % error
PIPELINE = 64


def page_chunk(page, bitmap):
    payload = struct.pack("<II", 0, page) + bitmap
    head = b"RKBF" + bytes([1, 2, 0, 0]) + struct.pack("<I", zlib.crc32(payload))
    return head + payload


def fill(client, size_mb):
    left = size_mb << 20
    key = 0
    while left > 0:
        name = f"random{key}"
        client.execute_command("BF.RESERVE", name, 0.01, CAPACITY)
        _, header = client.execute_command("BF.SCANDUMP", name, 0)
        # The header's payload (after the 12-byte frame): error f64, capacity u64,
        # expansion u32, filters u32, page_bits u32.
        page_bytes = struct.unpack_from("<I", header, 12 + 24)[0] // 8
        pages = min(CAPACITY * 9 // 8 // page_bytes, -(-left // page_bytes))
        pipe = client.pipeline(transaction=False)
        for page in range(pages):
            pipe.execute_command("BF.LOADCHUNK", name, 2, page_chunk(page, os.urandom(page_bytes)))
            if page % PIPELINE == PIPELINE - 1:
                pipe.execute()
        pipe.execute()
        left -= pages * page_bytes
        key += 1


def main():
    port, size_mb = int(sys.argv[1]), int(sys.argv[2])
    fill(redis.Redis(port=port), size_mb)


if __name__ == "__main__":
    main()
