// SPDX-License-Identifier: GPL-2.0-only
/*
 * Commands a killed run left running: see leftover.h.
 */
#include "ktest/leftover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"

/* SIGTERM, then SIGKILL after this; then this again at most. */
#define KLEFT_GRACE_MS	2000
/* What the message keeps of a command line. */
#define KLEFT_CMD_MAX	300

static char *note_dir;
/* The path of the last note made, for kleft_forget_running() */
static char running_path[4096];
static volatile sig_atomic_t running_set;

int kleft_set_dir(const char *dir)
{
	free(note_dir);
	note_dir = NULL;
	if (!dir)
		return 0;
	if (kcmd_mkdirs_private(dir))
		return -1;
	note_dir = xstrdup(dir);
	return 0;
}

/*
 * /proc/PID/stat: its state, process group and start time (clock ticks
 * after the boot). 0, or -1 when there is no such process.
 */
static int proc_stat(const char *pid, char *state, long *pgrp,
		     unsigned long long *start)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ... starttime (22)": comm ends at the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 state, pgrp, start) != 3)
		return -1;
	return 0;
}

/* A process of group pgid that runs (not a zombie); 0: none; -1: no /proc. */
static pid_t running_member(pid_t pgid)
{
	struct dirent *d;
	pid_t member = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -1;
	while (!member && (d = readdir(dir))) {
		unsigned long long start;
		long grp;
		char st;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		if (!proc_stat(d->d_name, &st, &grp, &start) && grp == pgid &&
		    st != 'Z' && st != 'X')
			member = (pid_t)strtol(d->d_name, NULL, 10);
	}
	closedir(dir);
	return member;
}

bool kleft_group_runs(pid_t pgid)
{
	return running_member(pgid) != 0;	/* -1: cannot tell, the caller's bound applies */
}

/* This boot's id ("" when the kernel has none). */
static void boot_id(char *id, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	id[0] = '\0';
	if (!f)
		return;
	if (!fgets(id, (int)len, f))
		id[0] = '\0';
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
}

void kleft_note(pid_t pgid, char name[KLEFT_NAME_MAX])
{
	unsigned long long start;
	char path[4096], id[40], pid[24], st;
	long grp;
	int fd;

	name[0] = '\0';
	if (!note_dir)
		return;
	snprintf(pid, sizeof(pid), "%ld", (long)pgid);
	if (proc_stat(pid, &st, &grp, &start))
		return;		/* gone already: nothing to stop later */
	boot_id(id, sizeof(id));
	snprintf(name, KLEFT_NAME_MAX, "%ld-%llu-%s", (long)pgid, start, id);
	snprintf(path, sizeof(path), "%s/%s", note_dir, name);
	fd = kcmd_open_private(path, O_WRONLY | O_CREAT);
	if (fd < 0) {
		name[0] = '\0';	/* best effort: the run goes on without it */
		return;
	}
	close(fd);
	running_set = 0;
	memcpy(running_path, path, sizeof(path));
	running_set = 1;
}

void kleft_self(char name[KLEFT_NAME_MAX])
{
	unsigned long long start;
	char id[40], st;
	long grp;

	name[0] = '\0';
	if (proc_stat("self", &st, &grp, &start))
		return;
	boot_id(id, sizeof(id));
	snprintf(name, KLEFT_NAME_MAX, "%ld-%llu-%s", (long)getpid(), start, id);
}

void kleft_forget(const char *name)
{
	char path[4096];

	running_set = 0;
	if (!note_dir || !name[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", note_dir, name);
	unlink(path);
}

void kleft_forget_running(void)
{
	if (running_set) {
		running_set = 0;
		unlink(running_path);
	}
}

/* A note's name: 0, or -1 when it is not one. */
static int parse_name(const char *name, pid_t *pgid,
		      unsigned long long *start, char id[40])
{
	long pg;
	int end = 0;

	if (sscanf(name, "%ld-%llu-%39[0-9a-f-]%n", &pg, start, id, &end) != 3 ||
	    name[end] || pg <= 0)
		return -1;
	*pgid = (pid_t)pg;
	return 0;
}

/* Is the group the note names still the one noted, and running? */
static bool still_ours(pid_t pgid, const char *id, unsigned long long start)
{
	char now[40], pid[24], st;
	unsigned long long s;
	long grp;

	boot_id(now, sizeof(now));
	if (strcmp(now, id))
		return false;	/* noted before a reboot */
	snprintf(pid, sizeof(pid), "%ld", (long)pgid);
	if (!proc_stat(pid, &st, &grp, &s) && s != start)
		return false;	/* the pid is another process's now */
	/* the leader itself, or its group without it (its pid not reusable) */
	return running_member(pgid) > 0;
}

int kleft_process_runs(const char *name)
{
	unsigned long long start, s;
	char id[40], now[40], pid[24], st;
	pid_t p;
	long grp;

	if (parse_name(name, &p, &start, id))
		return -1;
	boot_id(now, sizeof(now));
	snprintf(pid, sizeof(pid), "%ld", (long)p);
	return !strcmp(now, id) && !proc_stat(pid, &st, &grp, &s) &&
	       s == start && st != 'Z' && st != 'X';
}

/* The command line of a process of the group, for the message. */
static char *group_cmd(pid_t pgid)
{
	char path[64], buf[4096];
	pid_t p = running_member(pgid);
	struct sbuf b;
	ssize_t n = 0;
	size_t k = 0;
	char *s;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)(p > 0 ? p : pgid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return xstrdup("?");
	buf[n] = '\0';
	/* "sh\0-c\0CMD\0": CMD */
	if (strlen(buf) + 4 <= (size_t)n && !strcmp(buf + strlen(buf) + 1, "-c"))
		k = strlen(buf) + 4;
	sbuf_init(&b);
	for (; k < (size_t)n; k += strlen(buf + k) + 1)
		sbuf_addf(&b, "%s%s", b.len ? " " : "", buf + k);
	s = kcmd_redact(sbuf_str(&b));
	sbuf_free(&b);
	if (strlen(s) > KLEFT_CMD_MAX)
		s[KLEFT_CMD_MAX] = '\0';
	for (char *c = s; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return s;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void stop_group(pid_t pgid)
{
	kill(-pgid, SIGTERM);
	kill(-pgid, SIGCONT);
	for (int waited = 0; kleft_group_runs(pgid); waited += 20) {
		if (waited == KLEFT_GRACE_MS)
			kill(-pgid, SIGKILL);
		if (waited >= 2 * KLEFT_GRACE_MS)
			break;
		sleep_ms(20);
	}
}

int kleft_stop(const char *dir, kleft_say_fn say, void *ctx)
{
	char path[4096], id[40];
	unsigned long long start;
	struct dirent *d;
	int n = 0;
	DIR *dh = opendir(dir);

	if (!dh)
		return 0;
	while ((d = readdir(dh))) {
		pid_t pgid;

		if (parse_name(d->d_name, &pgid, &start, id))
			continue;
		if (still_ours(pgid, id, start)) {
			char *cmd = group_cmd(pgid);

			if (say)
				say(ctx, pgid, cmd);
			free(cmd);
			stop_group(pgid);
			n++;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	closedir(dh);
	return n;
}
