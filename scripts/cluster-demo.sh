#!/bin/sh
# cluster-demo.sh [BUILD_DIR] - many hosts, one dataset, on a throwaway
# GlusterFS volume (tests/cluster/gluster.py's harness: its own glusterd,
# one brick in a temporary folder, one client mount per simulated host,
# one run per machine through /run/lock/zrecord-cluster-test.lock).
#   1. host 0 (the writer) creates a store with `zrecord`;
#   2. hosts 1-3 (the readers) each run `zrecordfs -o ro,rank=R,world=3`
#      on their own client mount; their batch files joined in rank order
#      must equal `zrecord batch --batch-size 3*B`;
#   3. a read-only mount keeps writers out (`store busy`);
#   4. two writer hosts append one right after the other: both appends stay;
#   5. a read-only mount served the length it opened with; follower hosts
#      (`zrecordfs -o follow`) see host 4's next append without a remount,
#      and keep a delete out while they serve.
# Everything is torn down on exit, failure or signal.  Exits non-zero if a
# check fails.  Needs root, FUSE, GlusterFS (scripts/deps.sh), a build.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
if [ ! -x "$build/src/fs/zrecordfs" ] || [ ! -x "$build/src/cli/zrecord" ]; then
    echo "cluster-demo: build first (scripts/build.sh $build)" >&2; exit 2
fi
command -v glusterd >/dev/null || {
    echo "cluster-demo: glusterd missing: run scripts/deps.sh" >&2; exit 2; }
export top_builddir="$build" top_srcdir="$top"
export PYTHONPATH="$top/tests/cluster:$top/tests/fs"
/usr/bin/python3 - <<'EOF' &
import io, os, shutil, signal, subprocess, sys, tempfile, time
import numpy as np
from gluster import Volume, LOCK
from fsutil import Mount, ZRECORD, make_store, store_stats, zrecord

def on_term(sig, frame):
    raise SystemExit("cluster-demo: signal %d, tearing down" % sig)
signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)

N, B, W, SEED = 47, 5, 3, 9
IMG = np.random.default_rng(3).integers(0, 255, (N, 2, 4, 4), np.uint8)
failed = []
def check(ok, what):
    print("  check %s: %s" % ("ok  " if ok else "FAIL", what), flush=True)
    if not ok:
        failed.append(what)

def batch(store, step, world, indices):
    args = ["batch", store, "--seed", SEED, "--step", step, "--mode",
            "cyclic", "--batch-size", world * B] + (["--indices"] if indices else [])
    return np.load(io.BytesIO(zrecord(*args).stdout))

t0 = time.monotonic()
base = tempfile.mkdtemp(prefix="zr-demo-")
vol, mounts = Volume(base), []
def ro_mount(host, name, *opts, mode="ro"):
    m = Mount(os.path.join(vol.mount(host), "data"),
              os.path.join(base, name), mode, *opts)
    mounts.append(m)
    return m
def stop(m):
    rc = m.stop()
    mounts.remove(m)
    return rc
try:
    print("GlusterFS: waiting for %s (one cluster run per machine)" % LOCK,
          flush=True)
    vol.start()
    print("GlusterFS: volume %s, brick %s:%s (%.1f s)" % (
        vol.name, vol.ip, vol.brick, time.monotonic() - t0), flush=True)
    data = os.path.join(vol.mount(0), "data")
    os.makedirs(data)
    store = os.path.join(data, "img")
    print("\n1. writer host h0 (%s): zrecord create + append, %d records "
          "u1 (2,4,4) zstd" % (vol.mount(0), N), flush=True)
    make_store(store, "u1", shape=(2, 4, 4), codec="zstd", rows=IMG)
    print("  " + zrecord("stats", store).stdout.decode().strip().replace(
        "\n", "\n  "))

    print("\n2. reader hosts h1-h3: zrecordfs -o ro,sampler=cyclic,"
          "batch_size=%d,rank=R,world=%d" % (B, W), flush=True)
    readers = [ro_mount(r + 1, "r%d" % r, "sampler=cyclic",
                        "batch_size=%d" % B, "rank=%d" % r, "world=%d" % W)
               for r in range(W)]
    for step in (0, 1, 2, 3):   # 3*5*3 = 45 < 47 <= 60: step 3 crosses a cycle
        name = "%d-%d" % (SEED, step)
        idx = [np.load(m.path("img", "batch", name + ".indices.npy"))
               for m in readers]
        rows = [np.load(m.path("img", "batch", name + ".npy")) for m in readers]
        want = batch(store, step, W, True)
        print("  step %d: %s  |  zrecord batch --batch-size %d: %s" % (
            step, "  ".join("rank%d %s" % (r, i.tolist())
                            for r, i in enumerate(idx)), W * B,
            want.tolist()))
        check((np.concatenate(idx) == want).all() and
              (np.concatenate(rows) == batch(store, step, W, False)).all() and
              (np.concatenate(rows) == IMG[want]).all(),
              "step %d: ranks 0-2 joined == zrecord batch, bytes == source"
              % step)

    print("\n3. a writer while read-only mounts hold the store", flush=True)
    extra = os.path.join(base, "extra.npy")
    np.save(extra, np.full((10, 2, 4, 4), 200, np.uint8))
    r = subprocess.run([ZRECORD, "append", os.path.join(vol.mount(4), "data",
                        "img"), extra], capture_output=True)
    print("  h4$ zrecord append img extra.npy -> exit %d: %s" % (
        r.returncode, r.stderr.decode().strip()))
    check(r.returncode != 0 and b"busy" in r.stderr,
          "h4's append is refused (store busy) while h1-h3 read")
    before = store_stats(readers[0], "img")["records"]
    for m in list(readers):
        stop(m)

    print("\n4. two writer hosts, one right after the other", flush=True)
    a, b = os.path.join(base, "a.npy"), os.path.join(base, "b.npy")
    np.save(a, np.full((10, 2, 4, 4), 1, np.uint8))
    np.save(b, np.full((10, 2, 4, 4), 2, np.uint8))
    s4, s5 = (os.path.join(vol.mount(h), "data", "img") for h in (4, 5))
    zrecord("stats", s5)             # h5's client now caches the store
    zrecord("append", s4, a)
    print("  h4$ zrecord append img a.npy   (10 records of 1) -> exit 0")
    zrecord("append", s5, b)
    print("  h5$ zrecord append img b.npy   (10 records of 2) -> exit 0")
    want = np.concatenate([IMG, np.load(a), np.load(b)])
    srv = vol.brick_path(s4)
    got = np.load(io.BytesIO(zrecord("get", srv, *range(N + 20)).stdout))
    stats = zrecord("stats", srv).stdout.decode()
    print("  on the server: %s" % " ".join(stats.split()))
    check('"records": %d' % (N + 20) in stats and (got == want).all(),
          "both appends kept: %d records, h4's then h5's" % (N + 20))
    zrecord("verify", srv)
    check(True, "zrecord verify")

    print("\n5. readers that follow a growing store", flush=True)
    check(before == N, "h1's read-only mount served the %d records it "
          "opened with (it had to go before anyone could append: see 3)"
          % before)
    fol = [ro_mount(h, "f%d" % h, mode="follow=0.2") for h in (1, 2, 3)]
    print("  h1-h3: zrecordfs -o follow=0.2 (records = %s)" % [
        store_stats(m, "img")["records"] for m in fol])
    c = os.path.join(base, "c.npy")
    np.save(c, np.full((5, 2, 4, 4), 3, np.uint8))
    zrecord("append", s4, c)
    t1 = time.monotonic()
    print("  h4$ zrecord append img c.npy   (5 records of 3) -> exit 0")
    for m in fol:
        while (store_stats(m, "img")["records"] != N + 25 and
               time.monotonic() - t1 < 15):
            time.sleep(0.05)
    seen = [store_stats(m, "img")["records"] for m in fol]
    last = [np.load(m.path("img", "records", "%d.npy" % (N + 24)))
            for m in fol if store_stats(m, "img")["records"] == N + 25]
    print("  followers caught up in %.2f s: records = %s" % (
        time.monotonic() - t1, seen))
    check(seen == [N + 25] * 3 and len(last) == 3 and
          all((x == 3).all() for x in last),
          "h1-h3 see h4's append without a remount")
    r = subprocess.run([ZRECORD, "delete", s4, "0"], capture_output=True)
    print("  h4$ zrecord delete img 0 -> exit %d: %s" % (
        r.returncode, r.stderr.decode().strip()))
    check(r.returncode != 0 and b"follower" in r.stderr,
          "a delete waits for the followers")
    for m in fol:
        stop(m)
except BaseException as e:
    failed.append("error: %r" % (e,))
    print("cluster-demo: %r" % (e,), file=sys.stderr, flush=True)
finally:
    for m in list(mounts):
        m.stop()
    errors = vol.teardown()
    shutil.rmtree(base, ignore_errors=True)
    if errors:
        failed.append("teardown: %r" % errors)
    print("\nteardown: %s; %.1f s in all" % (
        "clean" if not errors else errors, time.monotonic() - t0))
print("cluster-demo: %s" % ("all checks passed" if not failed else
                            "FAILED: %s" % failed))
sys.exit(1 if failed else 0)
EOF
pid=$!
trap 'kill -TERM $pid 2>/dev/null' INT TERM HUP
rc=0
wait $pid || rc=$?
# a signal interrupts the first wait; wait again for the teardown
while kill -0 $pid 2>/dev/null; do wait $pid || rc=$?; done
exit $rc
