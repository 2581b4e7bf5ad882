"""zrecord create, stats and schema."""
import json

import pytest


def test_dense_store_reports_its_schema(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<f4", "--shape", "3,224,224")
    st = zr.stats(store)
    # the keys in the order a mount's stats file has them (statsjson.h)
    assert list(st.items()) == [
        ("records", 0), ("live_bytes", 0), ("data_bytes", 0),
        ("reclaimable", 0), ("codec", "raw"), ("ragged", False),
        ("dtype", "<f4"), ("item_shape", [3, 224, 224])]
    assert json.loads(zr.ok("schema", store)) == {
        "dtype": "<f4", "item_shape": [3, 224, 224]}


def test_empty_shape_makes_scalar_records(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "int64", "--shape=")
    assert zr.stats(store)["item_shape"] == []
    assert json.loads(zr.ok("schema", store)) == {
        "dtype": "<i8", "item_shape": []}


def test_ragged_store(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "|u1", "--ragged", "--codec", "zstd")
    st = zr.stats(store)
    assert list(st) == ["records", "live_bytes", "data_bytes", "reclaimable",
                        "codec", "ragged", "dtype"]
    assert st["ragged"] is True
    assert st["codec"] == "zstd" and st["dtype"] == "|u1"
    assert json.loads(zr.ok("schema", store)) == {"dtype": "|u1"}


@pytest.mark.parametrize("name,want", [("float32", "<f4"), (">i2", ">i2"),
                                       ("bool", "|b1"),
                                       ("complex128", "<c16")])
def test_dtype_spellings(zr, tmp_path, name, want):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", name, "--shape", "2")
    assert zr.stats(store)["dtype"] == want


def test_create_on_existing_path_fails(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<f4", "--shape", "2")
    err = zr.fails(1, "create", store, "--dtype", "<i8", "--ragged")
    assert err.startswith(f"zrecord: {store}: create: ")
    assert "exists" in err
    assert zr.stats(store)["dtype"] == "<f4"


@pytest.mark.parametrize("args", [
    ["--dtype", "object", "--shape", "2"],
    ["--dtype", "<f4"],
    ["--dtype", "<f4", "--shape", "2", "--ragged"],
    ["--dtype", "<f4", "--shape", "0,3"],
    ["--dtype", "<f4", "--shape", "3,,4"],
    ["--dtype", "<f4", "--shape", "3,x"],
    ["--shape", "3"],
    ["--dtype", "<f4", "--ragged", "--codec", "lz4"],
    ["--dtype", "<f4", "--ragged", "--codec", "zstd_dict"],
    ["--dtype", "<f4", "--ragged", "--bogus"],
])
def test_bad_create_lines_are_usage_errors(zr, tmp_path, args):
    store = tmp_path / "s"
    err = zr.fails(2, "create", store, *args)
    assert "zrecord create" in err
    assert not store.exists()


def test_stats_of_missing_store(zr, tmp_path):
    err = zr.fails(1, "stats", tmp_path / "nope")
    assert err.startswith(f"zrecord: {tmp_path / 'nope'}: stats: ")
    assert "no store" in err
