"""zrecord get and batch of an encoded-image store with --decode and
--augment: an imported folder decoded as PIL decodes it, the same bytes
as loaderx's gather for the same (seed, position), the batch's records
those `--indices` names, and records that do not decode named with the
store and the index."""
import io
import os
import sys

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "../.."),
                                "contrib", "python"))
sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "../.."),
                                "contrib", "python", "tests"))

from imagedata import kinds, pil_rgb, photo, save  # noqa: E402


def _npy(data):
    return np.load(io.BytesIO(data))


def _folder(tmp_path, n=12):
    src = tmp_path / "src" / "cls"
    src.mkdir(parents=True)
    files = []
    for i in range(n):
        data = save(photo(90 + 7 * i, 120 + 5 * i, i), "JPEG", quality=90)
        (src / ("%02d.jpg" % i)).write_bytes(data)
        files.append(data)
    return tmp_path / "src", files


def test_get_decode_whole_and_sized(zr, tmp_path):
    files = kinds()
    store = tmp_path / "s"
    import loaderx
    st = loaderx.RaggedStore.create(str(store), np.uint8, images=True)
    st.append([np.frombuffer(f, np.uint8) for f in files.values()])
    st.close()
    for i, data in enumerate(files.values()):
        got = _npy(zr.ok("get", store, i, "--decode"))
        assert np.array_equal(got, pil_rgb(data)), i
    got = _npy(zr.ok("get", store, 0, 3, 5, "--decode=32"))
    assert got.shape == (3, 32, 32, 3) and got.dtype == np.uint8
    # without --decode a record is still its file's bytes
    assert _npy(zr.ok("get", store, 0)).tobytes() == list(files.values())[0]


def test_batch_augment_is_loaderx_gather(zr, tmp_path):
    src, files = _folder(tmp_path)
    ds = tmp_path / "ds"
    zr.ok("import", "--encoded", src, ds)
    store = ds / "image"
    args = ("--seed", 5, "--step", 3, "--batch-size", 4)
    idx = _npy(zr.ok("batch", store, *args, "--indices"))
    got = _npy(zr.ok("batch", store, *args, "--augment", "rrc,flip"))
    assert got.shape == (4, 224, 224, 3)
    import loaderx
    st = loaderx.RaggedStore.open(str(store), readonly=True)
    want = st.gather(idx, augment="rrc,flip", seed=5, position=3 * 4)
    assert np.array_equal(got, want)
    ev = _npy(zr.ok("batch", store, *args, "--decode=64"))
    assert np.array_equal(ev, st.gather(idx, decode=64))
    # rank 1 of 2 starts at position (3 * 2 + 1) * 4
    r1 = _npy(zr.ok("batch", store, *args, "--rank", 1, "--world", 2,
                    "--augment", "rrc:0.5:1", "--start", "10@8"))
    i1 = _npy(zr.ok("batch", store, *args, "--rank", 1, "--world", 2,
                    "--indices", "--start", "10@8"))
    assert np.array_equal(r1, st.gather(i1, augment="rrc:0.5:1", seed=5,
                                        position=10 + 7 * 4))
    st.close()


def test_get_augment_positions(zr, tmp_path):
    src, files = _folder(tmp_path, 4)
    zr.ok("import", "--encoded", src, tmp_path / "ds")
    store = tmp_path / "ds" / "image"
    all4 = _npy(zr.ok("get", store, 0, 1, 2, 3, "--augment", "rrc,flip",
                      "--seed", 9, "--position", 100))
    one = _npy(zr.ok("get", store, 2, "--augment", "rrc,flip", "--seed", 9,
                     "--position", 102))
    assert np.array_equal(all4[2], one)


def test_refusals_and_bad_records(zr, tmp_path):
    src, files = _folder(tmp_path, 2)
    (src / "cls" / "zz.jpg").write_bytes(files[0][:len(files[0]) // 3])
    zr.ok("import", "--encoded", src, tmp_path / "ds")
    store = tmp_path / "ds" / "image"
    err = zr.fails(1, "get", store, 2, "--decode=32")
    assert str(store) in err and "record 2" in err and "JPEG" in err, err
    err = zr.fails(1, "batch", store, "--seed", 1, "--step", 0,
                   "--batch-size", 3, "--mode", "sequential",
                   "--decode=16")
    assert "record 2" in err, err
    assert "rrc" in zr.fails(2, "get", store, 0, "--augment",
                             "rotate")
    assert "one record at a time" in zr.fails(
        1, "get", store, 0, 1, "--decode")
    assert "no --form or --indices" in zr.fails(2, "batch", store, "--seed", 1, "--step",
                                 0, "--decode=8", "--indices")
    # a store that is not marked
    label = tmp_path / "ds" / "label"
    assert "content.zr" in zr.fails(1, "get", label, 0,
                                    "--decode")


def test_dataloader_steps_are_cli_batches(zr, tmp_path):
    src, files = _folder(tmp_path, 10)
    ds = tmp_path / "ds"
    zr.ok("import", "--encoded", src, ds)
    import loaderx
    img = loaderx.RaggedStore.open(str(ds / "image"), readonly=True)
    lab = loaderx.DenseStore.open(str(ds / "label"), readonly=True)
    dl = loaderx.DataLoader({"image": img, "label": lab}, batch_size=4,
                            seed=21, start_step=2, augment="rrc,flip",
                            workers=2)
    for step in (2, 3, 4):
        batch = next(dl)
        cli = _npy(zr.ok("batch", ds / "image", "--seed", 21, "--step",
                         step, "--batch-size", 4, "--augment", "rrc,flip"))
        assert batch["image"].shape == (4, 224, 224, 3)
        assert np.array_equal(batch["image"], cli), step
        assert batch["label"].shape == (4,)
    dl.close()
    with pytest.raises(ValueError):
        loaderx.DataLoader({"image": img}, augment="spin")
    img.close()
    lab.close()
