// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal: records survive a reopen, values with tabs and newlines come
 * back unchanged, a torn last record (cut at every byte) is dropped and cut
 * off, damage in the middle is an error naming the line, and a writer
 * killed with SIGKILL at random moments always leaves a readable prefix.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/journal.h"

struct tj {
	char dir[64];
	char *path;
};

static int setup(void **state)
{
	struct tj *t = calloc(1, sizeof(*t));

	snprintf(t->dir, sizeof(t->dir), "/tmp/ktest-journal.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	t->path = xasprintf("%s/state/journal", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tj *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t->path);
	free(t);
	return 0;
}

static char *state_dir(struct tj *t)
{
	return xasprintf("%s/state", t->dir);
}

static void open_ok(struct tj *t, struct kjournal *j)
{
	char err[512] = "";
	char *dir = state_dir(t);

	if (kjournal_open(j, dir, err, sizeof(err)))
		fail_msg("open: %s", err);
	j->nosync = true;
	free(dir);
}

static size_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void test_crc32(void **state)
{
	/* the check value of CRC-32/ISO-HDLC, as zlib computes it */
	assert_int_equal(kjournal_crc32("123456789", 9), 0xcbf43926UL);
	assert_int_equal(kjournal_crc32("", 0), 0);
}

static void test_roundtrip(void **state)
{
	struct tj *t = *state;
	struct kjournal j;
	const struct kjrec *r;
	const char *odd = "a\tb\nc\\d=e \\t";

	open_ok(t, &j);
	assert_int_equal(j.nrecs, 0);
	assert_int_equal(kjournal_append(&j, "ev", "start", "test", "1",
					 "step", "build", NULL), 0);
	assert_int_equal(kjournal_append(&j, "ev", "done", "test", "1",
					 "why", odd, "skipped", (char *)NULL,
					 "verdict", "GOOD", NULL), 0);
	assert_int_equal(j.nrecs, 2);
	kjournal_close(&j);

	open_ok(t, &j);
	assert_int_equal(j.nrecs, 2);
	assert_false(j.torn);
	assert_string_equal(kjrec_get(&j.recs[0], "step"), "build");
	assert_string_equal(kjrec_get(&j.recs[1], "why"), odd);
	assert_null(kjrec_get(&j.recs[1], "skipped"));
	assert_string_equal(kjrec_get(&j.recs[1], "verdict"), "GOOD");
	assert_int_equal(j.recs[1].line, 2);
	r = kjournal_find(&j, "ev", "done", "test", "1", NULL);
	assert_ptr_equal(r, &j.recs[1]);
	assert_null(kjournal_find(&j, "ev", "done", "test", "2", NULL));
	kjournal_close(&j);
}

static void test_find_last(void **state)
{
	struct tj *t = *state;
	struct kjournal j;
	const struct kjrec *r;

	open_ok(t, &j);
	for (int i = 0; i < 10; i++) {
		char n[16];

		snprintf(n, sizeof(n), "%d", i);
		assert_int_equal(kjournal_append(&j, "k", i % 2 ? "odd" : "even",
						 "n", n, NULL), 0);
	}
	r = kjournal_find(&j, "k", "even", NULL);
	assert_string_equal(kjrec_get(r, "n"), "8");
	r = kjournal_find(&j, "k", "odd", NULL);
	assert_string_equal(kjrec_get(r, "n"), "9");
	kjournal_close(&j);
}

/* Cut the last record at every byte: it is dropped, the rest stay. */
static void test_torn_every_byte(void **state)
{
	struct tj *t = *state;
	struct kjournal j;
	size_t before, after;

	open_ok(t, &j);
	assert_int_equal(kjournal_append(&j, "a", "1", NULL), 0);
	assert_int_equal(kjournal_append(&j, "b", "2", NULL), 0);
	kjournal_close(&j);
	before = file_size(t->path);
	open_ok(t, &j);
	assert_int_equal(kjournal_append(&j, "c", "three\tvalues", NULL), 0);
	kjournal_close(&j);
	after = file_size(t->path);

	for (size_t cut = before; cut < after; cut++) {
		int fd;

		/* rebuild: the good two, then the third cut at "cut" */
		open_ok(t, &j);
		assert_int_equal(j.nrecs, 3);
		kjournal_close(&j);
		fd = open(t->path, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, cut), 0);
		close(fd);
		open_ok(t, &j);
		assert_int_equal(j.nrecs, 2);
		assert_int_equal(j.torn, cut > before);
		assert_int_equal(file_size(t->path), before);
		assert_int_equal(kjournal_append(&j, "c", "three\tvalues", NULL), 0);
		kjournal_close(&j);
		open_ok(t, &j);
		assert_int_equal(j.nrecs, 3);
		assert_string_equal(kjrec_get(&j.recs[2], "c"), "three\tvalues");
		kjournal_close(&j);
		assert_int_equal(file_size(t->path), after);
	}
}

/* A flipped byte in the middle is not a torn write: an error with a line. */
static void test_damage_in_middle(void **state)
{
	struct tj *t = *state;
	struct kjournal j;
	char err[512] = "";
	char *dir = state_dir(t);
	int fd;

	open_ok(t, &j);
	for (int i = 0; i < 3; i++)
		assert_int_equal(kjournal_append(&j, "rec", "value", NULL), 0);
	kjournal_close(&j);
	fd = open(t->path, O_RDWR);
	assert_true(fd >= 0);
	/* the second record's payload: K1 9 xxxxxxxx rec=value\n is 24 bytes */
	assert_int_equal(pwrite(fd, "X", 1, 24 + 20), 1);
	close(fd);
	assert_int_equal(kjournal_open(&j, dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "journal:2: damaged record"));
	/* a damaged LAST record is a torn write: the first two stay */
	fd = open(t->path, O_RDWR);
	assert_int_equal(pwrite(fd, "l", 1, 24 + 20), 1);
	assert_int_equal(pwrite(fd, "X", 1, 48 + 20), 1);
	close(fd);
	assert_int_equal(kjournal_open(&j, dir, err, sizeof(err)), 0);
	assert_int_equal(j.nrecs, 2);
	assert_true(j.torn);
	kjournal_close(&j);
	free(dir);
}

static void test_restart(void **state)
{
	struct tj *t = *state;
	struct kjournal j;
	char err[512];
	char *old = xasprintf("%s.1", t->path);
	struct stat st;

	open_ok(t, &j);
	assert_int_equal(kjournal_append(&j, "x", "1", NULL), 0);
	assert_int_equal(kjournal_restart(&j, err, sizeof(err)), 0);
	assert_int_equal(j.nrecs, 0);
	assert_int_equal(stat(old, &st), 0);
	assert_int_equal(kjournal_append(&j, "y", "2", NULL), 0);
	kjournal_close(&j);
	open_ok(t, &j);
	assert_int_equal(j.nrecs, 1);
	assert_string_equal(kjrec_get(&j.recs[0], "y"), "2");
	kjournal_close(&j);
	free(old);
}

static void test_unwritable_dir(void **state)
{
	struct kjournal j;
	char err[512] = "";

	assert_int_equal(kjournal_open(&j, "/proc/ktest-no/state", err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, "/proc/ktest-no/state"));
}

/*
 * A writer killed with SIGKILL at random moments, with fsync on: every
 * reopen gives records 0..n-1 in order, and appending goes on from there.
 */
static void test_killed_writer(void **state)
{
	struct tj *t = *state;
	unsigned seed = (unsigned)time(NULL);
	int expect = 0;

	srand(seed);
	for (int round = 0; round < 20; round++) {
		struct kjournal j;
		pid_t pid;
		int st;

		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char err[256];
			char *dir = state_dir(t);

			if (kjournal_open(&j, dir, err, sizeof(err)))
				_exit(1);
			j.nosync = round % 2;
			for (int n = (int)j.nrecs;; n++) {
				char v[32];

				snprintf(v, sizeof(v), "%d", n);
				if (kjournal_append(&j, "n", v, "pad",
						    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
						    NULL))
					_exit(2);
			}
		}
		usleep(1000 + rand() % 20000);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st));
		open_ok(t, &j);
		if ((int)j.nrecs < expect)
			fail_msg("seed %u round %d: %zu records, had %d", seed,
				 round, j.nrecs, expect);
		for (size_t i = 0; i < j.nrecs; i++) {
			char v[32];

			snprintf(v, sizeof(v), "%zu", i);
			assert_string_equal(kjrec_get(&j.recs[i], "n"), v);
		}
		expect = (int)j.nrecs;
		kjournal_close(&j);
	}
	assert_true(expect > 0);
}

/* A child that takes the lock of dir, then waits for a byte on fd. */
static pid_t locker(const char *dir, int *go, int *ready)
{
	int to[2], from[2];
	pid_t pid;

	assert_int_equal(pipe(to), 0);
	assert_int_equal(pipe(from), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char err[512], c;

		close(to[1]);
		close(from[0]);
		c = kjournal_lock(dir, err, sizeof(err)) ? 'n' : 'y';
		if (write(from[1], &c, 1) != 1 || read(to[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	*go = to[1];
	*ready = from[0];
	return pid;
}

/*
 * One run at a time on a state directory: the lock of a live process is
 * refused, naming its pid; it is free once that process is gone, whatever
 * it ended with; a child forked by the holder does not hold it.
 */
static void test_lock(void **state)
{
	struct tj *t = *state;
	char *dir = state_dir(t), err[512], c, pid_s[32];
	int go, ready, st;
	pid_t pid = locker(dir, &go, &ready);

	assert_int_equal(read(ready, &c, 1), 1);
	assert_int_equal(c, 'y');
	assert_int_equal(kjournal_lock(dir, err, sizeof(err)), -1);
	snprintf(pid_s, sizeof(pid_s), "(pid %ld)", (long)pid);
	assert_non_null(strstr(err, "is in use by another ktest run"));
	assert_non_null(strstr(err, pid_s));
	assert_non_null(strstr(err, dir));
	/* SIGKILL: no chance to unlock */
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(go);
	close(ready);

	/* the holder forks (a box, a build ahead) and dies: the child does not hold it */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		pid_t child;

		if (kjournal_lock(dir, err, sizeof(err)))
			_exit(1);
		child = fork();
		if (child == 0) {
			sleep(5);
			_exit(0);
		}
		_exit(child > 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(kjournal_lock(dir, err, sizeof(err)), 0);

	/* and now this process holds it */
	pid = locker(dir, &go, &ready);
	assert_int_equal(read(ready, &c, 1), 1);
	assert_int_equal(c, 'n');
	assert_int_equal(write(go, "x", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(go);
	close(ready);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damage_in_middle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
		cmocka_unit_test(test_unwritable_dir),
		cmocka_unit_test_setup_teardown(test_killed_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
