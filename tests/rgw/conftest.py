"""Shared fixtures of the S3 backend's suite: one real S3 engine per session
(scripts/rgw-local.sh: Ceph's radosgw on loopback), local stores made with
the built zrecord and uploaded with signed PUTs, and the zrecord command
run with the engine's variables.  An engine that does not start fails the
session: these tests never skip."""
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRC = os.environ.get("top_srcdir") or os.path.dirname(
    os.path.dirname(HERE))
TOP_BUILD = os.environ.get("top_builddir") or TOP_SRC
RGW = os.path.join(TOP_SRC, "scripts", "rgw-local.sh")
sys.path.insert(0, os.path.join(TOP_SRC, "contrib", "python"))


def tool_env():
    """The environment for rgw-local.sh and curl: without the sanitizer
    runtime run-pytest.sh preloads for an ASan build of the library (Ceph's
    daemons under ASan do not start in time)."""
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "ASAN_OPTIONS"):
        env.pop(k, None)
    return env


def _exports(text):
    """The variables of rgw-local.sh start's "export K=V" lines."""
    out = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            k, v = line[len("export "):].split("=", 1)
            out[k] = v.strip("'\"")
    return out


class Engine:
    """A started rgw-local.sh engine: its folder and variables."""

    def __init__(self, folder, env):
        self.dir = folder
        self.env = env
        self.bucket = env["ZR_S3_BUCKET"]
        self.endpoint = env["AWS_ENDPOINT_URL"]

    def url(self, key):
        return f"s3://{self.bucket}/{key}"

    def curl(self, key, *args):
        """A signed request for key of the bucket; returns the status."""
        r = subprocess.run(
            [RGW, "curl", self.dir, "-s", "-o", "/dev/null", "-w",
             "%{http_code}", *args,
             f"{self.endpoint}/{self.bucket}/{urllib.parse.quote(key)}"],
            capture_output=True, text=True, timeout=120, env=tool_env())
        return r.stdout

    def put(self, key, path):
        status = self.curl(key, "-T", str(path))
        assert status == "200", (key, status)

    def upload(self, store, prefix):
        """Every file of local store folder store under prefix/."""
        for name in sorted(os.listdir(store)):
            if os.path.isfile(os.path.join(store, name)):
                self.put(f"{prefix}/{name}", os.path.join(store, name))
        return self.url(prefix)


def _start(d):
    """rgw-local.sh start d: its variables; fails the session (after
    stopping whatever it started) if it does not come up."""
    why = None
    try:
        r = subprocess.run([RGW, "start", d], capture_output=True,
                           text=True, timeout=600, env=tool_env())
        if r.returncode == 0:
            return _exports(r.stdout)
        why = r.stderr
    except subprocess.TimeoutExpired as e:
        why = f"no answer in {e.timeout} s"
    _stop(d)
    pytest.fail("rgw-local.sh start failed:\n" + why, False)


def _stop(d):
    if os.path.exists(os.path.join(d, "pids")):
        subprocess.run([RGW, "stop", d], timeout=120, check=False,
                       env=tool_env())


@pytest.fixture(scope="session")
def engine():
    folder = tempfile.mkdtemp(prefix="zr-rgw-")
    d = os.path.join(folder, "engine")
    try:
        env = _start(d)
        # The host cache of every S3 read in the suite, not root's
        # /var/cache/zrecord: each session starts cold.
        env["ZR_CACHE"] = os.path.join(folder, "cache")
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # for the library loaded in this process
        try:
            yield Engine(d, env)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    finally:
        _stop(d)
        shutil.rmtree(folder, ignore_errors=True)


class Zr:
    """The built zrecord command, run with extra variables."""

    def __init__(self):
        self.binary = os.path.join(TOP_BUILD, "src", "cli", "zrecord")
        if not os.access(self.binary, os.X_OK):
            pytest.fail(f"{self.binary} is not built (set top_builddir)")

    def run(self, *args, env=None, timeout=300):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run([self.binary, *map(str, args)], env=e,
                              capture_output=True, timeout=timeout)

    def ok(self, *args, env=None):
        r = self.run(*args, env=env)
        assert r.returncode == 0, (args, r.stderr.decode())
        return r.stdout


@pytest.fixture(scope="session")
def zr():
    return Zr()


def write_npys(path, *arrays):
    with open(path, "wb") as f:
        for a in arrays:
            np.save(f, a)
    return path


def ragged_bytes(n, seed=0):
    """n |u1 records of 1..3 dimensions sharing a pattern, so that a
    dictionary trained on them helps."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, 4096, dtype="u1")
    out = []
    for i in range(n):
        shape = (int(rng.integers(16, 64)),) + (4,) * (i % 3)
        a = np.resize(base, shape).copy()
        a.flat[::7] = rng.integers(0, 255, a.flat[::7].shape, dtype="u1")
        out.append(a)
    return out


@pytest.fixture(scope="session")
def stores(zr, tmp_path_factory):
    """Local stores by name: dense raw, dense zstd, ragged zstd_dict."""
    tmp = tmp_path_factory.mktemp("stores")
    dense = np.arange(40 * 15, dtype="<f4").reshape(40, 3, 5)
    dfile = write_npys(tmp / "d.npy", dense)
    out = {}
    for codec in ("raw", "zstd"):
        s = tmp / f"dense_{codec}"
        zr.ok("create", s, "--dtype", "<f4", "--shape", "3,5", "--codec",
              codec)
        zr.ok("append", s, dfile)
        out[f"dense_{codec}"] = (s, dense)
    arrays = ragged_bytes(600)
    rfile = write_npys(tmp / "r.npy", *arrays)
    plain = tmp / "ragged_plain"
    zr.ok("create", plain, "--dtype", "|u1", "--ragged")
    zr.ok("append", plain, rfile)
    zr.ok("train-dict", plain, "--tier", "fast", "-o", tmp / "dict")
    s = tmp / "ragged_dict"
    zr.ok("create", s, "--dtype", "|u1", "--ragged", "--codec", "zstd_dict",
          "--dict", tmp / "dict")
    zr.ok("append", s, rfile)
    out["ragged_dict"] = (s, arrays)
    return out


@pytest.fixture(scope="session")
def uploaded(engine, stores):
    """The same stores in the bucket: name -> (local, s3 URL, arrays)."""
    return {name: (local, engine.upload(local, f"stores/{name}"), arrays)
            for name, (local, arrays) in stores.items()}
