"""What an open file serves: an open record file keeps one record's bytes,
whole, across the deletes and compacts that change what its name shows; an
open batch file keeps its size and bytes across appends; getattr of an open
file answers from the handle; a new open shows the new content."""
import errno
import io
import os

import numpy as np
import pytest

from fsutil import make_store

ROW = (64, 64)          # 16 KiB rows: a record spans several reads


def rows(first, n):
    return np.stack([np.full(ROW, i, dtype="<i4") for i in range(first,
                                                                  first + n)])


def dense(src, n=20):
    make_store(os.path.join(src, "s"), "<i4", shape=ROW, codec="zstd",
               rows=rows(0, n))


def test_record_read_across_delete_is_whole(src, mount):
    """Reading half of records/10.npy, deleting 10 (the last record moves
    into it) and reading the rest gives the old record 10 exactly."""
    dense(src)
    m = mount(src)
    path = m.path("s", "records", "10.npy")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(4096)
        with open(m.path("s", "delete"), "w") as d:
            d.write("10\n")
        assert os.fstat(f.fileno()).st_size == size
        rest = f.read()
        f.seek(0)
        again = f.read()
    old = np.load(io.BytesIO(head + rest))
    assert (old == 10).all() and again == head + rest
    # a new open shows the record that moved in
    assert (np.load(path) == 19).all()
    assert os.stat(path).st_ino != os.stat(m.path("s", "records",
                                                  "0.npy")).st_ino


def test_record_open_across_delete_of_the_end(src, mount):
    """An open file of the last record keeps serving it after a delete
    removes its name; the name is then gone."""
    dense(src, 5)
    m = mount(src)
    path = m.path("s", "records", "4.npy")
    with open(path, "rb") as f:
        f.read(100)
        with open(m.path("s", "delete"), "w") as d:
            d.write("4\n")
        f.seek(0)
        assert (np.load(f) == 4).all()
    assert not os.path.exists(path)


def test_page_cache_after_delete(src, mount):
    """Pages cached for a record name before a delete never show through
    after it: read a record in full (cached), delete it, read by name."""
    dense(src, 8)
    m = mount(src)
    for i in range(8):
        assert (np.load(m.path("s", "records", "%d.npy" % i)) == i).all()
    with open(m.path("s", "delete"), "w") as d:
        d.write("2 5\n")
    got = [int(np.load(m.path("s", "records", "%d.npy" % i))[0, 0])
           for i in range(6)]
    # delete takes the highest index first: 7 moves into 5, then 6 into 2
    assert got == [0, 1, 6, 3, 4, 7]


def test_open_batch_keeps_size_and_bytes(src, mount):
    """A ragged batch file opened before an append: fstat, SEEK_END and
    every read stay those of the open; a new open sees the new store."""
    recs = [np.arange(i + 1, dtype="<f4") for i in range(30)]
    make_store(os.path.join(src, "r"), "<f4", ragged=True, codec="zstd",
               records=recs)
    m = mount(src, "batch_size=8")
    path = m.path("r", "batch", "7-0.npz")
    with open(path, "rb") as f:
        first = f.read()
        size = os.fstat(f.fileno()).st_size
        assert size == len(first)
        more = [np.arange(500, dtype="<f4") for _ in range(40)]
        with open(m.path("r", "append"), "wb") as a:
            for r in more:
                np.save(a, r)
        assert os.fstat(f.fileno()).st_size == size
        assert f.seek(0, os.SEEK_END) == size
        f.seek(0)
        assert f.read() == first
    with open(path, "rb") as f:
        now = f.read()
        assert os.fstat(f.fileno()).st_size == len(now)
    assert os.stat(path).st_size == len(now)
    # 70 records now, 40 of them 500 long: the batch has changed
    assert now != first


def test_seek_end_of_open_stats_is_its_text(src, mount):
    """The kernel asks with the handle for SEEK_END (fstat asks by inode,
    and a text file's inode is the current text, as in /proc)."""
    dense(src, 3)
    m = mount(src)
    with open(m.path("s", "stats"), "rb") as f:
        text = f.read()
        with open(m.path("s", "append"), "wb") as a:
            np.save(a, rows(100, 200))
        assert f.seek(0, os.SEEK_END) == len(text)
        f.seek(0)
        assert f.read() == text
    with open(m.path("s", "stats"), "rb") as f:
        assert f.read() != text


def test_unread_open_files_keep_their_records_across_delete(src, mount):
    """Files opened but not yet read (the daemon copies a record at the
    first read the page cache cannot answer) still serve the records of
    their open after a delete changes those indices."""
    dense(src, 40)
    m = mount(src)
    files = {i: open(m.path("s", "records", "%d.npy" % i), "rb")
             for i in (3, 30, 38, 39)}
    with open(m.path("s", "delete"), "w") as d:
        d.write("3 30\n")          # 39 moves into 30, 38 into 3
    for i, f in files.items():
        with f:
            assert (np.load(f) == i).all(), i
    assert (np.load(m.path("s", "records", "3.npy")) == 38).all()
    assert (np.load(m.path("s", "records", "30.npy")) == 39).all()
    assert not os.path.exists(m.path("s", "records", "38.npy"))


def test_compact_refused_while_a_file_opened_before_a_delete_is_unread(
        src, mount):
    """A record file opened before a delete and not read yet serves its
    record through the library's view, whose bytes a compact would move:
    the compact fails with EBUSY, moving nothing, until the file is read;
    a file read in full before the delete does not hold it."""
    dense(src, 20)
    m = mount(src)

    def compact():
        with open(m.path("s", "compact"), "w") as c:
            c.write("1\n")
    unread = open(m.path("s", "records", "5.npy"), "rb")
    done = open(m.path("s", "records", "6.npy"), "rb")
    done.read()
    with open(m.path("s", "delete"), "w") as d:
        d.write("5\n")            # 19 moves into 5
    with pytest.raises(OSError) as e:
        compact()
    assert e.value.errno == errno.EBUSY
    with unread:
        assert (np.load(unread) == 5).all()
    compact()
    with done:
        done.seek(0)
        assert (np.load(done) == 6).all()
    assert (np.load(m.path("s", "records", "5.npy")) == 19).all()

