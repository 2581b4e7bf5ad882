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
