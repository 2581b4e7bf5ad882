#!/usr/bin/python3
"""stress.py - a bounded concurrency stress of a real zrecordfs mount,
every byte checked against a model.

    stress.py [--seconds N] [--workers K] [--seed S]
              [--zrecordfs PATH] [--zrecord PATH]

(defaults: $STRESS_SECONDS, $STRESS_WORKERS, $STRESS_SEED, and the binaries
of $top_builddir as tests/fs/fsutil.py finds them).  Needs root and
/dev/fuse.

It creates three stores -- "tiny" (raw, 64-byte rows, thousands of records:
tiny files, so opens and closes are many), "blk" (zstd, 4 KiB rows) and
"rag" (zstd, ragged) -- mounts them read-write, and runs K worker processes
for N seconds.  Readers open record and batch files, read them in random
pieces with pauses in between, read batch sequences step after step (what
the daemon gathers ahead), map them, stat, fstat, lseek, list folders
and np.load; writers append through `append`, delete through `delete`
(holding a record file open across the delete), sync and compact.

Every record is self-describing, so any bytes can be judged with no shared
state: a record carries a unique 64-bit id (owner << 40 | sequence) in its
first element(s) and everything else is a hash of that id.  A file read
through one descriptor must be exactly one record some writer appended --
never a mix of two -- of the size fstat gave at open, and must read the same
bytes again.  Races that are legitimate (ENOENT past the end after a delete,
EBUSY from compact or a second appender, ERANGE from a delete that lost a
race) are counted; anything else is a failure.

At the end the daemon must still be up, the record counts must equal
initial + appended - deleted as counted by the writers (only operations
whose close() succeeded), the unmount must be clean with exit status 0,
`zrecord verify` must pass, and every record left on disk must be valid,
unique and one that a successful append wrote.  The last line is
`N passed, M failed`; the exit status is 0 only when M is 0.
"""
import argparse
import collections
import errno
import io
import json
import mmap
import multiprocessing
import os
import queue
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np

# -- the record model -------------------------------------------------------

SEQ_BITS = 40            # id = owner << SEQ_BITS | seq; owner 0 = fixture
SEQ_MASK = (1 << SEQ_BITS) - 1
U32 = np.uint64(0xFFFFFFFF)


class Wrong(Exception):
    """Bytes that are not what any writer wrote: torn, resized, changed."""


def mix(x):
    """splitmix64 of each element: the hash every payload derives from."""
    x = np.array(x, dtype=np.uint64, ndmin=1)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def ramp(ids, n, salt):
    """n uint32 values per id: runs of 16 equal values (so zstd has
    something to compress) on a hash-chosen arithmetic progression."""
    h = mix(ids ^ np.uint64(salt))
    with np.errstate(over="ignore"):
        v = (h[:, None] & U32) + (np.arange(n, dtype=np.uint64) >> 4) * \
            ((h[:, None] >> np.uint64(32)) | np.uint64(1))
    return (v & U32).astype("<u4")


class Dense:
    """A fixed-shape store whose row for id is rows([id])[0]."""
    ragged = False

    def __init__(self, name, dtype, shape, codec, initial):
        self.name, self.dtype, self.shape = name, np.dtype(dtype), shape
        self.codec, self.initial = codec, initial

    def rows(self, ids):
        ids = np.array(ids, dtype=np.uint64, ndmin=1)
        if self.dtype == np.dtype("<u8"):        # id, then 7 hashes of it
            out = np.empty((len(ids),) + self.shape, self.dtype)
            out[:, 0] = ids
            with np.errstate(over="ignore"):
                out[:, 1:] = mix(ids[:, None] * np.uint64(8) +
                                 np.arange(1, 8, dtype=np.uint64))
            return out
        out = np.empty((len(ids), int(np.prod(self.shape))), self.dtype)
        out[:, 0] = ids & U32
        out[:, 1] = ids >> np.uint64(32)
        out[:, 2:] = ramp(ids, out.shape[1] - 2, 0xB10C)
        return out.reshape((len(ids),) + self.shape)

    def ids_of(self, rows):
        flat = rows.reshape(len(rows), -1).astype(np.uint64)
        if self.dtype == np.dtype("<u8"):
            return flat[:, 0]
        return flat[:, 0] | flat[:, 1] << np.uint64(32)

    def check_rows(self, arr, owners, what):
        """arr must be (B, *shape) rows, each a record ever written."""
        if arr.dtype != self.dtype or arr.shape[1:] != self.shape:
            raise Wrong("%s: dtype %s shape %s" % (what, arr.dtype,
                                                   arr.shape))
        ids = self.ids_of(arr)
        bad = ~(arr == self.rows(ids)).reshape(len(arr), -1).all(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            raise Wrong("%s: row %d is torn (id %#x)" % (what, k, ids[k]))
        for i in ids.tolist():
            owners.check(i, what)
        return ids

    def check_record(self, arr, owners, what):
        if arr.shape != self.shape:
            raise Wrong("%s: shape %s, want %s" % (what, arr.shape,
                                                   self.shape))
        return int(self.check_rows(arr[None], owners, what)[0])

    def make(self, ids):
        """The .npy files an append of ids writes (one, all rows)."""
        return [self.rows(ids)]


class Ragged:
    """A variable-shape store: the id picks the shape, the id and the
    ramp fill the record."""
    ragged = True
    shape = None

    def __init__(self, name, dtype, codec, initial):
        self.name, self.dtype = name, np.dtype(dtype)
        self.codec, self.initial = codec, initial

    @staticmethod
    def shape_of(i):
        h = int(mix(i ^ 0x5A6E)[0])
        nd = 1 + h % 3
        if nd == 1:
            return (2 + (h >> 8) % 300,)
        if nd == 2:
            return (1 + (h >> 8) % 8, 2 + (h >> 16) % 40)
        return (1 + (h >> 8) % 4, 1 + (h >> 16) % 4, 2 + (h >> 24) % 16)

    def record(self, i):
        shape = self.shape_of(i)
        flat = np.empty(int(np.prod(shape)), self.dtype)
        flat[0], flat[1] = i & 0xFFFFFFFF, i >> 32
        flat[2:] = ramp(np.array([i], np.uint64), len(flat) - 2, 0x4A6)[0]
        return flat.reshape(shape)

    def check_record(self, arr, owners, what):
        if arr.dtype != self.dtype or arr.size < 2:
            raise Wrong("%s: dtype %s size %d" % (what, arr.dtype, arr.size))
        flat = arr.reshape(-1)
        i = int(flat[0]) | int(flat[1]) << 32
        want = self.record(i)
        if arr.shape != want.shape or not np.array_equal(arr, want):
            raise Wrong("%s: torn record (id %#x, shape %s)" % (
                what, i, arr.shape))
        owners.check(i, what)
        return i

    def make(self, ids):
        return [self.record(int(i)) for i in ids]


STORES = [Dense("tiny", "<u8", (8,), "raw", 4000),
          Dense("blk", "<u4", (1024,), "zstd", 400),
          Ragged("rag", "<u4", "zstd", 1000)]


class Owners:
    """Per owner, how many ids it ever handed out (shared memory, bumped
    before a write): an id is one that was ever written only if its
    sequence is below its owner's mark."""

    def __init__(self, nowners):
        self.marks = multiprocessing.get_context("fork").Array(
            "q", nowners, lock=False)

    def take(self, owner, n):
        first = self.marks[owner]
        self.marks[owner] = first + n
        return [owner << SEQ_BITS | (first + k) for k in range(n)]

    def check(self, i, what):
        owner, seq = i >> SEQ_BITS, i & SEQ_MASK
        if owner >= len(self.marks) or seq >= self.marks[owner]:
            raise Wrong("%s: id %#x was never written" % (what, i))


def parse_npy(data, what):
    """The one array of a whole .npy file; trailing bytes are wrong."""
    f = io.BytesIO(data)
    try:
        arr = np.load(f, allow_pickle=False)
    except Exception as e:
        raise Wrong("%s: %d bytes do not parse: %s" % (what, len(data), e))
    if f.tell() != len(data):
        raise Wrong("%s: %d bytes after the array" % (what,
                                                      len(data) - f.tell()))
    return arr


def npy_bytes(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


# -- reading through one descriptor ------------------------------------------

class FdError(OSError):
    """An error on an already open descriptor: never a legitimate race
    (an open file keeps serving what it served at open)."""


class OpenFile:
    """One open descriptor of a virtual file: its size at open, and every
    read checked to keep to it."""

    def __init__(self, path, rng, counts):
        self.path, self.rng, self.counts = path, rng, counts
        self.fd = os.open(path, os.O_RDONLY)
        try:
            self.size = self.fstat()
        except BaseException:
            os.close(self.fd)
            raise

    def fstat(self):
        self.counts["fstat"] += 1
        st = self.io(os.fstat, self.fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o777 != 0o444:
            raise Wrong("%s: fstat mode %o" % (self.path, st.st_mode))
        if hasattr(self, "size") and st.st_size != self.size:
            raise Wrong("%s: fstat size %d, was %d at open" % (
                self.path, st.st_size, self.size))
        return st.st_size

    def pread(self, off, n):
        self.counts["pread"] += 1
        got = self.io(os.pread, self.fd, n, off)
        want = max(0, min(n, self.size - off))
        if len(got) != want:
            raise Wrong("%s: pread(%d, %d) gave %d bytes of %d" % (
                self.path, off, n, len(got), self.size))
        return got

    def io(self, call, *args):
        """call(*args); an error is FdError, naming the file."""
        try:
            return call(*args)
        except OSError as e:
            raise FdError(e.errno, "%s on an open fd" % e.strerror,
                          self.path) from None

    def read_whole(self):
        """All bytes, in one of three random ways: sequential reads of
        random sizes; a random piece first, a pause (a delete may land in
        it), then everything; or lseek(SEEK_END) first."""
        how = self.rng.integers(3)
        if how == 1 and self.size:
            off = int(self.rng.integers(self.size))
            first = self.pread(off, int(self.rng.integers(1, 4097)))
            time.sleep(float(self.rng.uniform(0, 0.004)))
        elif how == 2:
            self.counts["lseek"] += 1
            end = self.io(os.lseek, self.fd, 0, os.SEEK_END)
            if end != self.size:
                raise Wrong("%s: SEEK_END %d, size %d" % (self.path, end,
                                                          self.size))
            self.io(os.lseek, self.fd, 0, os.SEEK_SET)
        data = self.read_sequential()
        if how == 1 and self.size and data[off:off + len(first)] != first:
            raise Wrong("%s: bytes at %d changed within one open" % (
                self.path, off))
        return data

    def read_sequential(self):
        parts = []
        while True:
            self.counts["read"] += 1
            b = self.io(os.read, self.fd, int(self.rng.choice(
                [7, 100, 4096, 65536, 1 << 20])))
            if not b:
                break
            parts.append(b)
        data = b"".join(parts)
        if len(data) != self.size:
            raise Wrong("%s: served %d bytes, fstat says %d" % (
                self.path, len(data), self.size))
        return data

    def recheck(self, data):
        """A random range again, then fstat again: nothing may move."""
        if self.size:
            off = int(self.rng.integers(self.size))
            n = int(self.rng.integers(1, self.size - off + 2))
            if self.pread(off, n) != data[off:off + n]:
                raise Wrong("%s: re-read of [%d, +%d) differs" % (
                    self.path, off, n))
        self.fstat()

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- workers ------------------------------------------------------------------

REFUSED = {errno.EBUSY: "ebusy", errno.ERANGE: "erange"}
GONE = {errno.ENOTCONN, errno.ECONNABORTED}


class Worker:
    """State shared by readers and writers: the mount, a private random
    stream, counters and the failures seen."""

    def __init__(self, mnt, owner, seed, owners, stop, deadline):
        self.mnt, self.owner, self.owners = mnt, owner, owners
        self.rng = np.random.default_rng(seed)
        self.stop, self.deadline = stop, deadline
        self.counts = collections.Counter()
        self.failures = []
        self.lengths = {}

    def path(self, store, *parts):
        return os.path.join(self.mnt, store.name, *parts)

    def length(self, store):
        with open(self.path(store, "stats")) as f:
            s = json.load(f)
        self.counts["stats"] += 1
        if s["records"] < 0 or s["ragged"] != store.ragged:
            raise Wrong("%s/stats: %r" % (store.name, s))
        self.lengths[store.name] = s["records"]
        return s["records"]

    def known_length(self, store):
        if store.name not in self.lengths or self.rng.random() < 0.05:
            return self.length(store)
        return self.lengths[store.name]

    def missing(self, e):
        """ENOENT at lookup or open: the index was past the end (a delete
        shrank the store since the length was read).  Anything else, or
        any error on a descriptor already open, is a failure."""
        if e.errno != errno.ENOENT or isinstance(e, FdError):
            raise e
        self.counts["enoent"] += 1

    def open_record(self, path):
        """A record file opened with Python's open(), or None if the index
        is (legitimately) missing: errors after the open are failures."""
        try:
            return open(path, "rb")
        except OSError as e:
            self.missing(e)

    def load_record(self, store, path):
        """np.load of a record file, checked; its id, or None."""
        f = self.open_record(path)
        if f is None:
            return None
        with f:
            try:
                arr = np.load(f, allow_pickle=False)
            except OSError as e:
                raise FdError(e.errno, "%s on an open fd" % e.strerror,
                              path) from None
        return store.check_record(arr, self.owners, path)

    def pick_store(self):
        return STORES[int(self.rng.integers(len(STORES)))]

    def fail(self, kind, msg):
        """Counts every failure, keeps the first few of each kind."""
        self.counts[kind] += 1
        if self.counts[kind] <= 8:
            self.failures.append("worker %d: %s" % (self.owner, msg))

    def run(self, ops):
        """Runs weighted random ops until the deadline; a failure of the
        mount itself ends this worker (and, through stop, the others)."""
        names, weights = zip(*ops)
        p = np.array(weights, float) / sum(weights)
        while time.monotonic() < self.deadline and not self.stop.is_set():
            op = names[int(self.rng.choice(len(names), p=p))]
            try:
                getattr(self, op)()
                self.counts["op:" + op] += 1
            except (Wrong, ValueError, EOFError) as e:
                # ValueError: np.load or json met bytes that are not
                # what the file claims to be
                self.fail("wrong_bytes", "%s: %s" % (op, e))
            except OSError as e:
                self.on_oserror(op, e)
            except Exception as e:
                self.fail("errors", "%s: %r" % (op, e))
        return self.result()

    def on_oserror(self, op, e):
        self.fail("errors", "%s: %s" % (op, e))
        if e.errno in GONE:
            self.stop.set()

    def result(self):
        return {"owner": self.owner, "counts": dict(self.counts),
                "failures": self.failures}


class Reader(Worker):
    OPS = [("record_fd", 40), ("record_burst", 6), ("record_load", 12),
           ("record_stat", 8),
           ("batch_fd", 16), ("batch_indices", 3), ("listdir", 4),
           ("text_files", 3), ("record_mmap", 1), ("batch_mmap", 2),
           ("batch_packed", 4), ("batch_sequence", 4)]

    def record_path(self, store):
        # A little past the known end: those opens must give ENOENT.
        n = self.known_length(store)
        i = int(self.rng.integers(max(1, n + n // 50 + 1)))
        return self.path(store, "records", "%d.npy" % i)

    def record_fd(self):
        store = self.pick_store()
        path = self.record_path(store)
        try:
            f = OpenFile(path, self.rng, self.counts)
        except OSError as e:
            return self.missing(e)
        with f:
            data = f.read_whole()
            store.check_record(parse_npy(data, path), self.owners, path)
            f.recheck(data)

    def record_burst(self):
        """Many small record files open at once, read, then closed in a
        random order: the handle churn that shakes out handle lifetime
        bugs in the daemon."""
        store = STORES[0]
        files = []
        try:
            for _ in range(int(self.rng.integers(8, 33))):
                try:
                    files.append(OpenFile(self.record_path(store), self.rng,
                                          self.counts))
                except OSError as e:
                    self.missing(e)
            for f in files:
                store.check_record(parse_npy(f.read_whole(), f.path),
                                   self.owners, f.path)
        finally:
            for k in self.rng.permutation(len(files)):
                files[k].close()

    def record_load(self):
        store = self.pick_store()
        self.load_record(store, self.record_path(store))

    def mapped(self, f):
        """The bytes a read-only mapping of open file f shows, or None: an
        open that raced a delete of what its name shows is served past the
        page cache, and such a file cannot be mapped."""
        size = os.fstat(f.fileno()).st_size
        try:
            mm = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
        except OSError as e:
            if e.errno != errno.ENODEV:
                raise
            self.counts["mmap_uncached"] += 1
            return None
        with mm:
            return mm[:]

    def record_mmap(self):
        """The bytes a read-only mapping of a record file shows."""
        store = self.pick_store()
        path = self.record_path(store)
        f = self.open_record(path)
        if f is None:
            return
        with f:
            data = self.mapped(f)
        if data is not None:
            store.check_record(parse_npy(data, path), self.owners, path)

    def record_stat(self):
        store = self.pick_store()
        path = self.record_path(store)
        try:
            st = os.stat(path)
        except OSError as e:
            return self.missing(e)
        if not stat.S_ISREG(st.st_mode) or st.st_size < 130:
            raise Wrong("%s: stat mode %o size %d" % (path, st.st_mode,
                                                      st.st_size))

    def batch_name(self, store, suffix):
        """batch/SEED-STEP (the default 256) now and then, mostly
        batch/MODE/B/SEED-STEP with a small B."""
        seed, step = self.rng.integers(1 << 20, size=2)
        name = "%d-%d%s" % (seed, step, suffix)
        if self.rng.random() < 0.05 and store.name != "blk":
            return self.path(store, "batch", name), 256
        mode = ["sequential", "iid", "cyclic"][int(self.rng.integers(3))]
        b = int(self.rng.choice([1, 2, 5, 16, 64]))
        return self.path(store, "batch", mode, str(b), name), b

    def open_batch(self, store, path, how):
        """how(path), or None for a ragged batch whose size a delete or
        compact changed twice while it was opened (the kernel retries
        once): see docs/guarantees.md, "Races the kernel sees"."""
        try:
            return how(path)
        except OSError as e:
            if not store.ragged or e.errno != errno.ESTALE:
                raise
            self.counts["batch_estale"] += 1
            return None

    def check_batch(self, store, data, b, path):
        if store.ragged:
            self.check_npz(store, data, b, path)
            return
        arr = parse_npy(data, path)
        if len(arr) != b:
            raise Wrong("%s: %d rows" % (path, len(arr)))
        store.check_rows(arr, self.owners, path)

    def batch_fd(self):
        store = self.pick_store()
        path, b = self.batch_name(store, ".npz" if store.ragged else ".npy")
        f = self.open_batch(store, path, lambda p: OpenFile(p, self.rng,
                                                            self.counts))
        if f is None:
            return
        with f:
            data = f.read_whole()
            self.check_batch(store, data, b, path)
            f.recheck(data)

    def batch_mmap(self):
        """The bytes a read-only mapping of a batch file shows."""
        store = self.pick_store()
        path, b = self.batch_name(store, ".npz" if store.ragged else ".npy")
        f = self.open_batch(store, path, lambda p: open(p, "rb"))
        if f is None:
            return
        with f:
            data = self.mapped(f)
        if data is not None:
            self.check_batch(store, data, b, path)

    def check_npz(self, store, data, b, path):
        try:
            z = np.load(io.BytesIO(data), allow_pickle=False)
            names = z.files
            members = [z["arr_%d" % k] for k in range(b)]
        except Exception as e:
            raise Wrong("%s: %d bytes are not the npz: %s" % (
                path, len(data), e))
        if names != ["arr_%d" % k for k in range(b)]:
            raise Wrong("%s: members %s" % (path, names[:5]))
        for k, a in enumerate(members):
            store.check_record(a, self.owners, "%s[%d]" % (path, k))

    def batch_sequence(self):
        """A trainer: steps t, t+1, ... of one sequence in turn, with a
        pause between them, so the daemon gathers the next ones ahead
        (-o prefetch) while writers append, delete and compact; each
        step must pass the same model check as a random batch."""
        store = self.pick_store()
        suffix = ".npz" if store.ragged else ".npy"
        if store.ragged and self.rng.random() < 0.5:
            suffix = ".packed.npz"
        path, b = self.batch_name(store, suffix)
        head, name = os.path.split(path)
        seed, step = name[:-len(suffix)].split("-")
        for t in range(int(step), int(step) + int(self.rng.integers(3, 9))):
            path = os.path.join(head, "%s-%d%s" % (seed, t, suffix))
            if not self.read_batch_file(store, path, b, suffix):
                return
            self.counts["sequence_steps"] += 1
            time.sleep(float(self.rng.random()) * 0.02)

    def read_batch_file(self, store, path, b, suffix):
        """Opens, reads and checks one batch file by its suffix; False
        when there was none to read (a packed form refused with EINVAL,
        or ESTALE twice)."""
        try:
            f = self.open_batch(store, path, lambda p: OpenFile(
                p, self.rng, self.counts))
        except OSError as e:
            if e.errno != errno.EINVAL or not suffix.startswith(".packed"):
                raise
            self.counts["packed_einval"] += 1
            return False
        if f is None:
            return False
        with f:
            data = f.read_whole()
            if suffix == ".packed.npz":
                self.check_packed_npz(store, data, b, path)
            elif suffix == ".packed.npy":
                self.check_packed(store, parse_npy(data, path), b, path)
            else:
                self.check_batch(store, data, b, path)
            f.recheck(data)
        return True

    def batch_packed(self):
        """A ragged batch's .packed.npz, or its data part .packed.npy
        alone: every record whole, in turn (each record's id says its
        size).  Batches whose records differ in ndim have no packed form
        (EINVAL); most of the small B drawn here have one."""
        store = STORES[-1]
        suffix = ".packed.npz" if self.rng.random() < 0.5 else ".packed.npy"
        path, b = self.batch_name(store, suffix)
        self.read_batch_file(store, path, b, suffix)

    def check_packed(self, store, flat, b, path, offsets=None):
        """b records back to back in flat, at offsets when given."""
        pos = 0
        for k in range(b):
            if offsets is not None and offsets[k] != pos:
                raise Wrong("%s: offsets[%d] %d, not %d" % (
                    path, k, offsets[k], pos))
            if flat.ndim != 1 or pos + 2 > len(flat):
                raise Wrong("%s: record %d past %d elements" % (
                    path, k, len(flat)))
            i = int(flat[pos]) | int(flat[pos + 1]) << 32
            want = store.record(i).reshape(-1)
            if not np.array_equal(flat[pos:pos + len(want)], want):
                raise Wrong("%s: torn record %d (id %#x)" % (path, k, i))
            self.owners.check(i, "%s[%d]" % (path, k))
            pos += len(want)
        if pos != len(flat):
            raise Wrong("%s: %d elements past the records" % (
                path, len(flat) - pos))

    def check_packed_npz(self, store, data, b, path):
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                flat, offsets, shapes = z["data"], z["offsets"], z["shapes"]
        except Exception as e:
            raise Wrong("%s: not the packed npz: %s" % (path, e))
        if offsets.shape != (b + 1,) or len(shapes) != b or \
                offsets[-1] != len(flat):
            raise Wrong("%s: offsets %s shapes %s" % (
                path, offsets.shape, shapes.shape))
        self.check_packed(store, flat, b, path, offsets)

    def batch_indices(self):
        store = self.pick_store()
        path, b = self.batch_name(store, ".indices.npy")
        with OpenFile(path, self.rng, self.counts) as f:
            arr = parse_npy(f.read_whole(), path)
        if arr.dtype != np.dtype("<i8") or arr.shape != (b,) or \
                (b and arr.min() < 0):
            raise Wrong("%s: %s %s" % (path, arr.dtype, arr.shape))

    def listdir(self):
        store = self.pick_store()
        self.counts["listdir"] += 1
        names = os.listdir(self.path(store, "records"))
        bad = [n for n in names if not re.fullmatch(r"(0|[1-9]\d*)\.npy", n)]
        if bad or len(set(names)) != len(names):
            raise Wrong("records/ lists %s" % (bad[:3] or "duplicates"))
        if set(os.listdir(self.path(store, "batch"))) != {
                "sequential", "iid", "cyclic"}:
            raise Wrong("%s/batch lists the wrong folders" % store.name)
        top = set(os.listdir(self.mnt)) - {"@batch", ".zrecordfs"}
        if top != {s.name for s in STORES}:
            raise Wrong("the mount lists %s" % sorted(top))

    def text_files(self):
        store = self.pick_store()
        self.length(store)
        with open(self.path(store, "schema")) as f:
            s = json.load(f)
        if s["dtype"] != store.dtype.str:
            raise Wrong("%s/schema: %r" % (store.name, s))


class Writer(Worker):
    OPS = [("modify", 85), ("sync", 6), ("compact", 4), ("text_files", 2)]

    def __init__(self, *args):
        super().__init__(*args)
        self.appended = collections.Counter()
        self.deleted = collections.Counter()
        self.committed = collections.defaultdict(list)

    text_files = Reader.text_files

    def refused(self, e, kind):
        """EBUSY (another appender, or an append session during a delete
        or compact) and ERANGE (a delete that lost a race with another
        one) are outcomes, not failures."""
        if e.errno not in REFUSED:
            raise e
        self.counts["%s_%s" % (kind, REFUSED[e.errno])] += 1

    def steer(self, store):
        """Appends or deletes, drifting back towards the initial size so
        a long run neither drains nor bloats a store."""
        n = self.length(store)
        bias = min(0.45, max(-0.45, 0.5 * (n / store.initial - 1)))
        return n, self.rng.random() < 0.5 + bias

    def modify(self):
        store = self.pick_store()
        n, shrink = self.steer(store)
        if shrink and n > 16:
            self.delete_from(store, n)
        else:
            self.append(store)

    def append(self, store):
        k = int(self.rng.integers(1, 17 if store.name == "tiny" else 6))
        ids = self.owners.take(self.owner, k)
        data = b"".join(npy_bytes(a) for a in store.make(ids))
        try:
            fd = os.open(self.path(store, "append"), os.O_WRONLY)
        except OSError as e:
            return self.refused(e, "append")
        try:
            self.write_pieces(fd, data)
        finally:
            os.close(fd)          # commits: an error here raises
        self.appended[store.name] += k
        self.committed[store.name] += ids
        self.counts["append_ok"] += 1
        self.counts["appended_records"] += k

    def write_pieces(self, fd, data):
        """One write, or several of random sizes (not on .npy bounds)."""
        pos = 0
        while pos < len(data):
            n = len(data) - pos
            if self.rng.random() < 0.5:
                n = int(self.rng.integers(1, n + 1))
            pos += os.write(fd, data[pos:pos + n])
            self.counts["write"] += 1

    def delete_from(self, store, n):
        """Deletes a few indices while holding record idx[0] open with
        half of it read: the held descriptor must still serve the old
        record whole, and a new open of the name must not."""
        idx = self.rng.integers(n, size=int(self.rng.integers(1, 7)))
        held, first = self.hold(store, int(idx[0]))
        try:
            ok = self.send_delete(store, idx)
            if ok:              # counted first: the checks below may raise
                self.deleted[store.name] += len(set(idx.tolist()))
                self.counts["deleted_records"] += len(set(idx.tolist()))
            if held:
                old = self.finish_held(store, held, first)
        finally:
            if held:
                held.close()
        if ok and held:
            self.check_gone(store, int(idx[0]), old)

    def hold(self, store, i):
        path = self.path(store, "records", "%d.npy" % i)
        try:
            f = OpenFile(path, self.rng, self.counts)
        except OSError as e:
            self.missing(e)
            return None, b""
        return f, f.pread(0, max(1, f.size // 2))

    def send_delete(self, store, idx):
        if self.rng.random() < 0.5:
            data = "".join("%d\n" % i for i in idx).encode()
        else:
            data = npy_bytes(idx.astype(self.rng.choice(["<i8", "<u4"])))
        try:
            fd = os.open(self.path(store, "delete"), os.O_WRONLY)
        except OSError as e:
            self.refused(e, "delete")
            return False
        try:
            try:
                self.write_pieces(fd, data)
            finally:
                os.close(fd)      # applies the delete
        except OSError as e:
            self.refused(e, "delete")
            return False
        self.counts["delete_ok"] += 1
        return True

    def finish_held(self, store, f, first):
        data = f.read_sequential()
        if not data.startswith(first):
            raise Wrong("%s: first half changed across a delete" % f.path)
        old = store.check_record(parse_npy(data, f.path), self.owners,
                                 f.path + " (held across a delete)")
        f.recheck(data)
        return old

    def check_gone(self, store, i, old):
        """Record ids only ever move to lower indices, so after a
        successful delete of i, i can never again hold what it held."""
        path = self.path(store, "records", "%d.npy" % i)
        if self.load_record(store, path) == old:
            raise Wrong("%s: still serves deleted id %#x" % (path, old))

    def control(self, name):
        store = self.pick_store()
        fd = os.open(self.path(store, name), os.O_WRONLY)
        try:
            os.write(fd, b"1\n")
        finally:
            os.close(fd)

    def sync(self):
        self.control("sync")

    def compact(self):
        try:
            self.control("compact")
        except OSError as e:
            return self.refused(e, "compact")
        self.counts["compact_ok"] += 1

    def result(self):
        r = super().result()
        r.update(appended=dict(self.appended), deleted=dict(self.deleted),
                 committed={k: np.array(v, np.uint64)
                            for k, v in self.committed.items()})
        return r


def worker_main(cls, q, *args):
    """Process body: never lets an exception escape without a report."""
    w = None
    try:
        w = cls(*args)
        res = w.run(cls.OPS)
    except BaseException as e:
        res = {"owner": args[1], "counts": dict(w.counts) if w else {},
               "failures": ["worker %d died: %r" % (args[1], e)],
               "died": True}
    q.put(res)


# -- the mount and the command ----------------------------------------------

def build_dir():
    return os.environ.get("top_builddir") or os.path.abspath(
        os.path.join(os.path.dirname(__file__), "..", ".."))


def zrecord(binary, *args, check=True):
    r = subprocess.run([binary, *map(str, args)], capture_output=True)
    if check and r.returncode != 0:
        raise RuntimeError("zrecord %s: %s" % (" ".join(map(str, args[:3])),
                                                r.stderr.decode()))
    return r


def make_stores(binary, src, tmp):
    for s in STORES:
        path = os.path.join(src, s.name)
        shape = ["--ragged"] if s.ragged else [
            "--shape=" + ",".join(map(str, s.shape))]
        zrecord(binary, "create", path, "--dtype", s.dtype.str, "--codec",
                s.codec, *shape)
        files = []
        for k, a in enumerate(s.make(list(range(s.initial)))):
            files.append(os.path.join(tmp, "init%06d.npy" % k))
            np.save(files[-1], a)
        zrecord(binary, "append", path, *files)
        for f in files:
            os.unlink(f)


class Daemon:
    """zrecordfs -f in the background; its stderr goes to a file, never a
    pipe: the daemon logs every refused compact there, and a full pipe
    would stall it."""

    def __init__(self, binary, src, mnt, log):
        os.makedirs(mnt, exist_ok=True)
        self.mnt, self.log = mnt, log
        with open(log, "wb") as err:
            self.proc = subprocess.Popen([binary, src, mnt, "-f"],
                                         stdout=err, stderr=err)
        end = time.monotonic() + 20
        while not os.path.ismount(mnt):
            if self.proc.poll() is not None or time.monotonic() > end:
                self.kill()
                raise RuntimeError("zrecordfs did not mount:\n" + self.tail())
            time.sleep(0.02)
        self.conn = os.minor(os.stat(mnt).st_dev)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        """Unmounts; the daemon's exit status (or a string saying why
        there is none)."""
        r = subprocess.run(["fusermount3", "-u", self.mnt],
                           capture_output=True)
        if r.returncode != 0:
            subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
            return "hung at unmount"

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        subprocess.run(["umount", "-l", self.mnt], capture_output=True)

    def abort(self):
        """For a daemon that stopped answering: aborting the connection
        fails every pending call at once (a SIGKILL alone can leave
        callers, and a daemon calling into its own mount, stuck)."""
        try:
            with open("/sys/fs/fuse/connections/%d/abort" % self.conn,
                      "w") as f:
                f.write("1")
        except OSError:
            pass
        self.kill()

    def tail(self, n=30):
        """The last lines of the log, less the refusals the run provokes
        on purpose (busy compacts, deletes and appenders)."""
        noise = re.compile(r"refused|resource busy|append session is open")
        with open(self.log, errors="replace") as f:
            lines = [ln for ln in f if not noise.search(ln)]
        return "".join(lines[-n:])

    def prefetch_line(self):
        """What the daemon said at unmount it gathered ahead."""
        with open(self.log, errors="replace") as f:
            lines = [ln.strip() for ln in f if "prefetch:" in ln]
        return lines[-1] if lines else "prefetch: nothing gathered ahead"

    def sanitizer_report(self):
        with open(self.log, errors="replace") as f:
            text = f.read()
        return re.search(r"ERROR: \w+Sanitizer|runtime error:", text)


# -- the run and the verdict ------------------------------------------------

class Verdict:
    """Named checks; `N passed, M failed` at the end."""

    def __init__(self):
        self.results = []

    def check(self, name, ok, detail=""):
        self.results.append((name, bool(ok)))
        if not ok:
            print("FAIL: %s %s" % (name, detail), flush=True)
        return ok

    def finish(self):
        bad = sum(not ok for _, ok in self.results)
        print("%d passed, %d failed" % (len(self.results) - bad, bad))
        return 1 if bad else 0


def run_workers(args, mnt, owners, daemon):
    """Starts the workers, watches the daemon, collects the results; a
    worker that does not report within a grace period is hung (in the
    kernel, on a daemon that stopped answering)."""
    ctx = multiprocessing.get_context("fork")
    q, stop = ctx.Queue(), ctx.Event()
    deadline = time.monotonic() + args.seconds
    nwriters = max(2, args.workers * 3 // 8)
    procs = []
    for k in range(args.workers):
        cls = Writer if k < nwriters else Reader
        procs.append(ctx.Process(target=worker_main, args=(
            cls, q, mnt, k + 1, args.seed * 1000 + k, owners, stop,
            deadline)))
    for p in procs:
        p.start()
    results, died_at = [], None
    give_up = deadline + max(60, args.seconds / 5)
    while len(results) < len(procs) and time.monotonic() < give_up:
        try:
            results.append(q.get(timeout=0.2))
        except queue.Empty:
            pass
        if died_at is None and not daemon.alive():
            died_at = time.monotonic() - (deadline - args.seconds)
            stop.set()
    hung = len(results) < len(procs)
    if hung:
        daemon.abort()
        while len(results) < len(procs):
            try:
                results.append(q.get(timeout=10))
            except queue.Empty:
                break
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    return results, len(procs), died_at, hung


def expected_lengths(results):
    want = {s.name: s.initial for s in STORES}
    for r in results:
        for name, k in r.get("appended", {}).items():
            want[name] += k
        for name, k in r.get("deleted", {}).items():
            want[name] -= k
    return want


def check_mount_state(v, mnt, want):
    """Quiescent now: stats and the listing agree with the writers."""
    for s in STORES:
        with open(os.path.join(mnt, s.name, "stats")) as f:
            n = json.load(f)["records"]
        v.check("%s: records == initial + appended - deleted (%d)" % (
            s.name, want[s.name]), n == want[s.name], "got %d" % n)
        names = set(os.listdir(os.path.join(mnt, s.name, "records")))
        v.check("%s: records/ lists exactly 0..n-1" % s.name,
                names == {"%d.npy" % i for i in range(n)})


def load_all(binary, store, path, n, tmp):
    """Every record on disk, via `zrecord get`."""
    if n == 0:
        return []
    out = os.path.join(tmp, store.name + ".get")
    zrecord(binary, "get", path, *range(n), "-o", out)
    if store.ragged:
        if n == 1:
            return [np.load(out)]
        z = np.load(out)
        return [z["arr_%d" % k] for k in range(n)]
    a = np.load(out)
    return a[None] if n == 1 else a


def check_disk(v, binary, src, want, results, owners, tmp):
    """After the unmount: verify, the counts, and every record valid,
    unique and written by an append that succeeded."""
    for s in STORES:
        path = os.path.join(src, s.name)
        r = zrecord(binary, "verify", path, check=False)
        v.check("%s: zrecord verify" % s.name, r.returncode == 0,
                r.stdout.decode()[-500:] + r.stderr.decode()[-500:])
        n = json.loads(zrecord(binary, "stats", path).stdout)["records"]
        v.check("%s: on-disk records == %d" % (s.name, want[s.name]),
                n == want[s.name], "got %d" % n)
        try:
            recs = load_all(binary, s, path, n, tmp)
            ids = np.array([s.check_record(a, owners, "%s[%d]" % (s.name, k))
                            for k, a in enumerate(recs)], np.uint64)
        except (Wrong, RuntimeError) as e:
            v.check("%s: every record on disk is valid" % s.name, False, e)
            continue
        made = np.concatenate([np.arange(s.initial, dtype=np.uint64)] + [
            r.get("committed", {}).get(s.name, np.zeros(0, np.uint64))
            for r in results])
        v.check("%s: record ids unique" % s.name,
                len(np.unique(ids)) == len(ids))
        v.check("%s: every record came from a committed append" % s.name,
                np.isin(ids, made).all())


def summarize(args, results, elapsed):
    counts = collections.Counter()
    for r in results:
        counts.update(r["counts"])
    ops = sum(v for k, v in counts.items() if k.startswith("op:"))
    kinds = " ".join("%s=%d" % (k, counts[k]) for k in sorted(counts))
    print("stress: %.1f s, %d workers, %d ops (%.0f/s); %s" % (
        elapsed, args.workers, ops, ops / max(elapsed, 1e-9), kinds))
    return counts


def parse_args():
    top = build_dir()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    env = os.environ.get
    p.add_argument("--seconds", type=float,
                   default=float(env("STRESS_SECONDS", 20)))
    p.add_argument("--workers", type=int,
                   default=int(env("STRESS_WORKERS", 8)))
    p.add_argument("--seed", type=int, default=int(env("STRESS_SEED", 1)))
    p.add_argument("--zrecordfs", default=env("ZRECORDFS") or os.path.join(
        top, "src", "fs", "zrecordfs"))
    p.add_argument("--zrecord", default=env("ZRECORD") or os.path.join(
        top, "src", "cli", "zrecord"))
    return p.parse_args()


def main():
    args = parse_args()
    v = Verdict()
    with tempfile.TemporaryDirectory(prefix="zrstress.") as tmp:
        src, mnt = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
        os.makedirs(src)
        make_stores(args.zrecord, src, tmp)
        owners = Owners(args.workers + 1)
        owners.marks[0] = max(s.initial for s in STORES)
        daemon = Daemon(args.zrecordfs, src, mnt, os.path.join(tmp, "log"))
        t0 = time.monotonic()
        try:
            results, nprocs, died_at, hung = run_workers(args, mnt, owners,
                                                         daemon)
            elapsed = time.monotonic() - t0
            counts = summarize(args, results, elapsed)
            v.check("no hang: every worker done by the deadline + grace",
                    not hung, "(the daemon stopped answering; aborted)")
            alive = daemon.alive()
            v.check("daemon alive after the run", alive or hung,
                    "(exited after %.1f s, status %s)" % (
                        died_at or 0, daemon.proc.returncode))
            v.check("every worker reported", len(results) == nprocs and
                    not any(r.get("died") for r in results),
                    "%d of %d" % (len(results), nprocs))
            for r in results:
                for msg in r["failures"]:
                    print("  " + msg)
            v.check("no wrong bytes", counts["wrong_bytes"] == 0,
                    counts["wrong_bytes"])
            v.check("no unexpected errors", counts["errors"] == 0,
                    counts["errors"])
            want = expected_lengths(results)
            if alive:
                check_mount_state(v, mnt, want)
        finally:
            rc = daemon.stop()
        v.check("unmount clean, daemon exit 0", rc == 0, "status %s" % rc)
        v.check("no sanitizer report", not daemon.sanitizer_report())
        print("stress: " + daemon.prefetch_line())
        if not all(ok for _, ok in v.results):
            print("zrecordfs log (tail):\n" + daemon.tail())
        check_disk(v, args.zrecord, src, want, results, owners, tmp)
        print("stress: crashes %d, wrong bytes %d, unexpected errors %d" % (
            0 if alive or hung else 1, counts["wrong_bytes"],
            counts["errors"]))
    return v.finish()


if __name__ == "__main__":
    sys.exit(main())
