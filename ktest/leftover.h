/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Commands a killed run left running. ktest stops its commands' process
 * groups when it ends or is interrupted, but a SIGKILL (kill -9, the OOM
 * killer) gives it no chance: the make it was running goes on building in
 * OUTPUT_DIR, and the run resumed next starts its own make there, in the
 * same objects. So each command's process group is noted in a directory
 * of the state (STATE_DIR/running) while it runs, and the next run stops
 * what a killed one left before it does anything.
 *
 * A note is an empty file whose name holds the process group, the start
 * time of its leader and the boot: a group is only stopped when it is that
 * one (the leader's pid is not reused while its group has members), never
 * a process that got the same pid later, nor after a reboot. Empty, a note
 * takes no space on the disk: a full state directory stays as full.
 */
#ifndef KTEST_LEFTOVER_H
#define KTEST_LEFTOVER_H

#include <stdbool.h>
#include <sys/types.h>

/* From now on, commands are noted in dir (made 0700); NULL: nowhere. */
int kleft_set_dir(const char *dir);
/* A note's name: "PGID-START-BOOTID". */
#define KLEFT_NAME_MAX	96

/*
 * kcmd: group pgid was just spawned; its note is made, its name put in
 * name ("" when there is none: no directory set, or it could not be made).
 */
void kleft_note(pid_t pgid, char name[KLEFT_NAME_MAX]);
/* kcmd: the group is over; its note (kleft_note's name) goes. */
void kleft_forget(const char *name);
/*
 * kcmd_stop_running: the group of the last note made, stopped from a
 * signal handler, is over; its note goes (async-signal-safe).
 */
void kleft_forget_running(void);

/*
 * Does a process of group pgid still run (zombies do not count)? true
 * when /proc cannot be read: the caller's bound applies.
 */
bool kleft_group_runs(pid_t pgid);

/*
 * This process's name, as a note's ("PID-START-BOOTID"), for a note of
 * its own elsewhere (vcs.c's checkouts); "" when /proc cannot tell.
 */
void kleft_self(char name[KLEFT_NAME_MAX]);
/*
 * Does the process a kleft_self() name names still run (the same process,
 * this boot, not a zombie)? 1 or 0; -1 when name is not such a name.
 */
int kleft_process_runs(const char *name);

/* What kleft_stop says for each group it stops. */
typedef void (*kleft_say_fn)(void *ctx, pid_t pgid, const char *cmd);

/*
 * Stops every group noted in dir that still runs (SIGTERM, SIGKILL 2 s
 * later), calling say for each first with its command line as /proc has
 * it (secrets masked), and removes every note. Returns how many it
 * stopped.
 */
int kleft_stop(const char *dir, kleft_say_fn say, void *ctx);

#endif
