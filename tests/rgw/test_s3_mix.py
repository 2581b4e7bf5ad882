"""Mixture files whose sources are s3:// URLs: `zrecord batch` and `zrecord
stats` over MIX.mix.json read an uploaded store where it lies, byte for
byte what they read when the same source is the local folder, beside a
local source; a URL with no store behind it is refused, naming the
source and the URL."""
import io
import json

import numpy as np


def _mix(path, sources):
    path.write_text(json.dumps({"sources": [
        {"path": str(p), "weight": w} for p, w in sources]}))
    return path


def test_batch_and_stats_over_a_url_source(zr, uploaded, stores, tmp_path):
    local_z, url_z, _ = uploaded["dense_zstd"]
    local_r, _ = stores["dense_raw"]
    here = _mix(tmp_path / "here.mix.json", [(local_z, 3), (local_r, 1)])
    there = _mix(tmp_path / "there.mix.json", [(url_z, 3), (local_r, 1)])
    for step in range(4):
        for extra in ((), ("--indices",)):
            args = ("--seed", "5", "--step", str(step), "--batch-size", "8",
                    *extra, "-o", "-")
            want = zr.ok("batch", here, *args)
            got = zr.ok("batch", there, *args)
            assert got == want and len(got) > 128
    # the pairs name both sources: the URL's records were read
    pairs = np.load(io.BytesIO(zr.ok(
        "batch", there, "--seed", "5", "--step", "0", "--batch-size", "8",
        "--indices", "-o", "-")))
    assert set(pairs[:, 0].tolist()) == {0, 1}
    want = json.loads(zr.ok("stats", here))
    got = json.loads(zr.ok("stats", there))
    assert got["sources"][0]["path"] == url_z
    for w, g in zip(want["sources"], got["sources"]):
        assert (g["records"], g["weight"], g["share"]) == \
            (w["records"], w["weight"], w["share"])


def test_a_url_with_no_store_is_refused(zr, engine, stores, tmp_path):
    local_r, _ = stores["dense_raw"]
    url = engine.url("no/such/store")
    m = _mix(tmp_path / "m.mix.json", [(local_r, 1), (url, 1)])
    r = zr.run("batch", m, "--seed", "1", "--step", "0", "-o",
               tmp_path / "out.npy")
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "source 1" in err and url in err and "no store" in err, err
    assert not (tmp_path / "out.npy").exists()


def test_loaderx_mixture_with_a_url_source(uploaded, stores, tmp_path):
    """loaderx's Mixture takes the URL as zrecord does: the same batches
    as over the local folder."""
    from loaderx import DataLoader, Mixture
    local_z, url_z, _ = uploaded["dense_zstd"]
    local_r, _ = stores["dense_raw"]
    got = {}
    for name, first in (("here", local_z), ("there", url_z)):
        path = _mix(tmp_path / (name + ".mix.json"),
                    [(first, 3), (local_r, 1)])
        with Mixture(str(path)) as mix:
            assert mix.lengths == [40, 40]
            loader = DataLoader(mix, batch_size=8, seed=5)
            got[name] = [next(loader)["data"] for _ in range(4)]
            loader.close()
    for a, b in zip(got["here"], got["there"]):
        assert a.shape == (8, 3, 5) and np.array_equal(a, b)
