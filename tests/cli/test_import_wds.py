"""`zrecord import` of WebDataset tar shards built with Python's tarfile:
samples grouped by key, one store per field, every record compared with
the member it came from, incomplete samples, broken shards."""
import io
import json
import os
import tarfile

import numpy as np

from importdata import icons, pil_array, read_bytes, records, save_as


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def make_samples(n, start=0):
    """n samples: key -> {field: bytes}, images from real icons."""
    ic = icons(start + n, size=48)
    out = []
    for i in range(start, start + n):
        fmt = ["JPEG", "PNG", "WEBP"][i % 3]
        img = save_as(ic[i], fmt, **({"quality": 85} if fmt == "JPEG" else
                                     {"lossless": True} if fmt == "WEBP"
                                     else {}))
        out.append((f"dir{i % 2}/s{i:05d}", {
            "jpg": img,
            "cls": str(i % 7).encode(),
            "txt": f"caption {i}".encode(),
            "json": json.dumps({"i": i}).encode(),
            "feat.npy": npy_bytes(np.arange(i % 5 + 1, dtype="<f4") * i),
        }))
    return out


def write_shard(path, samples, gz=False):
    with tarfile.open(path, "w:gz" if gz else "w") as tar:
        for key, fields in samples:
            for ext in sorted(fields):
                add(tar, f"{key}.{ext}", fields[ext])


def check(zr, dest, samples):
    got = {f: records(zr, dest / f)
           for f in ("jpg", "cls", "txt", "json", "feat.npy")}
    assert sorted(os.listdir(dest)) == sorted(got)
    for f in got:
        assert len(got[f]) == len(samples), f
    for k, (key, fields) in enumerate(samples):
        assert np.array_equal(got["jpg"][k], pil_array(fields["jpg"])), key
        assert got["cls"][k].dtype == np.int64
        assert int(got["cls"][k]) == int(fields["cls"])
        assert got["txt"][k].tobytes() == fields["txt"]
        assert got["json"][k].tobytes() == fields["json"]
        want = np.load(io.BytesIO(fields["feat.npy"]))
        assert got["feat.npy"][k].dtype == want.dtype
        assert np.array_equal(got["feat.npy"][k], want)


def test_shards_in_order(zr, tmp_path):
    a, b = make_samples(7), make_samples(5, start=7)
    write_shard(tmp_path / "shard-0.tar", a)
    write_shard(tmp_path / "shard-1.tar.gz", b, gz=True)
    dest = tmp_path / "ds"
    zr.ok("import", tmp_path / "shard-0.tar", tmp_path / "shard-1.tar.gz",
          dest)
    check(zr, dest, a + b)
    st = zr.stats(dest / "cls")
    assert st["ragged"] is False and st["dtype"] == "<i8"


def test_missing_field_is_an_error_or_dropped(zr, tmp_path):
    samples = make_samples(6)
    del samples[3][1]["txt"]
    write_shard(tmp_path / "s.tar", samples)
    err = zr.fails(1, "import", tmp_path / "s.tar", tmp_path / "ds")
    assert "s00003" in err and "--drop-incomplete drops" in err
    assert not (tmp_path / "ds").exists()
    r = zr.run("import", "--drop-incomplete", tmp_path / "s.tar",
               tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"dropped 1 incomplete sample" in r.stderr
    check(zr, tmp_path / "ds", samples[:3] + samples[4:])


def test_truncated_shard_all_or_nothing(zr, tmp_path):
    good, broken = make_samples(4), make_samples(6, start=4)
    write_shard(tmp_path / "a.tar", good)
    write_shard(tmp_path / "b.tar", broken)
    data = (tmp_path / "b.tar").read_bytes()
    (tmp_path / "b.tar").write_bytes(data[:len(data) // 2 + 100])
    srcs = [tmp_path / "a.tar", tmp_path / "b.tar"]
    err = zr.fails(1, "import", *srcs, tmp_path / "ds")
    assert str(tmp_path / "b.tar") in err
    assert sorted(os.listdir(tmp_path)) == ["a.tar", "b.tar"]
    r = zr.run("import", "--skip-bad", *srcs, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"the rest of this input" in r.stderr
    n = zr.stats(tmp_path / "ds" / "jpg")["records"]
    assert 4 <= n < 10
    check(zr, tmp_path / "ds", (good + broken)[:n])


def test_corrupt_member_and_not_a_tar(zr, tmp_path):
    samples = make_samples(5)
    samples[2][1]["jpg"] = samples[2][1]["jpg"][:200]
    write_shard(tmp_path / "s.tar", samples)
    err = zr.fails(1, "import", tmp_path / "s.tar", tmp_path / "ds")
    assert "dir0/s00002: WebP" in err
    r = zr.run("import", "--skip-bad", tmp_path / "s.tar", tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    check(zr, tmp_path / "ds", samples[:2] + samples[3:])
    (tmp_path / "junk.tar").write_bytes(os.urandom(3000))
    err = zr.fails(1, "import", tmp_path / "junk.tar", tmp_path / "ds2")
    assert "junk.tar" in err
    assert not (tmp_path / "ds2").exists()


def test_cls_must_be_an_integer(zr, tmp_path):
    samples = make_samples(3)
    samples[1][1]["cls"] = b"seven"
    write_shard(tmp_path / "s.tar", samples)
    err = zr.fails(1, "import", tmp_path / "s.tar", tmp_path / "ds")
    assert "s00001" in err and "decimal integer" in err


def test_encoded_members_are_bytes(zr, tmp_path):
    samples = make_samples(4)
    write_shard(tmp_path / "s.tar", samples)
    zr.ok("import", "--encoded", tmp_path / "s.tar", tmp_path / "ds")
    got = records(zr, tmp_path / "ds" / "jpg")
    assert [g.tobytes() for g in got] == [f["jpg"] for _, f in samples]


def test_deterministic(zr, tmp_path):
    write_shard(tmp_path / "s.tar", make_samples(9))
    for d in ("x", "y"):
        zr.ok("import", "--threads", "2", tmp_path / "s.tar", tmp_path / d)
    for f in os.listdir(tmp_path / "x"):
        for part in ("meta.zr", "data.zr"):
            assert read_bytes(tmp_path / "x" / f / part) == \
                read_bytes(tmp_path / "y" / f / part)


def test_webdataset_names(zr, tmp_path):
    """webdataset's rule: fields lower-cased, names without KEY.FIELD and
    top-level __meta__ members skipped."""
    samples = make_samples(3)
    with tarfile.open(tmp_path / "s.tar", "w") as tar:
        add(tar, "__index__", b"meta")
        add(tar, "README", b"not a sample")
        for key, fields in samples:
            for ext in sorted(fields):
                name = ext.upper() if ext == "jpg" else ext
                add(tar, f"{key}.{name}", fields[ext])
    r = zr.run("import", tmp_path / "s.tar", tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"ignored 2 members" in r.stderr
    check(zr, tmp_path / "ds", samples)


def test_tar_cut_at_a_member_boundary(zr, tmp_path):
    """libarchive reads a tar cut between members as a shorter archive;
    the missing end-of-archive blocks give the cut away."""
    samples = make_samples(4)
    write_shard(tmp_path / "s.tar", samples)
    data = (tmp_path / "s.tar").read_bytes()
    # each member: one header block and its data rounded up to blocks
    with tarfile.open(tmp_path / "s.tar") as t:
        members = t.getmembers()
    cut = members[10].offset  # the first member of the third sample
    (tmp_path / "s.tar").write_bytes(data[:cut])
    err = zr.fails(1, "import", tmp_path / "s.tar", tmp_path / "ds")
    assert "cut short" in err
    assert sorted(os.listdir(tmp_path)) == ["s.tar"]
