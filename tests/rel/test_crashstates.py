"""Power cuts, explored (crashstates.py): every workload of crash_workload.c
is traced with its bytes, every disk state a power cut could leave is
rebuilt (each prefix of the calls; any subset of the writes not yet
flushed, torn at 4 KiB and 512-byte sectors) and opened with the library,
which must serve exactly a promised state: never an error, never a wrong
byte.  This is the bounded run; `make crash-explore CRASH_STATES=N` is the
long one."""
import pytest

import crashstates

BUDGET = 1000  # spread over the crash points of one trace


# The journal slot kinds each workload must write (journal.c): a delete's
# undo slot (1), and for compact also the redo slot of its batch (3) and
# the idle slot that ends it (2), so that the states explored include
# those inside the journalled steps.
JOURNAL = {"delete": {1}, "compact": {1, 2, 3}}


def journal_kinds(t):
    """The kinds of the journal slots the workload wrote."""
    return {int.from_bytes(op[3][8:12], "little") for op in t.ops
            if op[0] == "w" and t.created[op[1]] == "maintenance.zr"
            and op[3][:8] == b"ZRMAINT1"}


@pytest.mark.parametrize("workload", crashstates.WORKLOADS)
def test_power_cut(tmp_path, workload):
    traces = []
    states, violations = crashstates.explore(
        crashstates.builddir(), str(tmp_path), workload, BUDGET, seed=1,
        trace=traces)
    print(f"{workload}: {states} crash states, {len(violations)} "
          "violations")
    assert journal_kinds(traces[0]) == JOURNAL.get(workload, set())
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
