"""A store's URL as the SRC of a mount and of `zrecord cat` / `ls`: the
daemon serves s3://BUCKET/PREFIX read-only, its records and batch files
byte for byte those of a mount of the local folder that was uploaded, and
refuses what an S3 store cannot do (-o rw, writes), naming the
URL.  Real FUSE mounts of the built daemon; they fail, never skip."""
import errno
import os
import subprocess
import time

import pytest

from conftest import TOP_BUILD

ZRECORDFS = os.path.join(TOP_BUILD, "src", "fs", "zrecordfs")


class Mount:
    """zrecordfs SRC MNT -f -o OPTS, up once the mount point is a mount."""

    def __init__(self, src, mnt, opts="batch_size=8"):
        os.makedirs(mnt, exist_ok=True)
        self.mnt = mnt
        self.proc = subprocess.Popen(
            [ZRECORDFS, str(src), mnt, "-f", "-o", opts],
            stderr=subprocess.PIPE)
        end = time.monotonic() + 60
        while not os.path.ismount(mnt):
            if self.proc.poll() is not None or time.monotonic() > end:
                self.proc.kill()
                pytest.fail("zrecordfs did not mount: " +
                            self.proc.stderr.read().decode())
            time.sleep(0.02)

    def read(self, *parts):
        with open(os.path.join(self.mnt, *parts), "rb") as f:
            return f.read()

    def stop(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=True)
        self.proc.wait(timeout=60)
        return self.proc.stderr.read().decode()


@pytest.mark.parametrize("name", ["dense_zstd", "ragged_dict"])
def test_mount_serves_the_url_as_the_folder(uploaded, tmp_path, name):
    local, url, _ = uploaded[name]
    here = Mount(local, str(tmp_path / "here"), "ro,batch_size=8")
    there = Mount(url, str(tmp_path / "there"))
    try:
        files = [("records", "0.npy"), ("records", "39.npy"),
                 ("batch", "3-0.npy" if name.startswith("dense")
                  else "3-0.npz"),
                 ("batch", "3-1.indices.npy"), ("schema",)]
        for f in files:
            got = there.read(*f)
            assert got == here.read(*f) and len(got) > 0, f
        # a trainer's steps in order (the prefetcher serves some)
        suffix = ".npy" if name.startswith("dense") else ".npz"
        for t in range(6):
            assert there.read("batch", "5-%d%s" % (t, suffix)) == \
                here.read("batch", "5-%d%s" % (t, suffix))
        assert sorted(os.listdir(os.path.join(there.mnt, "records")))[:3] \
            == sorted(os.listdir(os.path.join(here.mnt, "records")))[:3]
        with pytest.raises(OSError) as e:
            with open(os.path.join(there.mnt, "append"), "wb") as f:
                f.write(b"x")
        assert e.value.errno == errno.EROFS
        assert there.read("errors") == b""
    finally:
        here.stop()
        there.stop()


def test_cat_and_ls_take_the_url(zr, uploaded):
    local, url, _ = uploaded["dense_raw"]
    for args in (("cat", "batch/1-2.npy", "-o", "batch_size=4"),
                 ("cat", "records/7.npy"), ("ls", "records")):
        want = zr.ok(args[0], local, *args[1:])
        assert zr.ok(args[0], url, *args[1:]) == want and want


@pytest.mark.parametrize("opts,word", [("rw", "rw")])
def test_what_an_s3_store_cannot_do_is_refused(uploaded, tmp_path, opts,
                                               word):
    _, url, _ = uploaded["dense_raw"]
    mnt = tmp_path / "m"
    mnt.mkdir()
    r = subprocess.run([ZRECORDFS, url, str(mnt), "-f", "-o", opts],
                       capture_output=True, timeout=60)
    err = r.stderr.decode()
    assert r.returncode != 0 and not os.path.ismount(mnt)
    assert url in err and "read-only" in err and word in err, err


def test_a_url_with_no_store_does_not_mount(engine, tmp_path):
    url = engine.url("no/store/here")
    mnt = tmp_path / "m"
    mnt.mkdir()
    r = subprocess.run([ZRECORDFS, url, str(mnt), "-f"],
                       capture_output=True, timeout=60)
    err = r.stderr.decode()
    assert r.returncode != 0 and not os.path.ismount(mnt)
    assert url in err and "no store" in err.lower(), err
