# tests/rgw.mk - the S3 test engine: tests/rgw.test starts a one-host Ceph
# cluster on loopback (scripts/rgw-local.sh; needs root and Debian's Ceph
# packages, which `scripts/deps.sh` installs), checks the S3 calls the
# S3 backend makes, then runs the backend's suite (tests/rgw).  Part of
# `make check` (about 50 s on 2 cores, 20 of them one test's bounded stall
# and 15-25 the 20 randomly killed pushes of test_s3_push.py); alone:
#   make check-rgw
TESTS += tests/rgw.test
dist_noinst_SCRIPTS += tests/rgw.test scripts/rgw-local.sh scripts/delay-relay.py
EXTRA_DIST += tests/rgw.mk tests/rgw/conftest.py tests/rgw/test_s3_read.py \
	tests/rgw/test_s3_mix.py tests/rgw/test_s3_mount.py \
	tests/rgw/test_s3_stage.py tests/rgw/test_s3_push.py \
	tests/rgw/test_s3_cache.py tests/rgw/test_s3_faults.py \
	tests/rgw/test_s3_prefix.py tests/rgw/test_s3_list_input.py \
	tests/rgw/test_s3_follow.py

check-rgw: all
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/rgw.test
.PHONY: check-rgw
