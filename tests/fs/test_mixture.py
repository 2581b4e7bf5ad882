"""test_mixture.py - a mixture file SRC/NAME.mix.json served as the folder
NAME.mix/: its batch files are byte for byte what `zrecord batch
NAME.mix.json` writes (dense and ragged stores, dataset-folder sources,
MODE/B folders, -o start, rank and world, a growing source), what loaderx
draws, and records of the right sources; stats counts each source, as
`zrecord stats NAME.mix.json` does; a file
whose sources this mount does not serve gets a folder with only errors,
and the rest of the mount comes up."""
import json
import os
import sys

import numpy as np
import pytest

from fsutil import make_store, zrecord

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "../.."),
                                "contrib", "python"))

RNG = np.random.default_rng(21)
ROWS = {"a": (40, "zstd"), "b": (7, "raw"), "c": (13, "raw")}
RAGGED = {"r": (25, "zstd"), "s": (6, "raw")}


def rows_of(name, n):
    return (1000 * (ord(name) - 96) + np.arange(n * 12)).astype(
        "<i4").reshape(n, 3, 4)


def ragged_of(name, n):
    return [np.full((i % 4 + 1, 3), 100 * (ord(name) - 96) + i, "<f4")
            for i in range(n)]


def write_mix(src, name, sources, schedule=None):
    doc = {"sources": [{"path": p, "weight": w} for p, w in sources]}
    if schedule:
        doc["schedule"] = [{"from": f, "weights": w} for f, w in schedule]
    with open(os.path.join(src, name + ".mix.json"), "w") as f:
        json.dump(doc, f)


@pytest.fixture
def stores(src):
    for name, (n, codec) in ROWS.items():
        make_store(os.path.join(src, name), "<i4", shape=(3, 4),
                   codec=codec, rows=rows_of(name, n))
    for name, (n, codec) in RAGGED.items():
        make_store(os.path.join(src, name), "<f4", ragged=True,
                   codec=codec, records=ragged_of(name, n))
    write_mix(src, "dense", [("a", 5), ("b", 2), ("c", 3)],
              [(20, [1, 1, 1])])
    write_mix(src, "rag", [("r", 3), ("s", 1)])
    return src


def served(m, mix, *parts):
    with open(m.path(mix + ".mix", "batch", *parts), "rb") as f:
        return f.read()


def cli(src, mix, tmp_path, *args):
    out = tmp_path / "cli.out"
    zrecord("batch", os.path.join(src, mix + ".mix.json"), *args,
            "-o", out)
    return out.read_bytes()


def npy(data):
    import io
    return np.load(io.BytesIO(data))


# (MODE/B folder parts, the flags of the same batch); the mode is unused:
# a mixture's sources cycle through their own permutations.
FOLDERS = [((), ("--batch-size", 256)),
           (("cyclic", "8"), ("--batch-size", 8)),
           (("iid", "5"), ("--batch-size", 5)),
           (("sequential", "64"), ("--batch-size", 64))]


def test_dense_batches_are_the_commands(stores, mount, tmp_path):
    m = mount(stores, "ro")
    assert sorted(os.listdir(m.path("dense.mix"))) == ["batch", "errors",
                                                       "stats"]
    assert sorted(os.listdir(m.path("dense.mix", "batch"))) == [
        "cyclic", "iid", "sequential"]
    for parts, flags in FOLDERS:
        for seed, step in ((0, 0), (3, 1), (7, 4)):
            name = "%d-%d" % (seed, step)
            args = ("--seed", seed, "--step", step) + flags
            rows = served(m, "dense", *parts, name + ".npy")
            assert rows == cli(stores, "dense", tmp_path, *args)
            pairs = served(m, "dense", *parts, name + ".indices.npy")
            assert pairs == cli(stores, "dense", tmp_path, *args,
                                "--indices")
            got, p = npy(rows), npy(pairs)
            assert p.dtype == np.int64 and p.shape == (len(got), 2)
            src_names = "abc"
            want = [rows_of(src_names[s], ROWS[src_names[s]][0])[i]
                    for s, i in p.tolist()]
            assert np.array_equal(got, np.stack(want))
    # a store's forms only: no .npz of a dense mixture, no bad names
    for bad in ("1-2.npz", "1-2.packed.npz", "1-2", "x-2.npy"):
        assert not os.path.exists(m.path("dense.mix", "batch", bad))


def test_ragged_forms_are_the_commands(stores, mount, tmp_path):
    m = mount(stores, "ro")
    for parts, flags in FOLDERS[:2]:
        for seed, step in ((1, 0), (4, 3)):
            args = ("--seed", seed, "--step", step) + flags
            name = "%d-%d" % (seed, step)
            z = served(m, "rag", *parts, name + ".npz")
            assert z == cli(stores, "rag", tmp_path, *args)
            for form in ("packed.npz", "padded.npz", "packed.npy",
                         "offsets.npy", "shapes.npy", "padded.npy",
                         "lengths.npy"):
                assert served(m, "rag", *parts, name + "." + form) == \
                    cli(stores, "rag", tmp_path, *args, "--form", form)
            p = npy(served(m, "rag", *parts, name + ".indices.npy"))
            with np.load(m.path("rag.mix", "batch", *parts,
                                name + ".npz")) as f:
                for k, (s, i) in enumerate(p.tolist()):
                    src = "rs"[s]
                    assert np.array_equal(f["arr_%d" % k],
                                          ragged_of(src, RAGGED[src][0])[i])
    assert not os.path.exists(m.path("rag.mix", "batch", "1-0.npy"))


@pytest.fixture
def datasets(src):
    """Two aligned dataset folders of a dense x and a ragged y, and one
    with other fields."""
    for d, n in (("d0", 30), ("d1", 11)):
        make_store(os.path.join(src, d, "x"), "<i4", shape=(2,),
                   rows=(100 * int(d[1]) + np.arange(2 * n)).astype(
                       "<i4").reshape(n, 2))
        make_store(os.path.join(src, d, "y"), "<i4", ragged=True,
                   codec="zstd", records=[
                       np.full(i % 4 + 1, 100 * int(d[1]) + i, "<i4")
                       for i in range(n)])
    make_store(os.path.join(src, "other", "z"), "<i4", shape=(2,),
               rows=np.zeros((5, 2), "<i4"))
    write_mix(src, "ds", [("d0", 3), ("d1", 1)])
    write_mix(src, "odd", [("d0", 1), ("other", 1)])
    return src


def test_dataset_sources_are_the_commands_and_loaderx(datasets, mount,
                                                      tmp_path):
    # here, not at the top: a TSan-built libzrecord cannot load into
    # CPython
    from loaderx import Mixture, MixtureSampler
    m = mount(datasets, "ro", "start=5")
    with Mixture(os.path.join(datasets, "ds.mix.json")) as mix:
        for step in range(4):
            args = ("--seed", 3, "--step", step, "--batch-size", 8,
                    "--start", 5)
            z = served(m, "ds", "cyclic", "8", "3-%d.npz" % step)
            assert z == cli(datasets, "ds", tmp_path, *args)
            s = MixtureSampler(mix.lengths, mix.weights, 8, seed=3, start=5)
            src, idx = s.batch(step)
            pairs = npy(served(m, "ds", "cyclic", "8",
                               "3-%d.indices.npy" % step))
            assert pairs.tolist() == np.stack([src, idx], 1).tolist()
            want = mix.gather(src, idx)
            with np.load(m.path("ds.mix", "batch", "cyclic", "8",
                                "3-%d.npz" % step)) as f:
                assert sorted(f.files) == sorted(["x"] + [
                    "y/%d" % k for k in range(8)])
                assert np.array_equal(f["x"], want["x"])
                for k in range(8):
                    assert np.array_equal(f["y/%d" % k], want["y"][k])
    # sources of other fields: only the pairs
    odd = m.path("odd.mix", "batch", "2-0")
    assert not os.path.exists(odd + ".npz")
    assert npy(served(m, "odd", "2-0.indices.npy")).tolist() == npy(cli(
        datasets, "odd", tmp_path, "--seed", 2, "--step", 0, "--start", 5,
        "--indices")).tolist()
    with open(m.path("odd.mix", "errors")) as f:
        assert "sources need the same fields" in f.read()


def test_rank_world_and_start(stores, mount, tmp_path):
    for rank in range(2):
        m = mount(stores, "ro", "world=2", "rank=%d" % rank, "start=12",
                  "batch_size=6", name="mnt%d" % rank)
        for step in range(3):
            args = ("--seed", 9, "--step", step, "--batch-size", 6,
                    "--world", 2, "--rank", rank, "--start", 12)
            assert served(m, "dense", "9-%d.npy" % step) == cli(
                stores, "dense", tmp_path, *args)
            assert served(m, "rag", "9-%d.npz" % step) == cli(
                stores, "rag", tmp_path, *args)
        m.stop()


def test_stats(stores, mount):
    m = mount(stores, "ro")
    with open(m.path("dense.mix", "stats")) as f:
        st = json.load(f)
    assert st["mixture"] == "dense.mix.json" and st["fields"] is None
    assert [(s["path"], s["records"], s["weight"]) for s in st["sources"]] \
        == [("a", 40, 5), ("b", 7, 2), ("c", 13, 3)]
    assert [s["share"] for s in st["sources"]] == [0.5, 0.2, 0.3]
    # a source serves each record once every records / share positions
    assert [s["positions_per_cycle"] for s in st["sources"]] == [80, 35, 44]
    assert st["schedule"] == [{"from": 20, "weights": [1, 1, 1]}]
    with open(m.path("dense.mix", "errors")) as f:
        assert f.read() == ""


def test_stats_are_the_commands(datasets, stores, mount):
    """`zrecord stats NAME.mix.json`, run from SRC, prints the bytes of
    the mount's NAME.mix/stats: stores and dataset folders, records and
    indices only, a file in a subfolder; and fields of other names serve
    only the pairs, on the mount as in the command."""
    import subprocess
    from fsutil import ZRECORD
    make_store(os.path.join(stores, "xz", "x"), "<i4", shape=(2,),
               rows=np.zeros((4, 2), "<i4"))
    make_store(os.path.join(stores, "xz", "z"), "<i4", ragged=True,
               records=[np.zeros(1, "<i4")] * 4)
    write_mix(stores, "named", [("d0", 1), ("xz", 1)])
    os.mkdir(os.path.join(stores, "sub"))
    write_mix(os.path.join(stores, "sub"), "up", [("../a", 1),
                                                  ("../c", 4)])
    m = mount(stores, "ro")
    for name in ("dense", "rag", "ds", "odd", "named", "sub/up"):
        r = subprocess.run([ZRECORD, "stats", name + ".mix.json"],
                           cwd=stores, capture_output=True, check=True)
        with open(m.path(name + ".mix", "stats"), "rb") as f:
            assert r.stdout == f.read(), name
    with open(m.path("named.mix", "stats")) as f:
        assert json.load(f)["batch_files"] == "indices only"
    with open(m.path("named.mix", "errors")) as f:
        assert "has a field z where source 0 has y" in f.read()
    assert not os.path.exists(m.path("named.mix", "batch", "1-0.npz"))


def test_unserved_sources_leave_only_errors(stores, mount, tmp_path):
    outside = str(tmp_path / "outside")
    make_store(outside, "<i4", shape=(3, 4), rows=rows_of("a", 3))
    write_mix(stores, "missing", [("a", 1), ("nope", 1)])
    write_mix(stores, "escape", [("a", 1), (outside, 1)])
    write_mix(stores, "file", [("a", 1), ("dense.mix.json", 1)])
    write_mix(stores, "url", [("a", 1), ("s3://bucket/stores/a", 1)])
    os.mkdir(os.path.join(stores, "empty"))
    write_mix(stores, "empty", [("empty", 1)])
    with open(os.path.join(stores, "broken.mix.json"), "w") as f:
        f.write('{"sources": [{"path": "a"}]}')
    write_mix(stores, "zero", [("a", 0), ("b", 0)])
    write_mix(stores, "zerolater", [("a", 1)], [(5, [0])])
    m = mount(stores, "ro")
    for name, msg in (("missing", "nope: No such file or directory"),
                      ("escape", "is outside this mount's SRC"),
                      ("file", "dense.mix.json is not served by this mount"),
                      ("url", "s3://bucket/stores/a is a URL: a mount serves "
                       "the stores under its SRC only"),
                      ("empty", "neither a store nor a folder of stores"),
                      ("broken", "needs a path and a weight"),
                      ("zero", "every weight is 0"),
                      ("zerolater", "schedule entry 0: every weight is 0")):
        assert os.listdir(m.path(name + ".mix")) == ["errors"]
        with open(m.path(name + ".mix", "errors")) as f:
            text = f.read()
        assert "not served" in text and msg in text, text
    # the rest of the mount is up
    assert served(m, "dense", "1-1.npy")
    assert os.path.exists(m.path("a", "records", "0.npy"))
    m.stop()
    assert "missing.mix.json: not served: source 1" in m.stderr


def test_a_grown_source_is_drawn_at_its_new_length(stores, mount, tmp_path):
    """A read-write mount: a lookup after an append draws over the new
    length (as the command does over the grown store), and a file looked
    up before keeps the batch of the lengths its lookup saw."""
    import io
    m = mount(stores, "batch_size=16")
    steps = range(6)
    held = open(m.path("dense.mix", "batch", "2-5.npy"), "rb")
    before = [served(m, "dense", "2-%d.npy" % t) for t in steps]
    buf = io.BytesIO()
    np.save(buf, rows_of("b", 10)[7:])
    with open(m.path("b", "append"), "wb") as f:
        f.write(buf.getvalue())
    after = [served(m, "dense", "2-%d.npy" % t) for t in steps]
    assert held.read() == before[5]
    held.close()
    m.stop()
    for t in steps:
        args = ("--seed", 2, "--step", t, "--batch-size", 16)
        assert before[t] == cli(stores, "dense", tmp_path, *args,
                                "--length", "40,7,13")
        assert after[t] == cli(stores, "dense", tmp_path, *args)
    assert before != after


def test_a_file_keeps_its_lengths_past_many_lookups(stores, mount,
                                                   tmp_path):
    """A file looked up before its source grew 70 times, each growth
    followed by the lookup of another name, still reads the batch of the
    lengths its own lookup saw: the node keeps them, no table of recent
    lookups that could push them out."""
    import io
    m = mount(stores, "batch_size=16")
    held = open(m.path("dense.mix", "batch", "3-1.npy"), "rb")
    for i in range(70):
        buf = io.BytesIO()
        np.save(buf, rows_of("b", 8 + i)[7 + i:])
        with open(m.path("b", "append"), "wb") as f:
            f.write(buf.getvalue())
        os.stat(m.path("dense.mix", "batch", "4-%d.npy" % i))
    got = held.read()
    held.close()
    m.stop()
    assert got == cli(stores, "dense", tmp_path, "--seed", 3, "--step", 1,
                      "--batch-size", 16, "--length", "40,7,13")


def test_skips_are_the_commands(stores, mount, tmp_path):
    """-o skip=A:B ranges apply to every batch stream as --skip does: a
    store's, a ragged store's and a mixture's (merged with its weight
    schedule in position order)."""
    skips = ("skip=30:31", "skip=10:14", "skip=20:26")
    flags = ("--skip", "30:31", "--skip", "10:14", "--skip", "20:26",
             "--start", 3)
    # a store's cyclic stream resumed at 3 names its granule; a mixture's
    # sources have none (the mount's applies to its stores)
    m = mount(stores, "ro", "start=3@8", *skips)
    for step in range(5):
        args = ("--seed", 6, "--step", step, "--batch-size", 8) + flags
        for store in ("a", "r"):
            out = tmp_path / "plain.out"
            zrecord("batch", os.path.join(stores, store), *args,
                    "--granule", 8, "--mode", "cyclic", "-o", out)
            ext = "npy" if store == "a" else "npz"
            with open(m.path(store, "batch", "cyclic", "8",
                             "6-%d.%s" % (step, ext)), "rb") as f:
                assert f.read() == out.read_bytes(), (store, step)
        for mix, ext in (("dense", "npy"), ("rag", "npz")):
            assert served(m, mix, "cyclic", "8", "6-%d.%s" % (step, ext)) \
                == cli(stores, mix, tmp_path, *args)
    m.stop()
    for bad in ("5:5", "7:3", "x:9", "9", "1:2:3"):
        with pytest.raises(AssertionError, match="skip=A:B"):
            mount(stores, "ro", "skip=" + bad, name="bad")


def test_batches_read_by_many_processes_at_once(stores, mount, tmp_path):
    """`xargs -P8 md5sum` over 48 mixture batch files of both mixtures
    (each file's lookup, plan and pieces racing the others' on the same
    stores and lengths): every file is the command's bytes."""
    import hashlib
    import subprocess
    m = mount(stores, "ro")
    forms = (("dense", "npy", ()), ("dense", "indices.npy", ("--indices",)),
             ("rag", "npz", ()), ("rag", "packed.npy",
                                  ("--form", "packed.npy")))
    want = {}
    for t in range(6):
        for s in range(2):
            for mix, ext, flags in forms:
                name = "%s.mix/batch/cyclic/8/%d-%d.%s" % (mix, s, t, ext)
                want[name] = hashlib.md5(cli(
                    stores, mix, tmp_path, "--seed", s, "--step", t,
                    "--batch-size", 8, *flags)).hexdigest()
    r = subprocess.run("xargs -P8 -n3 md5sum", shell=True, cwd=m.mnt,
                       input="\n".join(want).encode(), capture_output=True,
                       check=True)
    got = dict(reversed(line.split()) for line in r.stdout.decode()
               .splitlines())
    assert got == want


def test_sources_of_other_field_counts_draw_as_the_mount(src, mount,
                                                         tmp_path):
    """Sources of different numbers of fields serve only the pairs; a
    source's length is its shortest field among the first as many as
    source 0 has (one of fewer repeats its last), in the mount's
    .indices.npy and stats and in `zrecord batch --indices` and `zrecord
    stats` alike -- also when its fields hold different counts."""
    import subprocess
    from fsutil import ZRECORD
    for name, n in (("x", 30), ("y", 12)):
        make_store(os.path.join(src, "uneven", name), "<i4", shape=(2,),
                   rows=np.zeros((n, 2), "<i4"))
    make_store(os.path.join(src, "other", "z"), "<i4", shape=(2,),
               rows=np.zeros((5, 2), "<i4"))
    write_mix(src, "uo", [("uneven", 1), ("other", 1)])
    write_mix(src, "ou", [("other", 1), ("uneven", 1)])
    m = mount(src, "ro")
    for name, want in (("uo", [12, 5]), ("ou", [5, 30])):
        with open(m.path(name + ".mix", "stats"), "rb") as f:
            stats = f.read()
        assert [s["records"] for s in json.loads(stats)["sources"]] == want
        r = subprocess.run([ZRECORD, "stats", name + ".mix.json"],
                           cwd=src, capture_output=True, check=True)
        assert r.stdout == stats, name
        top = []
        for step in range(6):
            pairs = npy(served(m, name, "sequential", "64",
                               "4-%d.indices.npy" % step))
            assert pairs.tolist() == npy(cli(
                src, name, tmp_path, "--seed", 4, "--step", step,
                "--batch-size", 64, "--indices")).tolist()
            top += [pairs[pairs[:, 0] == s, 1].max(initial=-1)
                    for s in range(2)]
        # every source is drawn over exactly its length
        assert [max(top[s::2]) for s in range(2)] == [w - 1 for w in want]
