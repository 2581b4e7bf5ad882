"""Power cuts through the mount (crashmount.py, crashstates.py): the
daemon's writes for a cp into append, sync, delete, compact and the
unmount, explored like the library's: every state a power cut could leave
must open as a promised one."""
import crashstates

BUDGET = 1000


def test_power_cut_through_the_mount(tmp_path):
    traces = []
    states, violations = crashstates.explore(
        crashstates.builddir(), str(tmp_path), "mount", BUDGET, seed=1,
        trace=traces)
    # The daemon's own writes are in the trace, and delete and compact
    # went through the journal.
    assert {op[0] for op in traces[0].ops} >= {"w", "f", "m"}
    assert "maintenance.zr" in traces[0].created.values()
    print(f"mount: {states} crash states, {len(violations)} violations")
    assert states >= 50, states
    assert violations == [], violations[:5]
