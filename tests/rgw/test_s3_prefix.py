"""A prefix of many stores as the SRC of a mount and of `zrecord ls`: the
daemon serves every store under s3://BUCKET/PREFIX (uploaded as they are
or pushed, at any depth) in the folders of their paths, each store's
records and batch files byte for byte those of a mount of the local
folder that was uploaded; a prefix with no store, a missing bucket and
refused credentials do not mount, and the message names the URL.  Real
FUSE mounts of the built daemon; they fail, never skip."""
import os
import shutil
import subprocess

import pytest

from test_s3_mount import ZRECORDFS, Mount

# where each store goes under the prefix, and how
LAYOUT = {"a_plain": ("dense_raw", "upload"),
          "b_pushed": ("dense_zstd", "push"),
          "deep/er/c": ("ragged_dict", "push"),
          "deep/d_plain": ("ragged_dict", "upload")}


@pytest.fixture(scope="module")
def tree(zr, engine, stores, tmp_path_factory):
    """(local folder, URL of the prefix) holding LAYOUT's stores."""
    local = tmp_path_factory.mktemp("prefix") / "src"
    for rel, (name, how) in LAYOUT.items():
        shutil.copytree(stores[name][0], local / rel)
        if how == "upload":
            engine.upload(local / rel, f"tree/{rel}")
        else:
            zr.ok("push", local / rel, engine.url(f"tree/{rel}"))
    # an object that is no store beside them is passed over
    engine.put("tree/deep/notes.txt", local / "a_plain" / "meta.zr")
    return local, engine.url("tree")


def files_of(m, rel):
    """The record files and some batch files of store rel in mount m."""
    recs = sorted(os.listdir(os.path.join(m.mnt, rel, "records")))
    suffix = ".npz" if rel.startswith("deep") else ".npy"
    return recs, [os.path.join("records", r) for r in recs] + \
        [os.path.join("batch", "3-%d%s" % (t, suffix)) for t in range(3)] + \
        ["schema", "stats"]


def test_every_store_under_the_prefix_mounts(tree, tmp_path):
    local, url = tree
    here = Mount(local, str(tmp_path / "here"), "ro,batch_size=8")
    there = Mount(url, str(tmp_path / "there"))
    try:
        for d in ("", "deep", "deep/er"):
            assert sorted(os.listdir(os.path.join(there.mnt, d))) == \
                sorted(os.listdir(os.path.join(here.mnt, d))), d
        assert "@batch" in os.listdir(there.mnt)
        for rel in LAYOUT:
            recs, files = files_of(there, rel)
            assert recs == files_of(here, rel)[0] and recs, rel
            for f in files:
                got = there.read(rel, f)
                assert got == here.read(rel, f) and got, (rel, f)
        assert there.read("@batch", "1-0.npz") == \
            here.read("@batch", "1-0.npz")
    finally:
        here.stop()
        assert "error" not in there.stop().lower()


def test_ls_lists_the_stores_under_the_prefix(zr, tree):
    local, url = tree
    for path in ("", "deep", "deep/er/c"):
        want = zr.ok("ls", local, path)
        assert zr.ok("ls", url, path) == want and want, path
    assert zr.ok("ls", url + "/", "deep") == zr.ok("ls", local, "deep")
    # a store's URL with a '/' is that store, as without
    assert zr.ok("ls", url + "/deep/er/c/") == zr.ok("ls", local, "deep/er/c")


def refused(url, tmp_path, env=None):
    mnt = tmp_path / "m"
    mnt.mkdir()
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([ZRECORDFS, url, str(mnt), "-f"],
                       capture_output=True, timeout=120, env=e)
    assert r.returncode != 0 and not os.path.ismount(mnt)
    return r.stderr.decode()


def test_an_empty_prefix_is_refused(engine, tmp_path):
    url = engine.url("nothing/here")
    err = refused(url, tmp_path)
    assert url in err and "no store at or under" in err, err


def test_a_prefix_of_other_objects_is_refused(engine, tree, tmp_path):
    url = engine.url("tree/deep/notes.txt")
    err = refused(url, tmp_path)
    assert url in err and "no store" in err, err


def test_a_missing_bucket_is_refused(engine, tmp_path):
    url = "s3://no-such-bucket-zr/tree"
    err = refused(url, tmp_path)
    assert url in err and "bucket" in err, err


def test_refused_credentials_are_named(engine, tree, tmp_path):
    _, url = tree
    err = refused(url, tmp_path, {"AWS_SECRET_ACCESS_KEY": "wrong"})
    assert url in err and "AWS_SECRET_ACCESS_KEY" in err, err


def test_a_level_over_one_page_is_listed_whole(zr, engine, stores, tmp_path):
    """250 other objects sort before the store of their folder: the store
    is on the listing's second page (200 names a page), found through the
    continuation token."""
    from concurrent.futures import ThreadPoolExecutor
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: engine.put(f"paged/a{i:03d}", empty),
                      range(250)))
    engine.upload(stores["dense_raw"][0], "paged/zz/s")
    assert zr.ok("ls", engine.url("paged")) == b"zz\n"
    assert zr.ok("ls", engine.url("paged"), "zz") == b"s\n"
