"""Two readers and one appender working at once for a bounded number of
rounds; every byte any reader sees is checked against the value the
appender wrote there."""
import json
import os
import threading

import numpy as np

from fsutil import make_store

ROW = (16, 64)   # 4 KiB records
MUL = 2654435761
INV = pow(MUL, -1, 2**32)


def row(i):
    """The deterministic content of record i."""
    return (np.arange(ROW[0] * ROW[1], dtype=np.uint32).reshape(ROW) * 7 +
            i * MUL).astype("<u4")


def test_two_readers_one_appender(src, mount):
    store = os.path.join(src, "s")
    make_store(store, "<u4", shape=ROW, codec="zstd",
               rows=np.stack([row(i) for i in range(64)]))
    m = mount(src)
    rounds, per_round = 40, 16
    done = threading.Event()
    errors = []

    def length():
        with open(m.path("s", "stats")) as f:
            return json.load(f)["records"]

    def appender():
        try:
            n = 64
            for _ in range(rounds):
                with open(m.path("s", "append"), "wb") as f:
                    np.save(f, np.stack([row(n + k)
                                         for k in range(per_round)]))
                n += per_round
        except Exception as e:          # reported by the main thread
            errors.append(e)
        finally:
            done.set()

    def reader(seed):
        rng = np.random.default_rng(seed)
        checked = 0
        try:
            while not done.is_set() or checked < 200:
                n = length()
                i = int(rng.integers(0, n))
                a = np.load(m.path("s", "records", "%d.npy" % i))
                assert (a == row(i)).all(), "record %d differs" % i
                b = np.load(m.path("s", "batch", "iid", "8",
                                   "%d-0.npy" % i))
                # each row names its record: check it is that record
                for k in range(len(b)):
                    j = int(b[k, 0, 0]) * INV % 2**32
                    assert j < length() and (b[k] == row(j)).all()
                checked += 1
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=appender)] + [
        threading.Thread(target=reader, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors
    assert length() == 64 + rounds * per_round
    last = 64 + rounds * per_round - 1
    assert (np.load(m.path("s", "records", "%d.npy" % last)) ==
            row(last)).all()
