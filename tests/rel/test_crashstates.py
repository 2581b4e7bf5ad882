"""Power cuts, explored (crashstates.py): every workload of crash_workload.c
is traced with its bytes, every disk state a power cut could leave is
rebuilt (each prefix of the calls; any subset of the writes not yet
flushed, torn at 4 KiB and 512-byte sectors) and opened with the library,
which must serve exactly a promised state: never an error, never a wrong
byte.  This is the bounded run; `make crash-explore CRASH_STATES=N` is the
long one."""
import pytest

import crashstates

BUDGET = 400   # spread over the crash points of one trace


@pytest.mark.parametrize("workload", ["append", "many", "dict"])
def test_power_cut(tmp_path, workload):
    states, violations = crashstates.explore(
        crashstates.builddir(), str(tmp_path), workload, BUDGET, seed=1)
    print(f"{workload}: {states} crash states, {len(violations)} "
          "violations")
    assert states >= 50, states
    assert violations == [], violations[:5]


def test_explorer_sees_a_lost_table(tmp_path):
    """The check can fail: with the record table's flushes taken out of
    the trace, some state has a header covering entries that never
    reached the disk, and the explorer must report it."""
    builddir = crashstates.builddir()
    t = crashstates.record(builddir, str(tmp_path), "append")
    meta = t.live["meta.zr"]
    t.ops = [op for op in t.ops if op != ("f", meta)]
    (tmp_path / "states").mkdir()
    states, violations = crashstates.Explorer(
        builddir, str(tmp_path / "states"), t, BUDGET, seed=1).run()
    assert states > 0
    assert violations, "no violation found in a trace without flushes"
