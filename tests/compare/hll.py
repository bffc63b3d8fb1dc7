"""Redis's HyperLogLog strings, read as registers: what `GET` of a HyperLogLog is
compared by. Redis's sparse strings can group a run of equal registers differently
(that depends on the order the registers were set in) and stay dense once dense, where
rocksketch writes the canonical form for the registers; both read the same."""

REGISTERS = 16384


def registers(blob):
    """The 16384 registers of a HYLL string, or None if it is not a valid one."""
    if len(blob) < 16 or blob[:4] != b"HYLL":
        return None
    body = blob[16:]
    if blob[4] == 0:
        if len(body) != REGISTERS * 6 // 8:
            return None
        regs = []
        for i in range(REGISTERS):
            bit = i * 6
            pair = body[bit // 8] | ((body[bit // 8 + 1] if bit // 8 + 1 < len(body) else 0) << 8)
            regs.append((pair >> (bit % 8)) & 63)
        return tuple(regs)
    if blob[4] != 1:
        return None
    regs, i = [], 0
    while i < len(body):
        op = body[i]
        if op & 0xC0 == 0:
            regs += [0] * ((op & 0x3F) + 1)
        elif op & 0xC0 == 0x40:
            if i + 1 >= len(body):
                return None
            regs += [0] * ((((op & 0x3F) << 8) | body[i + 1]) + 1)
            i += 1
        else:
            regs += [((op >> 2) & 0x1F) + 1] * ((op & 3) + 1)
        i += 1
    return tuple(regs) if len(regs) == REGISTERS else None
