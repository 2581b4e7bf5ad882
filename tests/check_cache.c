/*
 * check_cache.c - the host cache (src/lib/s3_cache.h) over a made-up
 * object whose fetches are counted per block, without an S3 engine: a
 * read returns the object's bytes and a second one fetches nothing;
 * threads and processes reading the same blocks at once fetch each block
 * once; the folder stays within its size and its count is true; a
 * damaged block is fetched again; a failed fetch keeps nothing; another ETag is another object; a
 * warm fetches ahead and copies nothing; a view points into a kept block,
 * survives its eviction and is bounded; "off" fetches every time; a
 * folder that cannot be made is refused by name.
 * In make check-tsan.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "error.h"
#include "s3_cache.h"

#define MIB ZR__CACHE_BLOCK
#define NBLK 96

/* The object's bytes and, shared with forked readers, its fetch counts. */
static uint8_t *obj;
static struct counts {
	atomic_uint per_block[NBLK];
	atomic_uint calls;
	atomic_int fail;
} *cnt;

static ssize_t get(const void *ctx, uint64_t off, void *buf, size_t len)
{
	(void)ctx;
	atomic_fetch_add(&cnt->calls, 1);
	if (atomic_load(&cnt->fail))
		return zr__fail(-EIO, "made-up GET failed");
	for (uint64_t b = off / MIB; b * MIB < off + len; b++)
		atomic_fetch_add(&cnt->per_block[b], 1);
	memcpy(buf, obj + off, len);
	return (ssize_t)len;
}

static struct zr__cobj object(const char *id, uint64_t size)
{
	struct zr__cobj o = { .size = size, .get = get };

	zr__cache_key(id, o.key);
	return o;
}

/* [off, off + len) of o, read to the end as the engine does. */
static void read_all(const struct zr__cobj *o, uint64_t off, size_t len)
{
	uint8_t *buf = malloc(len);
	size_t done = 0;

	ck_assert_ptr_nonnull(buf);
	while (done < len) {
		ssize_t n = zr__cache_read(o, buf + done, len - done,
					   off + done);

		ck_assert_msg(n > 0, "read at %zu: %zd %s", done, n,
			      zr_errmsg());
		done += (size_t)n;
	}
	ck_assert_msg(!memcmp(buf, obj + off, len), "wrong bytes at %llu",
		      (unsigned long long)off);
	free(buf);
}

static void setup(void)
{
	ck_dir_setup();
	obj = malloc(NBLK * MIB);
	ck_assert_ptr_nonnull(obj);
	ck_fill(obj, NBLK * MIB, 7);
	cnt = mmap(NULL, sizeof(*cnt), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(cnt, MAP_FAILED);
	ck_assert_int_eq(zr_cache_set(ck_dir, ZR_CACHE_SIZE_MIN), 0);
}

static void teardown(void)
{
	zr_cache_set("off", 0);
	munmap(cnt, sizeof(*cnt));
	free(obj);
	ck_dir_teardown();
}

static unsigned fetched(unsigned from, unsigned to)
{
	unsigned n = 0;

	for (unsigned b = from; b < to; b++)
		n += atomic_load(&cnt->per_block[b]);
	return n;
}

START_TEST(test_read_then_hit)
{
	struct zr__cobj o = object("e http://x/b/k \"etag1\"", 10 * MIB + 77);
	zr_cache_info a, b;

	zr_cache_status(&a);
	read_all(&o, 12345, 3 * MIB);	  /* blocks 0..3 */
	read_all(&o, 9 * MIB, MIB + 77); /* the short last block */
	ck_assert_uint_eq(fetched(0, NBLK), 6);
	read_all(&o, 0, 4 * MIB);
	read_all(&o, 10 * MIB + 1, 76);
	ck_assert_uint_eq(fetched(0, NBLK), 6);
	zr_cache_status(&b);
	ck_assert_uint_eq(b.fetched_bytes - a.fetched_bytes, 5 * MIB + 77);
	ck_assert_uint_eq(b.hit_bytes - a.hit_bytes, 4 * MIB + 76);
	ck_assert_uint_eq(b.used_bytes, 5 * MIB + 77);
	ck_assert_str_eq(b.why_off, "");
}
END_TEST

static void *reader(void *arg)
{
	read_all(arg, MIB / 2, 6 * MIB);
	return NULL;
}

START_TEST(test_threads_fetch_each_block_once)
{
	struct zr__cobj o = object("e http://x/b/threads \"1\"", 8 * MIB);
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, reader, &o), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (unsigned b = 0; b <= 6; b++)
		ck_assert_uint_eq(atomic_load(&cnt->per_block[b]), 1);
}
END_TEST

START_TEST(test_processes_fetch_each_block_once)
{
	struct zr__cobj o = object("e http://x/b/procs \"1\"", 8 * MIB);
	pid_t pid[4];
	int status;

	for (int i = 0; i < 4; i++) {
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (!pid[i]) {
			read_all(&o, 0, 8 * MIB);
			_exit(0);
		}
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (unsigned b = 0; b < 8; b++)
		ck_assert_uint_eq(atomic_load(&cnt->per_block[b]), 1);
}
END_TEST

/* The bytes of every block file under the cache's folder. */
static uint64_t on_disk(const char *dir)
{
	char cmd[4300], line[64];
	FILE *p;
	unsigned long long n = 0;

	snprintf(cmd, sizeof(cmd), "find '%s/v1' -name '*.*' ! -name '*.lock' "
		 "! -name '*.tmp' -printf '%%s\\n' | awk '{s+=$1} END "
		 "{print s+0}'", dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	pclose(p);
	ck_assert_int_eq(sscanf(line, "%llu", &n), 1);
	return n;
}

START_TEST(test_stays_within_its_size)
{
	struct zr__cobj o = object("e http://x/b/big \"1\"", NBLK * MIB);
	zr_cache_info info;

	for (unsigned b = 0; b < NBLK; b += 4)
		read_all(&o, (uint64_t)b * MIB, 4 * MIB);
	zr_cache_status(&info);
	ck_assert_uint_le(on_disk(ck_dir), ZR_CACHE_SIZE_MIN);
	ck_assert_uint_eq(info.used_bytes, on_disk(ck_dir));
	/* the newest blocks stayed: reading them again fetches nothing */
	read_all(&o, (NBLK - 8) * MIB, 8 * MIB);
	ck_assert_uint_eq(fetched(0, NBLK), NBLK);
}
END_TEST

START_TEST(test_damaged_block_fetched_again)
{
	struct zr__cobj o = object("e http://x/b/dmg \"1\"", 3 * MIB);
	char cmd[4300];

	read_all(&o, 0, 3 * MIB);
	snprintf(cmd, sizeof(cmd), "find '%s/v1' -name '*.1' -exec truncate "
		 "-s 1000 {} +", ck_dir);
	ck_assert_int_eq(system(cmd), 0);
	read_all(&o, 0, 3 * MIB);
	ck_assert_uint_eq(atomic_load(&cnt->per_block[0]), 1);
	ck_assert_uint_eq(atomic_load(&cnt->per_block[1]), 2);
	ck_assert_uint_eq(atomic_load(&cnt->per_block[2]), 1);
}
END_TEST

START_TEST(test_failed_fetch_keeps_nothing)
{
	struct zr__cobj o = object("e http://x/b/fail \"1\"", 2 * MIB);
	uint8_t buf[100];

	atomic_store(&cnt->fail, 1);
	ck_assert_int_eq(zr__cache_read(&o, buf, sizeof(buf), 5), -EIO);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "made-up GET failed"));
	ck_assert_uint_eq(on_disk(ck_dir), 0);
	atomic_store(&cnt->fail, 0);
	read_all(&o, 5, 100);
}
END_TEST

START_TEST(test_another_etag_is_another_object)
{
	struct zr__cobj v1 = object("e http://x/b/k \"v1\"", 2 * MIB);
	struct zr__cobj v2 = object("e http://x/b/k \"v2\"", 2 * MIB);

	read_all(&v1, 0, 2 * MIB);
	read_all(&v2, 0, 2 * MIB);
	ck_assert_uint_eq(fetched(0, 2), 4);
}
END_TEST

START_TEST(test_off_fetches_every_time)
{
	struct zr__cobj o = object("e http://x/b/off \"1\"", 2 * MIB);

	ck_assert_int_eq(zr_cache_set("off", 0), 0);
	read_all(&o, 0, 100);
	read_all(&o, 0, 100);
	ck_assert_uint_eq(atomic_load(&cnt->calls), 2);
	ck_assert_uint_eq(on_disk(ck_dir) , 0);
}
END_TEST

START_TEST(test_warm_fetches_ahead)
{
	struct zr__cobj o = object("e http://x/b/warm \"1\"", 6 * MIB + 5);

	ck_assert_int_eq(zr__cache_warm(&o, MIB + 10, 3 * MIB), 0);
	ck_assert_uint_eq(fetched(0, NBLK), 4); /* blocks 1..4 */
	ck_assert_uint_eq(atomic_load(&cnt->calls), 1); /* one run, one GET */
	ck_assert_int_eq(zr__cache_warm(&o, MIB, 4 * MIB), 0);
	read_all(&o, MIB + 77, 3 * MIB);
	ck_assert_uint_eq(fetched(0, NBLK), 4);
	ck_assert_int_eq(zr_cache_set("off", 0), 0);
	ck_assert_int_eq(zr__cache_warm(&o, 0, 10), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_view_points_into_kept_blocks)
{
	struct zr__cobj o = object("e http://x/b/view \"1\"", 3 * MIB + 5);
	struct zr__cmaps m;
	const void *p = NULL, *q = NULL;
	char cmd[4300];

	zr__cmaps_init(&m);
	ck_assert_int_eq(zr__cache_view(&o, &m, 10, 100, &p), -ENOENT);
	ck_assert_uint_eq(atomic_load(&cnt->calls), 0); /* views fetch none */
	ck_assert_int_eq(zr__cache_warm(&o, 0, 3 * MIB + 5), 0);
	ck_assert_int_eq(zr__cache_view(&o, &m, MIB + 10, 1000, &p), 0);
	ck_assert(!memcmp(p, obj + MIB + 10, 1000));
	ck_assert_int_eq(zr__cache_view(&o, &m, 3 * MIB, 5, &q), 0);
	ck_assert(!memcmp(q, obj + 3 * MIB, 5));
	/* across two blocks, or past the end: the caller reads */
	ck_assert_int_eq(zr__cache_view(&o, &m, 2 * MIB - 10, 20, &q),
			 -ENOENT);
	ck_assert_int_eq(zr__cache_view(&o, &m, 3 * MIB, 6, &q), -ENOENT);
	/* an eviction unlinks the files; a view keeps the bytes it had */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/v1/'??", ck_dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert(!memcmp(p, obj + MIB + 10, 1000));
	ck_assert_int_eq(zr__cache_view(&o, &m, MIB + 20, 10, &q), 0);
	ck_assert_int_eq(zr__cache_view(&o, &m, 10, 10, &q), -ENOENT);
	zr__cmaps_free(&m);
	ck_assert_uint_eq(atomic_load(&cnt->calls), 1);
}
END_TEST

/* Many small objects (on tmpfs, where a block's sync costs nothing): a
 * process maps at most ZR__CACHE_MAPS blocks, and a file's close gives
 * its back. */
START_TEST(test_views_bounded)
{
	char dir[] = "/dev/shm/zrck.XXXXXX", id[64];
	struct zr__cmaps m, m2;
	const void *p;
	unsigned i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(zr_cache_set(dir, ZR_CACHE_SIZE_MIN), 0);
	zr__cmaps_init(&m);
	zr__cmaps_init(&m2);
	for (i = 0; i <= ZR__CACHE_MAPS; i++) {
		struct zr__cobj o;

		snprintf(id, sizeof(id), "e http://x/b/tiny%u \"1\"", i);
		o = object(id, 1);
		ck_assert_int_eq(zr__cache_warm(&o, 0, 1), 0);
		if (i < ZR__CACHE_MAPS) {
			ck_assert_int_eq(zr__cache_view(&o, &m, 0, 1, &p), 0);
			ck_assert_uint_eq(*(const uint8_t *)p, obj[0]);
			continue;
		}
		ck_assert_int_eq(zr__cache_view(&o, &m2, 0, 1, &p), -ENOSPC);
		zr__cmaps_free(&m);
		ck_assert_int_eq(zr__cache_view(&o, &m2, 0, 1, &p), 0);
	}
	zr__cmaps_free(&m2);
	zr_cache_set("off", 0);
	zr_rmtree(dir);
}
END_TEST

START_TEST(test_unusable_folder_refused)
{
	char file[4200];
	zr_cache_info info;
	int fd;

	snprintf(file, sizeof(file), "%s/a-file", ck_dir);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(zr_cache_set(file, 0), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), file));
	zr_cache_status(&info);
	ck_assert_str_eq(info.dir, "");
	ck_assert_int_eq(zr_cache_set(ck_dir, 1000), -EINVAL);
	ck_assert_int_eq(zr_cache_set("", 0), -EINVAL);
}
END_TEST

Suite *suite_cache(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_read_then_hit);
	tcase_add_test(tc, test_threads_fetch_each_block_once);
	tcase_add_test(tc, test_processes_fetch_each_block_once);
	tcase_add_test(tc, test_stays_within_its_size);
	tcase_add_test(tc, test_damaged_block_fetched_again);
	tcase_add_test(tc, test_failed_fetch_keeps_nothing);
	tcase_add_test(tc, test_another_etag_is_another_object);
	tcase_add_test(tc, test_off_fetches_every_time);
	tcase_add_test(tc, test_warm_fetches_ahead);
	tcase_add_test(tc, test_view_points_into_kept_blocks);
	tcase_add_test(tc, test_views_bounded);
	tcase_add_test(tc, test_unusable_folder_refused);
	suite_add_tcase(s, tc);
	return s;
}
