"""zrecord batch over a mixture file: the records of dense and ragged
stores and of dataset folders (as loaderx draws them) in batch order,
--indices pairs, the file's weight schedule, and mixture files and
options it refuses, each with a message that names the problem
(src/common/mixfile.c reads the file)."""
import io
import json
import os
import sys

import numpy as np
import pytest

from conftest import write_npys


@pytest.fixture
def mix(zr, tmp_path):
    """Two dense <i8 (2,) stores of 9 and 4 records in a folder, and a
    mixture file beside them."""
    for name, n, base in (("a", 9, 0), ("b", 4, 100)):
        zr.ok("create", tmp_path / name, "--dtype", "<i8", "--shape", "2")
        rows = base + np.arange(2 * n, dtype="<i8").reshape(n, 2)
        zr.ok("append", tmp_path / name,
              write_npys(tmp_path / (name + ".npy"), rows))

    def write(doc, name="m.mix.json"):
        p = tmp_path / name
        p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        return p
    return write


def test_records_follow_the_pairs(zr, mix):
    m = mix({"sources": [{"path": "a", "weight": 3},
                         {"path": "b", "weight": 1}],
             "schedule": [{"from": 8, "weights": [1, 1]}]})
    for step in range(6):
        args = ("batch", m, "--seed", 5, "--step", step, "--batch-size", 4)
        pairs = zr.load(*args, "--indices")
        rows = zr.load(*args)
        assert pairs.shape == (4, 2) and rows.shape == (4, 2)
        want = [[100 * s + 2 * i, 100 * s + 2 * i + 1] for s, i in pairs]
        assert rows.tolist() == want
        shares = np.bincount(pairs[:, 0], minlength=2).tolist()
        assert shares == ([3, 1] if step < 2 else [2, 2])


@pytest.mark.parametrize("doc,msg", [
    ('{"sources": [{"path": "a", "weight": 1.5}]}', "non-negative integer"),
    ('{"sources": [{"path": "a", "weight": -1}]}', "non-negative integer"),
    ('{"sources": []}', "no sources"),
    ('{"sources": [{"path": "a"}]}', "needs a path and a weight"),
    ('{"sources": [{"path": "a", "weight": 1, "x": 2}]}', "unknown"),
    ('{"sources": [{"path": "", "weight": 1}]}', "empty path"),
    ('{"sources": [{"path": "a", "weight": 2000000}]}', "above"),
    ('{"sources": [{"path": "a", "weight": 1}]} x', "text after"),
    ('{"sources": [{"path": "a", "weight": 1}], "schedule": [{"from": 5, '
     '"weights": [1, 2]}]}', "one per source"),
    ('{"sources": [{"path": "a", "weight": 1}], "schedule": [{"from": 5, '
     '"weights": [1]}, {"from": 4, "weights": [1]}]}', "comes before"),
    ('{"sources": [{"path": "a", "weight": 0}]}', "every weight is 0"),
    ('{"sources": [{"path": "nope", "weight": 1}]}', "no store"),
    ('{"sources": [{"path": "a", "weight": 1}', "expected"),
])
def test_bad_mixture_files(zr, mix, doc, msg):
    err = zr.fails(1, "batch", mix(doc), "--seed", 1, "--step", 0)
    assert "m.mix.json" in err or "nope" in err
    assert msg in err, err


@pytest.mark.parametrize("cmd", [("batch", "--seed", 1, "--step", 0),
                                 ("stats",)])
@pytest.mark.parametrize("doc,msg", [
    ('{"sources": [{"path": "a", "weight": 0}, {"path": "b", "weight": 0}]}',
     "every weight is 0"),
    ('{"sources": [{"path": "a", "weight": 1}], "schedule": [{"from": 5, '
     '"weights": [0]}]}', "schedule entry 0: every weight is 0"),
])
def test_all_zero_weights_are_refused(zr, mix, cmd, doc, msg):
    """Nothing to draw: refused by every command that reads the file, with
    a message naming it, as the mount refuses it (test_mixture.py)."""
    err = zr.fails(1, cmd[0], mix(doc), *cmd[1:])
    assert "m.mix.json" in err and msg in err, err


def test_a_symlinked_mixture_file_is_refused_as_the_mount_hides_it(
        zr, mix, tmp_path):
    """One rule: a mixture file is a regular file.  The mount (and zrecord
    ls, its listing) shows no symlinks, so zrecord batch and stats, and
    loaderx's Mixture, refuse one with a message saying so."""
    loaderx = _loaderx()
    m = mix({"sources": [{"path": "a", "weight": 1}]})
    os.symlink(m.name, tmp_path / "l.mix.json")
    for cmd in (("batch", "--seed", 1, "--step", 0), ("stats",)):
        err = zr.fails(1, cmd[0], tmp_path / "l.mix.json", *cmd[1:])
        assert "l.mix.json" in err and "a symlink: a mixture file must " \
            "be a regular file" in err, err
    listed = zr.ok("ls", tmp_path).decode().split()
    assert "m.mix" in listed and "l.mix" not in listed, listed
    with pytest.raises(ValueError, match="a symlink"):
        loaderx.Mixture(str(tmp_path / "l.mix.json"))
    zr.ok("stats", m)


def test_mixture_options(zr, mix, tmp_path):
    m = mix({"sources": [{"path": "a", "weight": 1},
                         {"path": "b", "weight": 1}]})
    assert "--granule" in zr.fails(2, "batch", m, "--seed", 1, "--step", 0,
                                   "--granule", 4)
    assert "--form" in zr.fails(2, "batch", m, "--seed", 1, "--step", 0,
                                "--form", "packed")
    assert "one per source" in zr.fails(2, "batch", m, "--seed", 1,
                                        "--step", 0, "--length", 3)
    assert "above its 4 records" in zr.fails(
        1, "batch", m, "--seed", 1, "--step", 0, "--length", "9,5")
    # --length 9,3 then growing b to 4 from position 0 (its first cycle
    # boundary) is b at its full length from the start.
    grown = zr.load("batch", m, "--seed", 1, "--step", 1, "--indices",
                    "--batch-size", 8, "--length", "9,3", "--grow", "0:1:4")
    full = zr.load("batch", m, "--seed", 1, "--step", 1, "--indices",
                   "--batch-size", 8)
    assert grown.tolist() == full.tolist()
    zr.ok("create", tmp_path / "r", "--dtype", "<i8", "--ragged")
    zr.ok("append", tmp_path / "r",
          write_npys(tmp_path / "r.npy", np.arange(3, dtype="<i8")))
    r = mix({"sources": [{"path": "a", "weight": 1},
                         {"path": "r", "weight": 1}]}, "r.mix.json")
    assert "--indices" in zr.fails(1, "batch", r, "--seed", 1, "--step", 0,
                                   "--batch-size", 2)
    assert zr.load("batch", r, "--seed", 1, "--step", 0, "--batch-size", 2,
                   "--indices").shape == (2, 2)


@pytest.mark.parametrize("bad", ["5", "5:x", "1:2:3:4", ":"])
def test_bad_skip_and_grow(zr, dense, bad):
    store, _ = dense
    assert "one per source (1)" in zr.fails(
        2, "batch", store, "--seed", 1, "--step", 0, "--length", "5,5")
    zr.fails(2, "batch", store, "--seed", 1, "--step", 0, "--skip", bad)
    if bad != "5":
        zr.fails(2, "batch", store, "--seed", 1, "--step", 0, "--grow", bad)


def _loaderx():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "contrib", "python"))
    import loaderx
    return loaderx


def test_ragged_sources(zr, tmp_path):
    """A mixture of ragged stores is written as a ragged store's batch:
    an .npz of arr_k.npy in batch order, and its packed and padded
    forms."""
    recs = {}
    for name, n, base in (("r", 9, 0), ("s", 4, 50)):
        recs[name] = [np.full((i % 3 + 1, 2), base + i, "<i2")
                      for i in range(n)]
        zr.ok("create", tmp_path / name, "--dtype", "<i2", "--ragged")
        zr.ok("append", tmp_path / name,
              write_npys(tmp_path / (name + ".npy"), *recs[name]))
    m = tmp_path / "m.mix.json"
    m.write_text(json.dumps({"sources": [{"path": "r", "weight": 2},
                                         {"path": "s", "weight": 1}]}))
    for step in range(4):
        args = ("batch", m, "--seed", 2, "--step", step, "--batch-size", 5)
        pairs = zr.load(*args, "--indices")
        got = zr.load(*args)
        assert len(got) == 5
        for g, (k, i) in zip(got, pairs.tolist()):
            assert np.array_equal(g, recs["rs"[k]][i])
        with np.load(io.BytesIO(zr.ok(*args, "--form", "padded"))) as z:
            assert z["lengths"].tolist() == [len(g) for g in got]


def test_dataset_folder_sources_match_loaderx(zr, tmp_path):
    """Sources that are dataset folders (a dense x, a ragged y) give a
    dataset's .npz: x.npy stacked, y/k.npy per record, the records
    loaderx's DataLoader over the same file yields."""
    loaderx = _loaderx()
    for d, n in (("d0", 12), ("d1", 5)):
        zr.ok("create", tmp_path / d / "x", "--dtype", "<i4", "--shape", "2")
        zr.ok("append", tmp_path / d / "x", write_npys(
            tmp_path / "x.npy", (100 * int(d[1]) + np.arange(2 * n))
            .astype("<i4").reshape(n, 2)))
        zr.ok("create", tmp_path / d / "y", "--dtype", "<i4", "--ragged",
              "--codec", "zstd")
        zr.ok("append", tmp_path / d / "y", write_npys(
            tmp_path / "y.npy", *[np.full(i % 3 + 1, 100 * int(d[1]) + i,
                                          "<i4") for i in range(n)]))
    m = tmp_path / "d.mix.json"
    m.write_text(json.dumps({"sources": [{"path": "d0", "weight": 3},
                                         {"path": "d1", "weight": 1}]}))
    with loaderx.Mixture(str(m)) as mix:
        loader = loaderx.DataLoader(mix, batch_size=6, seed=4, start=2)
        for step in range(4):
            want = next(loader)
            out = zr.ok("batch", m, "--seed", 4, "--step", step,
                        "--batch-size", 6, "--start", 2)
            with np.load(io.BytesIO(out)) as z:
                assert sorted(z.files) == sorted(
                    ["x"] + ["y/%d" % k for k in range(6)])
                assert np.array_equal(z["x"], want["x"])
                for k in range(6):
                    assert np.array_equal(z["y/%d" % k], want["y"][k])
        loader.close()
    # a store beside dataset folders: not the same fields
    (tmp_path / "bad.mix.json").write_text(json.dumps(
        {"sources": [{"path": "d0", "weight": 1},
                     {"path": "d0/x", "weight": 1}]}))
    err = zr.fails(1, "batch", tmp_path / "bad.mix.json", "--seed", 1,
                   "--step", 0)
    assert "same fields" in err, err
    assert zr.load("batch", tmp_path / "bad.mix.json", "--seed", 1,
                   "--step", 0, "--batch-size", 4,
                   "--indices").shape == (4, 2)
