"""A mount whose endpoint goes away: reads of records and batch files fail
with EIO after the backend's retries, within seconds (no hang), each
naming the object's URL in the store's errors file, and the mount still
unmounts cleanly.  A real mount of the built daemon through
scripts/delay-relay.py, which the test kills."""
import errno
import os
import time

import pytest

# big: the fixture, taken by name
from test_s3_cache import REC, Relay, big, through  # noqa: F401
from test_s3_mount import Mount


def test_a_lost_endpoint_is_eio_and_a_line_in_errors(engine, big, tmp_path):
    _, url, _ = big
    relay = Relay(engine)
    with through(relay):
        m = Mount(url, str(tmp_path / "m"), "batch_size=4,prefetch=0,"
                  "cache=off")
    try:
        assert len(m.read("records", "0.npy")) > REC
        relay.bytes()  # the endpoint is gone from here on
        for f in (("records", "1500.npy"), ("batch", "3-1.npy")):
            t0 = time.monotonic()
            with pytest.raises(OSError) as e:
                m.read(*f)
            assert e.value.errno == errno.EIO
            assert time.monotonic() - t0 < 30
        lines = m.read("errors").decode().splitlines()
        assert len(lines) == 2, lines
        for line, f in zip(lines, ("records/1500.npy", "batch 3-1")):
            assert f in line and url + "/data.zr" in line, line
            assert "Input/output error" in line and "tries" in line
    finally:
        m.stop()
