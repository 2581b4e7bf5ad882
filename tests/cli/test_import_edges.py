"""`zrecord import` at the edges a new user meets (issue 32): DEST inside
its SOURCE, the dataset folder's mode, dangling links under --skip-bad,
class names that are not UTF-8, folders of .npy files and missing
sources, a killed import's leftovers, the summaries' wording, and which
source file each record came from."""
import io
import json
import os
import signal
import socket
import stat
import subprocess
import tarfile
import time

import numpy as np
import pytest

from conftest import npy_bytes
from importdata import (class_folder, icons, pil_array, read_bytes,
                        records)


def flat_folder(path, n):
    """path/NNN.png of n real icons; the names in import order."""
    os.makedirs(path)
    names = []
    for i, icon in enumerate(icons(n)):
        name = f"{i:03d}.png"
        with open(os.path.join(path, name), "wb") as f:
            f.write(read_bytes(icon))
        names.append(name)
    return names


def test_dest_inside_class_source(zr, tmp_path):
    """The import's own temporary folder is no class, and the labels and
    classes.json are those of a DEST outside."""
    src = tmp_path / "jpg"
    class_folder(str(src), per_class=2)
    zr.ok("import", src, tmp_path / "outside")
    zr.ok("import", src, src / "ds")
    want = json.loads((tmp_path / "outside" / "classes.json").read_text())
    assert json.loads((src / "ds" / "classes.json").read_text()) == want
    assert np.array_equal(
        np.array(records(zr, src / "ds" / "label")),
        np.array(records(zr, tmp_path / "outside" / "label")))


def test_dest_inside_flat_source(zr, tmp_path):
    src = tmp_path / "flat"
    names = flat_folder(str(src), 3)
    zr.ok("import", src, src / "ds")
    got = records(zr, src / "ds" / "image")
    assert len(got) == len(names)
    for name, img in zip(names, got):
        assert np.array_equal(img, pil_array(read_bytes(src / name)))


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_dataset_folder_mode_follows_umask(zr, tmp_path, mask):
    src = tmp_path / "flat"
    flat_folder(str(src), 2)
    old = os.umask(mask)
    try:
        zr.ok("import", src, tmp_path / "ds")
        os.mkdir(tmp_path / "ref")
    finally:
        os.umask(old)
    got = stat.S_IMODE(os.stat(tmp_path / "ds").st_mode)
    assert got == stat.S_IMODE(os.stat(tmp_path / "ref").st_mode) == \
        0o777 & ~mask


@pytest.mark.parametrize("classed", [False, True])
def test_skip_bad_skips_dangling_symlink(zr, tmp_path, classed):
    src = tmp_path / "src"
    where = src / "cat" if classed else src
    names = flat_folder(str(where), 3)
    os.symlink(tmp_path / "gone.png", where / "001b.png")
    err = zr.fails(1, "import", src, tmp_path / "ds")
    assert "001b.png" in err
    assert not (tmp_path / "ds").exists()
    r = zr.run("import", "--skip-bad", src, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "skipped 1 bad input (--skip-bad)" in err
    assert "001b.png" in err
    got = records(zr, tmp_path / "ds" / "image")
    assert len(got) == len(names)
    for name, img in zip(names, got):
        assert np.array_equal(img, pil_array(read_bytes(where / name)))


def test_classes_json_keeps_non_utf8_names(zr, tmp_path):
    """Bytes that are not UTF-8 are written as \\udcXX escapes: Python's
    json reads them back as surrogateescape does, so os.fsencode gives
    the folder's name again."""
    src = tmp_path / "src"
    os.makedirs(src)
    classes = [b"caf\xe9", "na\u00efve".encode(), b"tab\tq\"uote",
               b"\xed\xa0\x80surrogate", b"\xff\xfe"]
    icon = read_bytes(icons(1)[0])
    for c in classes:
        d = os.path.join(os.fsencode(src), c)
        os.mkdir(d)
        with open(os.path.join(d, b"0.png"), "wb") as f:
            f.write(icon)
    zr.ok("import", src, tmp_path / "ds")
    raw = (tmp_path / "ds" / "classes.json").read_bytes()
    raw.decode("utf-8")  # strict: valid UTF-8 text
    with open(tmp_path / "ds" / "classes.json", encoding="utf-8") as f:
        names = json.load(f)
    assert [os.fsencode(n) for n in names] == sorted(classes)
    assert names[sorted(classes).index("na\u00efve".encode())] == \
        "na\u00efve"
    labels = [int(x) for x in records(zr, tmp_path / "ds" / "label")]
    assert labels == list(range(len(classes)))


def npy_folder(path, arrays):
    os.makedirs(path)
    names = [f"{i:02d}.npy" for i in range(len(arrays))]
    # written out of order: the import sorts by name
    for name, a in reversed(list(zip(names, arrays))):
        with open(os.path.join(path, name), "wb") as f:
            f.write(npy_bytes(a))
    return names


@pytest.mark.parametrize("typed", [False, True])
def test_folder_of_npy_files_rows(zr, tmp_path, typed):
    arrays = [np.arange(6 * i, 6 * i + 6, dtype="<f4").reshape(2, 3)
              for i in range(4)]
    npy_folder(str(tmp_path / "arr"), arrays)
    (tmp_path / "arr" / "notes.txt").write_text("not an array\n")
    args = ["--type", "npy"] if typed else []
    r = zr.run("import", *args, tmp_path / "arr", tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"ignored 1 file that is not .npy" in r.stderr
    got = zr.load("get", tmp_path / "ds" / "data", *range(8))
    assert np.array_equal(got, np.concatenate(arrays))


def test_folder_of_npy_files_per_file(zr, tmp_path):
    arrays = [np.arange(i + 1, dtype="<i4") * i for i in range(5)]
    npy_folder(str(tmp_path / "arr"), arrays)
    zr.ok("import", "--per-file", tmp_path / "arr", tmp_path / "arr" / "ds")
    got = records(zr, tmp_path / "arr" / "ds" / "data")
    assert len(got) == len(arrays)
    for a, b in zip(arrays, got):
        assert np.array_equal(a, b)


def test_missing_source_and_empty_folder(zr, tmp_path):
    err = zr.fails(1, "import", tmp_path / "nothere", tmp_path / "ds")
    assert str(tmp_path / "nothere") in err
    assert "No such file or directory" in err
    os.mkdir(tmp_path / "empty")
    (tmp_path / "empty" / "README").write_text("x\n")
    err = zr.fails(1, "import", tmp_path / "empty", tmp_path / "ds")
    assert "no .jpg, .jpeg, .png or .webp files" in err
    assert "No such file or directory" not in err
    assert not (tmp_path / "ds").exists()


def test_messages_name_no_errno_that_did_not_happen(zr, tmp_path):
    src = tmp_path / "mixed"
    class_folder(str(src), per_class=1)
    (src / "x.png").write_bytes(read_bytes(icons(1)[0]))
    err = zr.fails(1, "import", src, tmp_path / "ds")
    assert "holds both images and class folders" in err
    assert "Invalid argument" not in err


def test_flat_summary_says_is_for_one_file(zr, tmp_path):
    src = tmp_path / "flat"
    flat_folder(str(src), 2)
    (src / "README").write_text("x\n")
    r = zr.run("import", src, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"ignored 1 file that is not .jpg" in r.stderr


def _write_shard(path, members):
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_wds_incomplete_names_field_and_summary_names_option(zr,
                                                             tmp_path):
    members = []
    for i in range(4):
        members.append((f"s{i}.cls", str(i).encode()))
        if i != 2:
            members.append((f"s{i}.txt", f"t{i}".encode()))
    _write_shard(tmp_path / "a.tar", members)
    err = zr.fails(1, "import", tmp_path / "a.tar", tmp_path / "ds")
    assert "s2" in err and "'txt'" in err
    assert "Invalid argument" not in err
    r = zr.run("import", "--drop-incomplete", tmp_path / "a.tar",
               tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "(--drop-incomplete)" in err and "--skip-bad" not in err
    assert "'txt'" in err
    assert [int(x) for x in records(zr, tmp_path / "ds" / "cls")] == \
        [0, 1, 3]


def test_wds_duplicate_key_warns(zr, tmp_path):
    members = []
    for k in ["a", "b", "a", "c"]:
        members += [(f"{k}.cls", b"1"), (f"{k}.txt", k.encode())]
    _write_shard(tmp_path / "a.tar", members)
    r = zr.run("import", tmp_path / "a.tar", tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "warning" in err and "a.tar: a:" in err
    assert "b:" not in err and "c:" not in err
    assert zr.stats(tmp_path / "ds" / "cls")["records"] == 4


def _owner_line(pid, host):
    return f"{pid} {host} 0\n"


def test_stale_temporary_folder_is_removed(zr, tmp_path):
    """A killed import's DEST.tmp-XXXXXX is removed by the next import
    of DEST; another host's and a live import's are left alone."""
    src = tmp_path / "flat"
    flat_folder(str(src), 2)
    # a real import killed while it waits on a FIFO shard
    fifo = tmp_path / "wait.tar"
    os.mkfifo(fifo)
    p = subprocess.Popen([zr.binary, "import", str(fifo),
                          str(tmp_path / "ds")], stderr=subprocess.PIPE)
    deadline = time.time() + 20
    killed = None
    while time.time() < deadline and killed is None:
        for name in os.listdir(tmp_path):
            if name.startswith("ds.tmp-") and \
                    os.path.exists(tmp_path / name / ".zrecord-import"):
                killed = name
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert killed, "the import made no temporary folder with its owner"
    (tmp_path / killed / "big").write_bytes(b"x" * 100000)
    host = socket.gethostname()
    for name, line in [("ds.tmp-AAAAAA", _owner_line(1 << 22, "elsewhere")),
                       ("ds.tmp-BBBBBB", _owner_line(os.getpid(), host))]:
        os.mkdir(tmp_path / name)
        (tmp_path / name / ".zrecord-import").write_text(line)
    r = zr.run("import", src, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert not (tmp_path / killed).exists()
    assert f"removed {tmp_path / killed}" in err
    assert (tmp_path / "ds.tmp-AAAAAA").exists()
    assert (tmp_path / "ds.tmp-BBBBBB").exists()
    assert "ds.tmp-AAAAAA" in err and "elsewhere" in err
    assert sorted(os.listdir(tmp_path / "ds")) == ["files.txt", "image"]


def _unescape(line):
    out, i = bytearray(), 0
    while i < len(line):
        if line[i:i + 1] == b"\\":
            out += {b"n": b"\n", b"\\": b"\\"}[line[i + 1:i + 2]]
            i += 2
        else:
            out += line[i:i + 1]
            i += 1
    return bytes(out)


def test_files_txt_maps_records_to_sources(zr, tmp_path):
    src = tmp_path / "src"
    layout = class_folder(str(src), per_class=2)
    odd = os.path.join(os.fsencode(src), b"dog", b"new\nline\\x.png")
    with open(odd, "wb") as f:
        f.write(read_bytes(icons(1)[0]))
    zr.ok("import", src, tmp_path / "ds")
    lines = (tmp_path / "ds" / "files.txt").read_bytes().split(b"\n")
    assert lines[-1] == b""
    paths = [_unescape(x) for x in lines[:-1]]
    want = sorted([os.path.relpath(p, src).encode()
                   for ps in layout.values() for p in ps] +
                  [b"dog/new\nline\\x.png"])
    assert paths == want
    imgs = records(zr, tmp_path / "ds" / "image")
    assert len(imgs) == len(paths)
    for p, img in zip(paths, imgs):
        full = os.path.join(os.fsencode(src), p)
        assert np.array_equal(img, pil_array(read_bytes(full))), p


def test_files_txt_skips_bad_and_names_several_sources(zr, tmp_path):
    """Under --skip-bad a left-out file has no line (line i stays record
    i); with several SOURCEs each line is the path as opened."""
    a, b = tmp_path / "a", tmp_path / "b"
    names_a = flat_folder(str(a), 3)
    os.makedirs(b)
    (b / "0.png").write_bytes(read_bytes(icons(1)[0]))
    (a / "001.png").write_bytes(b"not a png at all")
    r = zr.run("import", "--skip-bad", a, b, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "ds" / "files.txt").read_bytes().split(b"\n")[:-1]
    want = [f"{a}/{names_a[0]}", f"{a}/{names_a[2]}", f"{b}/0.png"]
    assert lines == [w.encode() for w in want]
    imgs = records(zr, tmp_path / "ds" / "image")
    assert len(imgs) == 3
    for p, img in zip(want, imgs):
        assert np.array_equal(img, pil_array(read_bytes(p))), p
