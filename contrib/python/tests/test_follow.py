"""
test_follow.py - a read-only loaderx store that follows a writer in
another process: open(follow=True) shares the store with it, refresh()
takes up exactly what it synced (never an unsynced record), every record
read equals what was written, and delete/compact wait for the follower.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from loaderx.zrecord import DenseStore, RaggedStore, StoreBusy

HERE = os.path.dirname(os.path.abspath(__file__))

# The writer: appends rows of value i in rounds; after each round it
# prints the length it has appended, waits for a line, syncs every other
# round (so some rounds stay unsynced when the follower refreshes).
WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    from loaderx.zrecord import DenseStore
    s = DenseStore.open(sys.argv[1], readonly=False)
    n = len(s)
    for r in range(6):
        s.append(np.arange(n, n + 7, dtype=np.int64)[:, None] * np.ones(
            (1, 8), dtype=np.int64))
        n += 7
        if r % 2:
            s.sync()
        print(n, r % 2, flush=True)
        sys.stdin.readline()
    s.close()
""")


def rows(first, n):
    return (np.arange(first, first + n, dtype=np.int64)[:, None] *
            np.ones((1, 8), dtype=np.int64))


def test_follower_sees_what_the_writer_synced():
    w = DenseStore.create("s", np.int64, (8,), codec="zstd")
    w.append(rows(0, 5))
    w.close()
    f = DenseStore.open("s", follow=True)
    assert f.readonly and len(f) == 5
    p = subprocess.Popen([sys.executable, "-c", WRITER, "s",
                          os.path.dirname(HERE)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    synced = 5
    try:
        for _ in range(6):
            n, did_sync = map(int, p.stdout.readline().split())
            if did_sync:
                synced = n
            with pytest.raises(StoreBusy):  # a snapshot needs no writer
                DenseStore.open("s", readonly=True)
            assert f.refresh() == synced
            assert len(f) == synced
            got = f[np.arange(synced)]
            np.testing.assert_array_equal(got, rows(0, synced))
            p.stdin.write("\n")
            p.stdin.flush()
    finally:
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    assert f.refresh() == 5 + 6 * 7  # close synced the rest
    f.close()


def test_delete_and_compact_wait_for_followers():
    w = RaggedStore.create("r", np.uint8, codec="raw")
    w.append([np.full(k + 1, k, np.uint8) for k in range(4)])
    w.sync()
    f = RaggedStore.open("r", follow=True)
    with pytest.raises(StoreBusy, match="follower"):
        w.delete(0)
    with pytest.raises(StoreBusy, match="follower"):
        w.compact()
    assert len(w) == 4
    w.append([np.full(9, 9, np.uint8)])
    w.sync()
    assert f.refresh() == 5
    np.testing.assert_array_equal(f[4], np.full(9, 9, np.uint8))
    f.close()
    w.delete(0)
    assert len(w) == 4
    w.close()


def test_follow_is_read_only():
    DenseStore.create("d", np.uint8, (2,)).close()
    f = DenseStore.open("d", follow=True)
    with pytest.raises(OSError):
        f.append(np.zeros((1, 2), np.uint8))
    assert f.refresh() == 0
    f.close()
