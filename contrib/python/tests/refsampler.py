"""
refsampler.py - a plain-Python transcription of the sampler algorithm as
include/zrecord.h documents it, so the tests can check the library's
batches against the specification rather than against itself.
"""
M64 = (1 << 64) - 1
G = 0x9E3779B97F4A7C15


def fmix(z):
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def words(key, x):
    s0 = fmix(fmix(key & M64) ^ x)
    c = 0
    while True:
        yield fmix((s0 + (c + 1) * G) & M64)
        c += 1


def _iid(seed, step, n, count):
    stream = words(seed, step)
    out = []
    for _ in range(count):
        m = next(stream) * n
        low = m & M64
        if low < n:
            th = ((1 << 64) - n) % n
            while low < th:
                m = next(stream) * n
                low = m & M64
        out.append(m >> 64)
    return out


def _perm(x, n, keys):
    h = 1
    while 4 ** h < n:
        h += 1
    mask = (1 << h) - 1
    while True:
        left, right = x >> h, x & mask
        for k in keys:
            left, right = right, left ^ (fmix(right ^ k) & mask)
        x = (left << h) | right
        if x < n:
            return x


def _cyclic(seed, step, n, count):
    per_cycle = n // count
    cycle, j = divmod(step, per_cycle)
    stream = words(seed, cycle)
    keys = [next(stream) for _ in range(6)]
    return [_perm(j * count + g, n, keys) for g in range(count)]


def batch(mode, seed, n, b, step, rank=0, world=1):
    """mode 0 sequential, 1 iid, 2 cyclic: rank's slice of step's batch."""
    count = max(world, 1) * b
    if mode == 0:
        full = [(step * count + g) % n for g in range(count)]
    elif mode == 1:
        full = _iid(seed, step, n, count)
    else:
        full = _cyclic(seed, step, n, count)
    return full[rank * b:rank * b + b]
