"""The read-only S3 backend against a real S3 engine (Ceph's radosgw): the
read commands of zrecord give over s3://BUCKET/PREFIX byte for byte what
they give over the local store that was uploaded there, loaderx opens
the URL through the library, and the faults (a wrong secret, a missing
bucket or prefix, an object replaced after the open, an endpoint nothing
answers at, a write) fail with a message that says what and where."""
import os
import time

import numpy as np
import pytest

STORES = ["dense_raw", "dense_zstd", "ragged_dict"]

# Each read command, as it is run on both paths (a batch of each mode).
COMMANDS = {
    "stats": ("stats",),
    "schema": ("schema",),
    "get": ("get", "0", "7", "39", "-o", "-"),
    "batch-iid": ("batch", "--seed", "3", "--step", "1", "--batch-size",
                  "8", "-o", "-"),
    "batch-sequential": ("batch", "--seed", "3", "--step", "2",
                         "--batch-size", "5", "--mode", "sequential",
                         "-o", "-"),
    "batch-indices": ("batch", "--seed", "9", "--step", "0",
                      "--batch-size", "4", "--indices", "-o", "-"),
    "verify": ("verify",),
}


def _command(cmd, store):
    return [cmd[0], store, *cmd[1:]]


@pytest.mark.parametrize("name", STORES)
@pytest.mark.parametrize("cmd", COMMANDS.values(), ids=COMMANDS.keys())
def test_read_commands_match_the_local_store(zr, uploaded, name, cmd):
    local, url, _ = uploaded[name]
    want = zr.run(*_command(cmd, local))
    got = zr.run(*_command(cmd, url))
    assert want.returncode == 0, want.stderr.decode()
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == want.stdout
    assert len(got.stdout) > 0


def test_a_prefix_that_needs_encoding(zr, engine, stores):
    """A space, a '+' and a non-ASCII letter in the prefix: the URL is
    encoded once and signed as sent."""
    local, _ = stores["dense_zstd"]
    url = engine.upload(local, "odd name+\u00e9/s")
    assert zr.ok("verify", url) == zr.ok("verify", local)
    assert zr.ok("get", url, "9", "-o", "-") == \
        zr.ok("get", local, "9", "-o", "-")


def test_train_dict_takes_an_s3_store(zr, uploaded, tmp_path):
    """train-dict asks the library whether its argument is a store
    (zr_store_probe), so a URL is one: the same dictionary as from the
    folder."""
    local, url, _ = uploaded["ragged_dict"]
    zr.ok("train-dict", local, "--tier", "fast", "-o", tmp_path / "a")
    zr.ok("train-dict", url, "--tier", "fast", "-o", tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_probe_through_the_library(uploaded, engine):
    import ctypes
    import os
    from conftest import TOP_BUILD
    lib = ctypes.CDLL(os.path.join(TOP_BUILD, "src", "lib", ".libs",
                                   "libzrecord.so"))
    lib.zr_store_probe.argtypes = [ctypes.c_char_p]
    _, url, _ = uploaded["dense_raw"]
    assert lib.zr_store_probe(url.encode()) == 1
    assert lib.zr_store_probe(engine.url("stores").encode()) == 0
    assert lib.zr_store_probe(b"s3://no-such-bucket-zr/p") == 0


def test_get_reads_the_appended_arrays(zr, uploaded):
    _, url, arrays = uploaded["dense_zstd"]
    import io
    out = zr.ok("get", url, "5", "-o", "-")
    np.testing.assert_array_equal(np.load(io.BytesIO(out)), arrays[5])


@pytest.mark.parametrize("name", STORES)
def test_loaderx_opens_an_s3_url(uploaded, name):
    from loaderx import DenseStore, RaggedStore
    local, url, arrays = uploaded[name]
    cls = RaggedStore if name.startswith("ragged") else DenseStore
    idx = [0, 3, len(arrays) - 1, 3]
    with cls.open(url) as s:
        assert len(s) == len(arrays)
        got = s.gather(idx)
    for k, i in enumerate(idx):
        np.testing.assert_array_equal(got[k], arrays[i])


def test_a_large_gather_over_the_lanes(uploaded):
    """Every record in one gather, backwards: the library's pool lanes
    read at once, each over its own connection."""
    from loaderx import RaggedStore
    _, url, arrays = uploaded["ragged_dict"]
    idx = list(range(len(arrays)))[::-1]
    with RaggedStore.open(url) as s:
        got = s.gather(idx)
    for k, i in enumerate(idx):
        np.testing.assert_array_equal(got[k], arrays[i])


def test_wrong_secret_names_the_url_and_the_variable(zr, uploaded):
    _, url, _ = uploaded["dense_raw"]
    r = zr.run("stats", url, env={"AWS_SECRET_ACCESS_KEY": "not-the-key"})
    err = r.stderr.decode()
    assert r.returncode != 0 and r.stdout == b""
    assert url + "/meta.zr" in err and "AWS_SECRET_ACCESS_KEY" in err, err
    assert "403" in err


def test_missing_bucket_says_so(zr, engine):
    r = zr.run("stats", "s3://no-such-bucket-zr/p")
    err = r.stderr.decode()
    assert r.returncode != 0
    assert "no store" in err and 'no bucket "no-such-bucket-zr"' in err, err


def test_missing_prefix_is_no_store(zr, engine, uploaded):
    url = engine.url("stores/nothing-here")
    for cmd in ("stats", "verify"):
        r = zr.run(cmd, url)
        err = r.stderr.decode()
        assert r.returncode != 0
        assert f"{url}: no store (no meta.zr)" in err, err
        assert "bucket" not in err


def _replace_data(engine, stores, tmp_path, key):
    """The dense raw store at key, and its data.zr's bytes inverted (same
    size, other bytes) ready to replace it."""
    local, arrays = stores["dense_raw"]
    url = engine.upload(local, key)
    data = (local / "data.zr").read_bytes()
    other = tmp_path / "data.zr"
    other.write_bytes(bytes(255 - b for b in data))
    return url, arrays, other


def test_replaced_object_fails_the_read_never_mixes(engine, stores, tmp_path):
    """data.zr replaced after the open, no cache: the ranged GET's If-Match
    fails it, and no record of the new bytes comes back."""
    from loaderx import DenseStore, set_cache
    url, arrays, other = _replace_data(engine, stores, tmp_path, "replaced")
    set_cache("off")
    try:
        with DenseStore.open(url) as s:
            np.testing.assert_array_equal(s.gather([1]), arrays[[1]])
            engine.put("replaced/data.zr", other)
            with pytest.raises(OSError) as e:
                s.gather([2, 3])
    finally:
        set_cache(os.environ["ZR_CACHE"])
    msg = str(e.value)
    assert url + "/data.zr" in msg and "changed since it was opened" in msg
    assert "412" in msg


def test_replaced_object_cached_keeps_the_opened_version(engine, stores,
                                                         tmp_path):
    """With the host cache, the handle keeps reading the version it opened
    from the blocks it fetched (the whole small data.zr is one block), never
    the new bytes; a new open reads the new object, not the old blocks."""
    from loaderx import DenseStore, cache_status, set_cache
    url, arrays, other = _replace_data(engine, stores, tmp_path, "replaced3")
    set_cache(str(tmp_path / "cache"))
    try:
        with DenseStore.open(url) as s:
            np.testing.assert_array_equal(s.gather([1]), arrays[[1]])
            engine.put("replaced3/data.zr", other)
            np.testing.assert_array_equal(s.gather([2, 3]), arrays[[2, 3]])
        with DenseStore.open(url) as s:
            got = s.gather([2, 3])
        assert cache_status()["hit_bytes"] > 0
    finally:
        set_cache(os.environ["ZR_CACHE"])
    want = np.frombuffer(bytes(255 - b for b in arrays[[2, 3]].tobytes()),
                         dtype=arrays.dtype).reshape(got.shape)
    np.testing.assert_array_equal(got, want)


def test_replaced_object_under_the_command(zr, engine, stores, tmp_path):
    """A fresh open takes the new object: verify reports what it finds."""
    local, _ = stores["dense_raw"]
    url = engine.upload(local, "replaced2")
    data = bytearray((local / "data.zr").read_bytes())
    data[100] ^= 0xff
    (tmp_path / "data.zr").write_bytes(bytes(data))
    engine.put("replaced2/data.zr", tmp_path / "data.zr")
    r = zr.run("get", url, "1", "-o", "-")
    ok = zr.run("get", local, "1", "-o", "-")
    assert r.returncode == 0 and r.stdout != ok.stdout


def test_unreachable_endpoint_fails_in_bounded_time(zr, engine):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    t0 = time.monotonic()
    r = zr.run("stats", engine.url("stores/dense_raw"), timeout=60,
               env={"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"})
    took = time.monotonic() - t0
    err = r.stderr.decode()
    assert r.returncode != 0
    assert f"127.0.0.1:{port}" in err and "after 4 tries" in err, err
    assert took < 15, took


def test_stalled_endpoint_fails_in_bounded_time(zr, engine):
    """An endpoint that takes the connection and never answers: the
    low-speed limit (20 s, not retried) ends the request."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)  # the kernel accepts; nobody reads or answers
    port = s.getsockname()[1]
    try:
        t0 = time.monotonic()
        r = zr.run("stats", engine.url("stores/dense_raw"), timeout=120,
                   env={"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"})
        took = time.monotonic() - t0
    finally:
        s.close()
    err = r.stderr.decode()
    assert r.returncode != 0 and "Input/output error" in err, err
    assert f"127.0.0.1:{port}" in err and "after 1 try" in err, err
    assert 15 < took < 45, took


def test_writes_are_refused(zr, engine, uploaded, tmp_path):
    _, url, arrays = uploaded["dense_raw"]
    r = zr.run("create", engine.url("new"), "--dtype", "u1", "--shape", "1")
    assert r.returncode != 0 and "read-only" in r.stderr.decode()
    np.save(tmp_path / "a.npy", arrays[:1])
    r = zr.run("append", url, tmp_path / "a.npy")
    assert r.returncode != 0
    assert "Read-only file system" in r.stderr.decode(), r.stderr.decode()


def test_credentials_from_a_profile(zr, engine, uploaded, tmp_path):
    """AWS_PROFILE's keys in ~/.aws/credentials, region in ~/.aws/config
    (its "profile NAME" section), when the variables are not set."""
    _, url, _ = uploaded["dense_raw"]
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text(
        "[default]\naws_access_key_id = nobody\naws_secret_access_key = x\n"
        f"[zr]\naws_access_key_id = {engine.env['AWS_ACCESS_KEY_ID']}\n"
        "aws_secret_access_key = "
        f"{engine.env['AWS_SECRET_ACCESS_KEY']}\n")
    (aws / "config").write_text("[profile zr]\nregion = us-east-1\n")
    env = {"HOME": str(tmp_path), "AWS_PROFILE": "zr",
           "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
           "AWS_REGION": ""}
    want = zr.ok("stats", url)
    assert zr.ok("stats", url, env=env) == want
    env["AWS_PROFILE"] = "default"
    r = zr.run("stats", url, env=env)
    assert r.returncode != 0 and "403" in r.stderr.decode()
