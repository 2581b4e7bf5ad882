# tests/stress.mk - the long concurrency stress of a real zrecordfs mount:
#   make stress [STRESS_SECONDS=600] [STRESS_WORKERS=8] [STRESS_SEED=1]
# runs tests/fs/stress.py against this build dir's zrecordfs and zrecord,
# so invoking it in an --enable-sanitizers build dir stresses the ASan/UBSan
# daemon.  `make check` runs a 20-second version (tests/fs/test_stress.py).
# Needs root and /dev/fuse.
EXTRA_DIST += tests/stress.mk tests/fs/stress.py tests/fs/test_stress.py

STRESS_SECONDS = 120
STRESS_WORKERS = 8
STRESS_SEED = 1

stress: all
	$(PYTHON3) $(srcdir)/tests/fs/stress.py --seconds $(STRESS_SECONDS) \
		--workers $(STRESS_WORKERS) --seed $(STRESS_SEED) \
		--zrecordfs $(abs_top_builddir)/src/fs/zrecordfs \
		--zrecord $(abs_top_builddir)/src/cli/zrecord
.PHONY: stress
