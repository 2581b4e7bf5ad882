# tests/rgw.mk - the S3 test engine: tests/rgw.test starts a one-host Ceph
# cluster on loopback (scripts/rgw-local.sh; needs root and Debian's Ceph
# packages, which `scripts/deps.sh ceph` installs) and checks the S3 calls
# the S3 backend will make.  Not in `make check` yet (nothing there reads
# from S3 until the S3 backend lands); run it with:
#   make check-rgw
dist_noinst_SCRIPTS += tests/rgw.test scripts/rgw-local.sh scripts/delay-relay.py
EXTRA_DIST += tests/rgw.mk

check-rgw:
	top_srcdir='$(abs_top_srcdir)' $(SHELL) $(srcdir)/tests/rgw.test
.PHONY: check-rgw
