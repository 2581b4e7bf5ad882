"""mount_reader - reads random records and batches of the concurrency
test's stores through a zrecordfs mount and checks every byte; used by
reader threads and, as `python3 mount_reader.py MNT SECONDS STOPFILE`, by
reader processes.  Once STOPFILE exists the mount may vanish under it:
errors are then expected and end the loop.

Record i of D (dense <u4, (16,)) holds i*16 + arange(16); record i of R
(ragged <u2) holds (i + arange(1 + i % 37)) mod 2**16."""
import errno
import json
import os
import random
import sys
import time

import numpy as np

COLS = 16
GONE = {errno.ENOTCONN, errno.ENOENT, errno.EIO, errno.ECONNABORTED}


def dense_rows(first, n):
    return (np.arange(first, first + n, dtype="<u8")[:, None] * COLS +
            np.arange(COLS)).astype("<u4")


def ragged_rec(i):
    return ((i + np.arange(1 + i % 37)) % 65536).astype("<u2")


def length(mnt, store):
    with open(os.path.join(mnt, store, "stats")) as f:
        return json.load(f)["records"]


def check_dense(mnt, i):
    got = np.load(os.path.join(mnt, "D", "records", f"{i}.npy"))
    assert got.dtype == np.dtype("<u4") and np.array_equal(
        got, dense_rows(i, 1)[0]), f"D record {i}: {got}"


def check_ragged(mnt, i):
    got = np.load(os.path.join(mnt, "R", "records", f"{i}.npy"))
    want = ragged_rec(i)
    assert got.dtype == want.dtype and np.array_equal(got, want), \
        f"R record {i}: {got}"


def check_batch(mnt, step):
    n = length(mnt, "D")
    got = np.load(os.path.join(mnt, "D", "batch", "iid", "8",
                               f"7-{step}.npy"))
    assert got.shape == (8, COLS)
    for row in got:
        i = int(row[0]) // COLS
        assert i < length(mnt, "D") and np.array_equal(
            row, dense_rows(i, 1)[0]), f"batch row {row}"
    return n


def read_loop(mnt, seconds, stopfile, seed):
    """Returns the number of files checked; raises on a wrong byte, or on
    an error before stopfile exists."""
    rng = random.Random(seed)
    done, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            nd, nr = length(mnt, "D"), length(mnt, "R")
            check_dense(mnt, rng.randrange(nd))
            check_ragged(mnt, rng.randrange(nr))
            check_batch(mnt, rng.randrange(1 << 30))
            done += 3
        except OSError as e:
            if os.path.exists(stopfile) and e.errno in GONE:
                break
            raise
        except ValueError:
            # np.fromfile takes a read error for end of file: a file cut
            # short by the unmount.  Only then is that no failure.
            if os.path.exists(stopfile):
                break
            raise
    return done


if __name__ == "__main__":
    n = read_loop(sys.argv[1], float(sys.argv[2]), sys.argv[3],
                  os.getpid())
    print(n)
