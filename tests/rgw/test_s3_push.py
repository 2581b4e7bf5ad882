"""Publishing against a real S3 engine (Ceph's radosgw): `zrecord push`
puts a store in the bucket as content-addressed parts and a manifest
written last, `zrecord pull` copies it back, and every reader (zrecord,
loaderx, the pulled folder) gets the local store's bytes.  A newer version
uploads only what changed, a reader that opened the old version keeps it,
and a push killed with SIGKILL after some parts (or after all of them,
before the manifest) leaves the old version readable and is completed by
the next push, uploading only the missing parts; so does a push killed
at a random point, 20 rounds of it on a growing store (6 under the
sanitizers).  Bad inputs fail with a message naming them and change
nothing."""
import os
import random
import re
import shutil
import signal
import subprocess
import time
import urllib.parse

import numpy as np
import pytest

from conftest import RGW, ragged_bytes, tool_env, write_npys

STORES = ["dense_raw", "dense_zstd", "ragged_dict"]
PART = 4096  # the smallest part size: several parts from small stores
PUSHED = re.compile(rb"(published|up to date:) version ([0-9a-f]{64}): "
                    rb"(\d+) bytes in (\d+) parts, (\d+) parts "
                    rb"\((\d+) bytes\) uploaded\n")


def push(zr, store, url, env=None):
    """zrecord push with small parts: (published?, version, bytes, parts,
    parts sent, bytes sent)."""
    out = zr.ok("push", store, url, "--part-size", PART, env=env)
    m = PUSHED.fullmatch(out)
    assert m, out
    return (m[1] == b"published", m[2].decode(), *map(int, m.groups()[2:]))


def keys(engine, prefix):
    """The bucket's keys under prefix (ListObjectsV2, at most 1000)."""
    q = "list-type=2&max-keys=1000&prefix=" + urllib.parse.quote(prefix,
                                                                safe="")
    r = subprocess.run([RGW, "curl", engine.dir, "-s",
                        f"{engine.endpoint}/{engine.bucket}?{q}"],
                       capture_output=True, text=True, timeout=120,
                       env=tool_env())
    assert "<ListBucketResult" in r.stdout, r.stdout
    return set(re.findall(r"<Key>([^<]*)</Key>", r.stdout))


def get_object(engine, key):
    r = subprocess.run([RGW, "curl", engine.dir, "-sf",
                        f"{engine.endpoint}/{engine.bucket}/{key}"],
                       capture_output=True, timeout=120, env=tool_env())
    assert r.returncode == 0, (key, r.stderr)
    return r.stdout


def read_all(zr, store, n):
    """Records of store spread over all n (each read over S3 is a round
    trip or two: all of them would take minutes), the last included, as
    zrecord get writes them."""
    return zr.ok("get", store, *range(0, n, 1 + n // 60), n - 1, "-o", "-")


def copy_store(src, dst):
    shutil.copytree(src, dst)
    return dst


READS = [("stats",), ("verify",), ("get", "0", "7", "39", "-o", "-"),
         ("batch", "--seed", "3", "--step", "1", "--batch-size", "8",
          "-o", "-")]


@pytest.mark.parametrize("name", STORES)
def test_pushed_store_reads_as_the_local_one(zr, engine, stores, name,
                                             tmp_path):
    local, arrays = stores[name]
    url = engine.url(f"pushed/{name}")
    published, version, size, parts, sent, sent_bytes = push(zr, local, url)
    assert published and parts == sent and sent_bytes == size
    files = [f for f in ("meta.zr", "data.zr", "dict.zr", "content.zr")
             if (local / f).exists()]
    assert size == sum((local / f).stat().st_size for f in files)
    assert parts >= len(files) and f"pushed/{name}/manifest" in \
        keys(engine, f"pushed/{name}/")
    for cmd in READS:
        assert zr.ok(cmd[0], url, *cmd[1:]) == zr.ok(cmd[0], local, *cmd[1:])
    assert read_all(zr, url, len(arrays)) == \
        read_all(zr, local, len(arrays))
    from loaderx import DenseStore, RaggedStore
    cls = RaggedStore if name.startswith("ragged") else DenseStore
    idx = list(range(len(arrays)))[::-1]
    with cls.open(url) as s:
        got = s.gather(idx)
    for k, i in enumerate(idx):
        np.testing.assert_array_equal(got[k], arrays[i])
    # pull: the same files, a store every local tool opens
    dest = tmp_path / "pulled"
    out = zr.ok("pull", url, dest)
    assert out == f"pulled {len(files)} files ({size} bytes) into " \
        f"{dest}\n".encode()
    for f in files:
        assert (dest / f).read_bytes() == (local / f).read_bytes(), f
    assert zr.ok("verify", dest) == zr.ok("verify", local)
    assert not list(tmp_path.glob("pulled.pull-*"))


def test_pull_of_a_plain_prefix(zr, engine, stores, tmp_path):
    """Files uploaded as they are (no manifest) pull the same."""
    local, _ = stores["ragged_dict"]
    url = engine.upload(local, "plain/ragged_dict")
    zr.ok("pull", url + "/", tmp_path / "p")
    for f in ("meta.zr", "data.zr", "dict.zr"):
        assert (tmp_path / "p" / f).read_bytes() == (local / f).read_bytes()


def test_a_newer_version_uploads_what_changed(zr, engine, stores, tmp_path):
    local = copy_store(stores["ragged_dict"][0], tmp_path / "s")
    arrays = stores["ragged_dict"][1]
    url = engine.url("growing/s")
    _, v1, size1, parts1, _, _ = push(zr, local, url)
    again = push(zr, local, url)
    assert again == (False, v1, size1, parts1, 0, 0)  # nothing to send
    v1_bytes = read_all(zr, url, len(arrays))
    data1 = (local / "data.zr").stat().st_size
    from loaderx import RaggedStore
    with RaggedStore.open(url) as old:  # a reader of version 1
        more = ragged_bytes(200, seed=5)
        zr.ok("append", local, write_npys(tmp_path / "m.npy", *more))
        published, v2, size2, parts2, sent, sent_bytes = push(zr, local, url)
        assert published and v2 != v1
        tail = (local / "data.zr").stat().st_size - data1
        meta = (local / "meta.zr").stat().st_size
        # data.zr's old parts stay: its new tail, and meta.zr's changed
        # parts, are all that goes up
        assert tail <= sent_bytes <= tail + meta, (tail, sent_bytes, meta)
        assert parts2 - parts1 <= sent < parts2
        # the open reader keeps version 1, whole
        assert len(old) == len(arrays)
        got = old.gather(list(range(len(arrays))))
        for k, a in enumerate(arrays):
            np.testing.assert_array_equal(got[k], a)
    n = len(arrays) + len(more)
    assert read_all(zr, url, n) == read_all(zr, local, n)
    assert read_all(zr, url, len(arrays)) == v1_bytes  # its prefix stays


def _push_process(zr, local, url, env=None):
    """A push with small parts started in the background."""
    return subprocess.Popen([zr.binary, "push", str(local), url,
                             "--part-size", str(PART)],
                            env=dict(os.environ, **(env or {})),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _stopped_push(zr, local, url, stop):
    """A push that stops for good at stop (ZR_TEST_PUSH_PAUSE_AFTER: after
    that many parts, or with every part up and no manifest yet), killed
    with SIGKILL once it says it stopped: the parts it uploaded."""
    p = _push_process(zr, local, url, {"ZR_TEST_PUSH_PAUSE_AFTER": stop})
    try:
        line = p.stderr.readline().decode()  # waits: no timing
    finally:
        p.send_signal(signal.SIGKILL)
        p.communicate()
    m = re.fullmatch(r"zrecord: push stopped for a test after (\d+) "
                     r"parts\n", line)
    assert m and p.returncode == -signal.SIGKILL, (line, p.returncode)
    return int(m[1])


@pytest.mark.parametrize("stop", ["1", "3", "manifest"])
def test_a_killed_push_keeps_the_old_version_and_resumes(zr, engine,
                                                         tmp_path, stop):
    arrays = ragged_bytes(600, seed=11)
    local = tmp_path / "s"
    zr.ok("create", local, "--dtype", "|u1", "--ragged", "--codec", "raw")
    zr.ok("append", local, write_npys(tmp_path / "a.npy", *arrays))
    url, prefix = engine.url(f"killed-{stop}/s"), f"killed-{stop}/s/"
    push(zr, local, url)
    v1_copy = copy_store(local, tmp_path / "v1")
    v1_keys = keys(engine, prefix)
    manifest1 = get_object(engine, prefix + "manifest")
    more = ragged_bytes(600, seed=12)
    zr.ok("append", local, write_npys(tmp_path / "b.npy", *more))
    up = _stopped_push(zr, local, url, stop)
    at_kill = keys(engine, prefix)
    assert len(at_kill - v1_keys) == up > 0
    if stop != "manifest":
        assert up == int(stop)
    # the old version, whole and byte for byte
    assert get_object(engine, prefix + "manifest") == manifest1
    assert read_all(zr, url, len(arrays)) == \
        read_all(zr, v1_copy, len(arrays))
    assert zr.ok("stats", url) == zr.ok("stats", v1_copy)
    assert zr.ok("verify", url) == zr.ok("verify", v1_copy)
    assert zr.run("get", url, len(arrays), "-o", "-").returncode != 0
    # the next push completes it, sending only what is missing
    published, _, _, parts, sent, _ = push(zr, local, url)
    after = keys(engine, prefix)
    assert published and sent == len(after - at_kill)
    assert len(after - v1_keys) == sent + up
    if stop == "manifest":
        assert sent == 0  # every part was up: only the manifest
    else:
        assert sent > 0
    n = len(arrays) + len(more)
    assert read_all(zr, url, n) == read_all(zr, local, n)
    zr.ok("pull", url, tmp_path / "pulled")
    assert zr.ok("verify", tmp_path / "pulled") == zr.ok("verify", local)
    assert read_all(zr, tmp_path / "pulled", n) == read_all(zr, local, n)


KILL_SEED = "ZR_TEST_KILL_SEED"  # set it to replay a failed run's kills
# The 20 rounds in the normal build; the sanitizer build, which
# runs every suite again to catch memory errors, kills 6 (its pushes run
# the same paths, several times slower).
KILL_ROUNDS = 6 if os.environ.get("ZR_SANITIZERS") == "1" else 20
STORE_FILES = ("meta.zr", "data.zr", "dict.zr", "content.zr")


def _kill_seed():
    """The rounds' seed: $ZR_TEST_KILL_SEED, else a fresh one; printed
    (pytest shows it with a failure) so that a failure replays."""
    v = os.environ.get(KILL_SEED)
    seed = int(v) if v else random.SystemRandom().randrange(1 << 32)
    print(f"{KILL_SEED}={seed}")
    return seed


def _store_files(folder):
    """A store folder's files, name -> bytes."""
    return {f: (folder / f).read_bytes() for f in STORE_FILES
            if (folder / f).exists()}


def _grow(zr, local, rng, tmp):
    """Records appended to local (their number drawn from rng, their bytes
    from a seed drawn from it): (records added, data.zr's new bytes)."""
    size = (local / "data.zr").stat().st_size
    more = ragged_bytes(rng.randrange(100, 200), seed=rng.randrange(1 << 31))
    zr.ok("append", local, write_npys(tmp / "more.npy", *more))
    return len(more), (local / "data.zr").stat().st_size - size


def _delayed_kill(zr, local, url, seconds):
    """A push SIGKILLed seconds after it started (or, if it ended first,
    not at all): True if it was killed, False if it finished."""
    p = _push_process(zr, local, url)
    time.sleep(seconds)
    p.send_signal(signal.SIGKILL)  # nothing if it has ended
    _, err = p.communicate()
    assert p.returncode in (0, -signal.SIGKILL), (p.returncode, err)
    return p.returncode != 0


def _seen_version(zr, url, versions, tmp, where):
    """Which of versions ((snapshot folder, records), ...) a reader of url
    sees: every file of the store pulled is that snapshot's byte for
    byte, and a reader gets that version's records, all of them and no
    more.  Fails for a mix (or a missing version), saying where."""
    pulled = tmp / "seen"
    shutil.rmtree(pulled, ignore_errors=True)
    r = zr.run("pull", url, pulled)
    assert r.returncode == 0, (where, r.stderr.decode())
    got = _store_files(pulled)
    match = [i for i, (snap, _) in enumerate(versions)
             if _store_files(snap) == got]
    assert len(match) == 1, f"{where}: the store read matches no version " \
        f"whole (sizes {dict((k, len(v)) for k, v in got.items())})"
    snap, n = versions[match[0]]
    assert read_all(zr, url, n) == read_all(zr, snap, n), where
    assert zr.ok("stats", url) == zr.ok("stats", snap), where
    assert zr.run("get", url, n, "-o", "-").returncode != 0, where
    return match[0]


def _random_kill(zr, local, url, rng, by_delay, grown, span):
    """A push of local (data.zr grown by grown bytes) SIGKILLed at a point
    drawn from rng: (parts it uploaded or None if unknown, how it ended:
    "pause", "delay", or "ended" if it ended before the delay did)."""
    if not by_delay:  # data.zr alone uploads ceil(grown / PART) parts
        stop = rng.choice([*map(str, range(1, -(-grown // PART) + 1)),
                           "manifest"])
        return _stopped_push(zr, local, url, stop), "pause"
    # span is the time of the push completing the round before (after a
    # stop at a random part: half the PUTs, on average): this push ends
    # around 2 * span
    killed = _delayed_kill(zr, local, url, rng.uniform(0, 2 * span))
    return None, "delay" if killed else "ended"


def test_twenty_random_kills_never_show_a_mix(zr, engine, tmp_path):
    """A store grows between rounds; each round's push is SIGKILLed at a
    point drawn from a seeded RNG: after a random number of parts or
    before the manifest (ZR_TEST_PUSH_PAUSE_AFTER, even rounds), or a
    random delay after it started (odd rounds: the kill may land
    anywhere, even after the push ended).  The delay only picks where
    the kill lands: every outcome is checked, and passes only if a reader
    then sees the previous version or the new one, whole, and the next
    push completes the new one, uploading only what is missing.  With
    the printed ZR_TEST_KILL_SEED the rounds replay: the same records, the
    same stops, the same delays (where those land is up to the clock)."""
    seed = _kill_seed()
    rng = random.Random(seed)
    local = tmp_path / "s"
    zr.ok("create", local, "--dtype", "|u1", "--ragged", "--codec", "raw")
    n_old, _ = _grow(zr, local, rng, tmp_path)
    url, prefix = engine.url(f"kill20-{seed}/s"), f"kill20-{seed}/s/"
    push(zr, local, url)
    old = copy_store(local, tmp_path / "v0")
    seen_after = {"pause": [0, 0], "delay": [0, 0], "ended": [0, 0]}
    span = 0.0  # round 0 stops by the hook, and sets it
    for r in range(KILL_ROUNDS):
        where = f"{KILL_SEED}={seed}, round {r}"
        added, grown = _grow(zr, local, rng, tmp_path)
        n_new = n_old + added
        before = keys(engine, prefix)
        up, how = _random_kill(zr, local, url, rng, r % 2, grown, span)
        at_kill = keys(engine, prefix)
        seen = _seen_version(zr, url, [(old, n_old), (local, n_new)],
                             tmp_path, where)
        seen_after[how][seen] += 1
        if up is not None:  # stopped before its manifest, after up parts
            assert seen == 0 and len(at_kill - before) == up, where
        assert how != "ended" or seen == 1, where  # it published
        t0 = time.monotonic()
        published, _, _, _, sent, _ = push(zr, local, url)
        span = time.monotonic() - t0
        after = keys(engine, prefix)
        # a killed push's manifest PUT the engine got whole may land after
        # the reader looked: then the old version was seen, and the new
        # one is up to date already
        assert published == (seen == 0) or \
            how == "delay" and not published and sent == 0, where
        # only the missing parts: likewise, a part's PUT may land after the
        # listing; it is then not sent again
        assert (sent == len(after - at_kill) if up is not None
                else sent <= len(after - at_kill)), (where, sent)
        assert _seen_version(zr, url, [(local, n_new)], tmp_path,
                             where) == 0
        shutil.rmtree(old)
        old, n_old = copy_store(local, tmp_path / f"v{r + 1}"), n_new
    print("versions seen (old, new): %s" % seen_after)


def _fails(zr, *args, env=None):
    r = zr.run(*args, env=env)
    assert r.returncode == 1, (args, r.returncode, r.stderr)
    assert r.stdout == b""
    return r.stderr.decode()


@pytest.mark.parametrize("url", ["s3://", "s3://zrtest", "s3://zrtest/",
                                 "s3:///x", "http://zrtest/x"])
def test_push_to_a_bad_url(zr, stores, url):
    err = _fails(zr, "push", stores["dense_raw"][0], url)
    assert url in err and "give s3://BUCKET/PREFIX/NAME" in err, err


def test_push_of_a_folder_that_is_no_store(zr, engine, tmp_path):
    err = _fails(zr, "push", tmp_path, engine.url("nostore/x"))
    assert f"{tmp_path}: not a store (no meta.zr)" in err, err
    assert not keys(engine, "nostore/")


def test_push_to_a_missing_bucket(zr, stores):
    err = _fails(zr, "push", stores["dense_raw"][0], "s3://no-such-zr/p/x")
    assert 'no bucket "no-such-zr" to push to: create it first' in err, err


def test_push_with_a_wrong_secret(zr, engine, stores):
    err = _fails(zr, "push", stores["dense_raw"][0], engine.url("denied/x"),
                 env={"AWS_SECRET_ACCESS_KEY": "not-the-key"})
    assert engine.url("denied/x") in err and "403" in err, err
    assert "AWS_SECRET_ACCESS_KEY" in err
    assert not keys(engine, "denied/")


def test_pull_errors(zr, engine, stores, tmp_path):
    local, _ = stores["dense_raw"]
    url = engine.url("pullerr/s")
    push(zr, local, url)
    err = _fails(zr, "pull", url, local)
    assert f"{local} exists" in err, err
    err = _fails(zr, "pull", engine.url("pullerr/none"), tmp_path / "d")
    assert "no store" in err and engine.url("pullerr/none") in err, err
    assert not list(tmp_path.iterdir())
    err = _fails(zr, "pull", url, tmp_path / "d",
                 env={"AWS_SECRET_ACCESS_KEY": "not-the-key"})
    assert "403" in err and not list(tmp_path.iterdir()), err
