# tests/tsan.mk - the ThreadSanitizer phase.  In a build configured with
# --enable-tsan, `make check-tsan` runs tests/tsan.test: the concurrency
# tests of the library and of the daemon, under TSan, with the
# suppressions of tests/tsan.supp (libfuse / glibc internals only).
EXTRA_DIST += tests/tsan.mk tests/tsan.supp
dist_noinst_SCRIPTS += tests/tsan.test

if TSAN
AM_TESTS_ENVIRONMENT += CK_TIMEOUT_MULTIPLIER=10 ZR_TSAN=1; \
	export CK_TIMEOUT_MULTIPLIER ZR_TSAN;
check-tsan:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=tests/tsan.test
else
check-tsan:
	@echo "check-tsan: configure this build with --enable-tsan" >&2; exit 1
endif
.PHONY: check-tsan
