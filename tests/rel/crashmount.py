"""The crash-state explorer's workload through a zrecordfs mount
(crashstates.py explores it): crash_workload's "seed" store is served by a
daemon running under the iotrace shim, and the steps are what a shell
does to a mount: cp into append, and writes to the sync, delete and
compact control files.  After each step a marker line goes to the same
trace (crash_workload mark, also under the shim), so the trace orders
the promises with the daemon's own writes: "C" after an append (committed
at close, durable at the next sync), "P" after a sync, a delete, a compact
and the unmount (which syncs)."""
import os
import subprocess
import time

import crashstates

SEED_ROWS = 4   # the rows of crash_workload's "seed" workload


def swap_delete(ids, idx):
    """ids after zr_store_delete(idx): the last record fills each hole,
    in descending index order."""
    for i in sorted(set(idx), reverse=True):
        ids[i] = ids[-1]
        ids.pop()


class Daemon:
    """A foreground zrecordfs under the shim, unmounted at close."""

    def __init__(self, builddir, src, mnt, env):
        os.makedirs(mnt, exist_ok=True)
        self.mnt = mnt
        self.proc = subprocess.Popen(
            [os.path.join(builddir, "src", "fs", "zrecordfs"), src, mnt,
             "-f"], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.ismount(mnt):
            assert self.proc.poll() is None, self.proc.stderr.read()
            assert time.monotonic() < deadline, "zrecordfs did not mount"
            time.sleep(0.02)

    def close(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=False)
        self.proc.wait(timeout=60)
        return self.proc.returncode


def record(builddir, workdir):
    """Runs the mount workload; its crashstates.Trace."""
    src, mnt = os.path.join(workdir, "src"), os.path.join(workdir, "mnt")
    os.makedirs(src)
    store = os.path.join(src, "S")
    names = {k: os.path.join(workdir, "mount." + k)
             for k in ("trace", "bytes", "markers")}
    env = crashstates.traced_env(builddir, names["trace"], names["bytes"])
    tool = os.path.join(builddir, "tests", "rel", "crash_workload")

    def mark(kind, ids):
        subprocess.run([tool, "mark", names["markers"], kind,
                        *map(str, ids)], env=env, check=True)

    def ctl(name, text):
        with open(os.path.join(mnt, "S", name), "w") as f:
            f.write(text)

    def append(ids, n):
        first = max(ids) + 1   # ids stay unique after a delete
        rows = subprocess.run([tool, "npy", str(first), str(n)],
                              stdout=subprocess.PIPE, check=True).stdout
        with open(os.path.join(mnt, "S", "append"), "wb") as f:
            f.write(rows)
        ids += range(first, first + n)
        mark("C", ids)

    subprocess.run([tool, "run", "seed", store, names["markers"]], env=env,
                   check=True)
    ids = list(range(SEED_ROWS))
    d = Daemon(builddir, src, mnt, env)
    try:
        append(ids, 3)
        ctl("sync", "1\n")
        mark("P", ids)
        swap_delete(ids, [1, 4])
        ctl("delete", "1\n4\n")
        mark("P", ids)
        ctl("compact", "1\n")
        mark("P", ids)
        append(ids, 2)
    finally:
        assert d.close() == 0
    mark("P", ids)
    return crashstates.Trace(names["trace"], names["bytes"], store,
                             names["markers"])
