# tests/cluster.mk - many hosts, one dataset: the suite of tests/cluster on
# a throwaway GlusterFS volume (glusterd, one brick, one client mount per
# simulated host; needs root and Debian's glusterfs-server) and sshfs over a
# private loopback sshd (a filesystem whose flock stays on one host).  `make check`
# runs the short variant (W = 2 and 4, a few steps); the long one adds
# W = 8 and a dozen steps per mode:
#   make check-cluster
TESTS += tests/cluster.test
dist_noinst_SCRIPTS += tests/cluster.test
EXTRA_DIST += tests/cluster.mk tests/cluster/gluster.py \
	tests/cluster/conftest.py tests/cluster/test_slices.py \
	tests/cluster/test_locks.py tests/cluster/test_writers.py \
	tests/cluster/sshfs.py tests/cluster/test_sshfs.py \
	tests/cluster/test_follow.py

check-cluster: all
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	PYTHON3='$(PYTHON3)' ZR_CLUSTER_LONG=1 \
	$(SHELL) $(srcdir)/tests/run-pytest.sh tests/cluster
.PHONY: check-cluster
