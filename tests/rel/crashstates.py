"""Crash-state explorer, after ALICE (OSDI 2014) and CrashMonkey (OSDI
2018): runs a workload of tests/rel/crash_workload.c under the iotrace shim
with its written bytes captured, rebuilds from the trace every disk state a
power cut could leave, opens each with the library and checks that it is
exactly a state the API promised.

The model of the disk.  A write or truncate of a file is durable once a
later fsync/fdatasync of that file returned; before that it may or may not
have reached the disk, independently of every other such write, and a
write may tear at 4 KiB (or 512-byte) sector boundaries.  Creating,
removing and renaming names is durable once the folder is fsynced; before
that, a prefix of them persisted (the journal keeps their order).

Crash points: after every prefix of the traced calls.  At each, the
unflushed writes form units (the sector-aligned pieces of each write): all
subsets are tried when there are few, else none, all, each one alone, all
but each one, and random subsets, some cut at 512 bytes.  Identical disk
states are checked once.

The promise: a crash after the last call that returned "P" (durable: the
create, a sync, a delete, a compact, the close) must show that state or a
later one of the workload's, up to and including the next "P"; before the
first, the store may also be missing.  Never an error, never a wrong byte.

As a program: crashstates.py BUILDDIR WORKDIR [--states N] [--seed S]
[workload ...] prints one line per workload and exits 1 on a violation
(`make crash-explore`); the workloads are those of crash_workload.c and
"mount" (crashmount.py: the same kind of steps through zrecordfs)."""
import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys

WORKLOADS = ("append", "many", "delete", "compact", "dict")
# Of megabytes per state: for long runs (moves of several journal chunks);
# "mount" is the workload of crashmount.py, through zrecordfs.
LONG_WORKLOADS = WORKLOADS + ("bigcompact", "mount")


def builddir():
    """The build tree (top_builddir, as tests/run-pytest.sh sets it)."""
    top = os.environ.get("top_builddir")
    here = os.path.dirname(os.path.abspath(__file__))
    return top if top else os.path.dirname(os.path.dirname(here))
O_CREAT = 0o100
O_TRUNC = 0o1000
CHECK_BATCH = 64


class Trace:
    """The store's calls, in order, as ops:
    ("w", ino, off, bytes) write, ("t", ino, size) truncate,
    ("f", ino) file flush, ("D",) folder flush, ("c", name, ino) create,
    ("u", name) unlink, ("r", old, new) rename, ("m", k) the k-th marker."""

    def __init__(self, trace, blob, store, markers):
        self.store = os.path.realpath(store)
        self.markers_path = os.path.realpath(markers)
        self.ops = []
        self.live = {}
        self.created = {}  # ino -> the name it was created under
        self.inos = 0
        with open(blob, "rb") as f:
            self.blob = f.read()
        with open(trace) as f:
            for line in f:
                self.parse(line.split())
        with open(markers) as f:
            self.markers = [(ln.split()[0], tuple(map(int, ln.split()[1:])))
                            for ln in f]
        nmark = sum(1 for op in self.ops if op[0] == "m")
        assert nmark == len(self.markers), (nmark, len(self.markers))

    def name(self, path):
        path = path.replace("%20", " ")
        if path.endswith("%20(deleted)") or path.endswith(" (deleted)"):
            return None
        if not path.startswith(self.store + "/"):
            return None
        return path[len(self.store) + 1:]

    def parse(self, f):
        op, path, off, _length, res, _pid = f[:6]
        extra = f[6] if len(f) > 6 else "-"
        if int(res) < 0:
            return
        if op == "write" and path == self.markers_path:
            self.ops.append(("m", sum(1 for o in self.ops if o[0] == "m")))
            return
        if op in ("fsync", "fdatasync") and path == self.store:
            self.ops.append(("D",))
            return
        if op == "rename":
            old, new = (self.name(p) for p in path.split(">"))
            if old is not None and new is not None:
                self.live[new] = self.live.pop(old)
                self.ops.append(("r", old, new))
            return
        name = self.name(path)
        if name is None:
            return
        if op == "open":
            self.open(name, int(extra))
        elif op == "unlink":
            self.live.pop(name, None)
            self.ops.append(("u", name))
        elif op == "write":
            assert extra != "-", "trace without bytes (ZR_IOTRACE_BYTES)"
            at, n = int(extra), int(res)
            self.ops.append(("w", self.live[name], int(off),
                             self.blob[at:at + n]))
        elif op == "ftruncate":
            self.ops.append(("t", self.live[name], int(off)))
        elif op in ("fsync", "fdatasync"):
            self.ops.append(("f", self.live[name]))

    def open(self, name, flags):
        if name not in self.live:
            if not flags & O_CREAT:
                return
            self.inos += 1
            self.live[name] = self.inos
            self.created[self.inos] = name
            self.ops.append(("c", name, self.inos))
        if flags & O_TRUNC:
            self.ops.append(("t", self.live[name], 0))


def durable_at(ops):
    """For each op, the index of the first later flush that makes it
    durable (len(ops) if none): data ops by a flush of their file,
    namespace ops by a flush of the folder."""
    out = [len(ops)] * len(ops)
    for i, op in enumerate(ops):
        for j in range(i + 1, len(ops)):
            o = ops[j]
            if (op[0] in "wt" and o[0] == "f" and o[1] == op[1]) or \
                    (op[0] in "cur" and o[0] == "D"):
                out[i] = j
                break
    return out


def units(ops, data, gran):
    """The pieces a power cut may keep or lose: (op index, start, end) of
    each pending write cut at sector boundaries; a truncate is whole."""
    out = []
    for i in data:
        op = ops[i]
        if op[0] == "t":
            out.append((i, 0, 0))
            continue
        off, n = op[2], len(op[3])
        pos = off
        while pos < off + n:
            end = min(off + n, (pos // gran + 1) * gran)
            out.append((i, pos - off, end - off))
            pos = end
    return out


def write_at(buf, off, data):
    if len(buf) < off:
        buf.extend(bytes(off - len(buf)))
    buf[off:off + len(data)] = data


def build(ops, p, pend, kept, names):
    """The files of one state: every op before p, except a pending data op
    (in pend) whose pieces are not in kept, and a namespace op not among
    names (the persisted prefix of the pending ones)."""
    live, content = {}, {}
    for i in range(p):
        op = ops[i]
        kind = op[0]
        if kind in "cur" and i in pend and i not in names:
            continue
        if kind == "c":
            live[op[1]] = op[2]
            content.setdefault(op[2], bytearray())
        elif kind == "u":
            live.pop(op[1], None)
        elif kind == "r" and op[1] in live:
            live[op[2]] = live.pop(op[1])
        elif kind == "t" and (i not in pend or (i, 0, 0) in kept):
            buf = content.setdefault(op[1], bytearray())
            del buf[op[2]:]
            buf.extend(bytes(op[2] - len(buf)))
        elif kind == "w":
            buf = content.setdefault(op[1], bytearray())
            if i not in pend:
                write_at(buf, op[2], op[3])
                continue
            for u in kept:
                if u[0] == i:
                    write_at(buf, op[2] + u[1], op[3][u[1]:u[2]])
    return {name: bytes(content[ino]) for name, ino in live.items()}


def choices(units_, nnames, rng, budget):
    """Subsets of units (and how many pending names persisted) to try:
    all of them when few, else the edges and random ones."""
    n = len(units_)
    if n <= 6 and nnames <= 2:
        for mask in range(1 << n):
            for k in range(nnames + 1):
                yield {u for b, u in enumerate(units_) if mask >> b & 1}, k
        return
    yield set(), nnames
    yield set(), 0
    yield set(units_), nnames
    for u in units_[:budget]:
        yield {u}, nnames
        yield set(units_) - {u}, nnames
    for _ in range(budget):
        yield ({u for u in units_ if rng.random() < 0.5},
               rng.randint(0, nnames))


def allowed(markers, mark_pos, p):
    """The states a crash after ops [0, p) may show (None: no store)."""
    done = [k for k, pos in enumerate(mark_pos) if pos < p]
    promised = [k for k in done if markers[k][0] == "P"]
    first = promised[-1] if promised else 0
    out = set() if promised else {None}
    for k in range(first, len(markers)):
        out.add(markers[k][1])
        if markers[k][0] == "P" and k >= (done[-1] + 1 if done else 0):
            break
    return out


class Explorer:
    """Builds, deduplicates and checks the states of one trace."""

    def __init__(self, builddir, workdir, trace, budget, seed):
        self.check = os.path.join(builddir, "tests", "rel",
                                  "crash_workload")
        self.workdir = workdir
        self.t = trace
        self.budget = budget
        self.rng = random.Random(seed)
        self.seen = set()
        self.queue = []
        self.violations = []
        self.states = 0

    def run(self):
        ops = self.t.ops
        dur = durable_at(ops)
        mark_pos = [i for i, op in enumerate(ops) if op[0] == "m"]
        per_point = max(2, self.budget // max(1, len(ops)))
        for p in range(len(ops) + 1):
            pend = {i for i in range(p) if dur[i] >= p}
            data = sorted(i for i in pend if ops[i][0] in "wt")
            names = sorted(i for i in pend if ops[i][0] in "cur")
            ok = allowed(self.t.markers, mark_pos, p)
            for gran in (4096, 512):
                us = units(ops, data, gran)
                for kept, k in choices(us, len(names), self.rng, per_point):
                    self.add(build(ops, p, pend, kept, set(names[:k])),
                             ok, (p, gran, len(kept), k))
                if len(us) == len(units(ops, data, 4096)):
                    break
        self.flush()
        return self.states, self.violations

    def add(self, files, ok, where):
        h = hashlib.sha1()
        for name in sorted(files):
            h.update(name.encode() + b"\0" + files[name] + b"\0")
        key = h.digest()
        if key in self.seen:
            return
        self.seen.add(key)
        d = os.path.join(self.workdir, "s%d" % len(self.queue))
        os.mkdir(d)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        self.queue.append((d, ok, where))
        if len(self.queue) >= CHECK_BATCH:
            self.flush()

    def flush(self):
        if not self.queue:
            return
        r = subprocess.run([self.check, "check"], input="".join(
            d + "\n" for d, _, _ in self.queue).encode(),
            stdout=subprocess.PIPE, timeout=600)
        lines = r.stdout.decode().splitlines()
        assert len(lines) == len(self.queue), r
        for (d, ok, where), line in zip(self.queue, lines):
            self.states += 1
            got = None if line == "NOSTORE" else \
                tuple(map(int, line.split()[1:])) \
                if line.startswith("OK") else line
            if got not in ok:
                self.violations.append((where, line, sorted(
                    ok, key=lambda x: (x is None, x))))
            shutil.rmtree(d)
        self.queue = []


def traced_env(builddir, trace, blob):
    """The environment of a program run under the shim, its calls logged
    to trace and its written bytes to blob."""
    env = dict(os.environ)
    env["ZR_IOTRACE"] = trace
    env["ZR_IOTRACE_BYTES"] = blob
    # After any preload already there (the ASan runtime must stay first).
    env["LD_PRELOAD"] = " ".join(p for p in (env.get(
        "LD_PRELOAD", ""), os.path.join(builddir, "tests", "shim", ".libs",
                                        "libiotrace.so")) if p)
    env["ASAN_OPTIONS"] = ":".join(p for p in (
        env.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0") if p)
    return env


def record(builddir, workdir, workload):
    """Runs workload under the shim; its Trace."""
    store = os.path.join(workdir, workload + ".store")
    trace = os.path.join(workdir, workload + ".trace")
    blob = os.path.join(workdir, workload + ".bytes")
    markers = os.path.join(workdir, workload + ".markers")
    env = traced_env(builddir, trace, blob)
    r = subprocess.run([os.path.join(builddir, "tests", "rel",
                                     "crash_workload"), "run", workload,
                        store, markers], env=env, stderr=subprocess.PIPE,
                       timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return Trace(trace, blob, store, markers)


def explore(builddir, workdir, workload, budget, seed, trace=None):
    """(states checked, violations) of one workload; its Trace is appended
    to trace (a list) if given."""
    if workload == "mount":
        import crashmount  # it builds on this module
        t = crashmount.record(builddir, workdir)
    else:
        t = record(builddir, workdir, workload)
    if trace is not None:
        trace.append(t)
    states = os.path.join(workdir, workload + ".states")
    os.mkdir(states)
    return Explorer(builddir, states, t, budget, seed).run()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builddir")
    ap.add_argument("workdir")
    ap.add_argument("--states", type=int, default=20000,
                    help="budget of states per workload (default 20000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("workloads", nargs="*", default=list(LONG_WORKLOADS))
    a = ap.parse_intermixed_args()
    bad = 0
    for w in a.workloads:
        wd = os.path.join(a.workdir, w)
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        n, v = explore(a.builddir, wd, w, a.states, a.seed)
        bad += len(v)
        print(f"{w}: {n} crash states, {len(v)} violations", flush=True)
        for where, got, ok in v[:5]:
            print(f"  at {where}: {got} (allowed: {ok})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
