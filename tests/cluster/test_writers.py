"""test_writers.py - writers on different hosts, one right after the other,
keep each other's records: the second must see the store as the first left
it although its GlusterFS client cached the store's files (quick-read and
md-cache, default volume options)."""
import io
import os

import numpy as np

from fsutil import make_store, zrecord

BASE = np.arange(100, dtype="<i8")


def test_appends_from_two_hosts_both_stay(volume, hosts, tmp_path):
    dirs = hosts(4)
    store = [os.path.join(d, "s") for d in dirs]
    make_store(store[0], "<i8", shape=(), rows=BASE)
    a, b = str(tmp_path / "a.npy"), str(tmp_path / "b.npy")
    np.save(a, np.arange(1000, 1010, dtype="<i8"))
    np.save(b, np.arange(2000, 2010, dtype="<i8"))
    zrecord("stats", store[1])        # host 1 now holds the files in cache
    zrecord("append", store[2], a)
    zrecord("append", store[1], b)    # right after: the cache is warm
    want = np.concatenate([BASE, np.load(a), np.load(b)])
    # What the server holds (the brick), and what a host that never read
    # the store sees; hosts 0-2 may serve their cached view for a second.
    for s in (volume.brick_path(store[0]), store[3]):
        assert '"records": 120' in zrecord("stats", s).stdout.decode()
        got = np.load(io.BytesIO(zrecord("get", s, *range(120)).stdout))
        assert (got == want).all()
        zrecord("verify", s)
