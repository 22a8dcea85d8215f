/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * procfs.h: the program's one reader of /proc/PID: the maps parser, paths to
 * a mapped object, status fields, stat, comm and the thread list.  pid 0
 * names the caller ("/proc/self"); tid 0 the process itself, else
 * "/proc/PID/task/TID".
 */
#ifndef GT_PROCFS_H
#define GT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Lines read at most from one maps file: every input here comes from a traced process. */
#define PROCFS_MAX_MAPPINGS (1u << 20)

/* One line of /proc/PID/maps. */
struct procfs_map {
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;
	char perms[8]; /* "r-xp" */
	bool exec;     /* perms[2] == 'x' */
	/*
	 * The rest of the line without its newline, spaces kept: "" if anonymous,
	 * "[vdso]", "/lib/x.so (deleted)", ...  Points into the parsed line.
	 */
	const char *path;
};

/*
 * Parses one line of a maps file; the newline is cut from line, which path
 * then points into.  False for a malformed line (start >= end included).
 */
bool procfs_maps_parse_line(char *line, struct procfs_map *m);

/* Iterates the lines of a maps file: open, next until false, close. */
struct procfs_maps {
	FILE *f;
	char *line;
	size_t cap, nlines;
};

/* Opens /proc/PID/maps (tid: /proc/PID/task/TID/maps).  Returns 0 or -errno. */
int procfs_maps_open(struct procfs_maps *it, pid_t pid, pid_t tid);
/* Opens a maps file by path (tests, saved copies).  Returns 0 or -errno. */
int procfs_maps_open_path(struct procfs_maps *it, const char *path);
/*
 * The next well-formed line (malformed ones are skipped), valid until the
 * next call; false at the end or after PROCFS_MAX_MAPPINGS lines.
 */
bool procfs_maps_next(struct procfs_maps *it, struct procfs_map *m);
void procfs_maps_close(struct procfs_maps *it); /* safe on a zeroed or closed iterator */

/*
 * True if a maps path is a file deleted since it was mapped (" (deleted)" at
 * its end).  Such a text, or one with the kernel's escapes, is never opened
 * by name: safeopen.h opens mapped objects.
 */
bool procfs_path_is_deleted(const char *path);

/* Formats /proc/PID[/task/TID]/NAME into buf; returns false if it does not fit. */
bool procfs_path(char *buf, size_t len, pid_t pid, pid_t tid, const char *name);

/* Formats /proc/PID/root/PATH (PATH absolute, as the process sees it); false if it does not fit. */
bool procfs_root_path(char *buf, size_t len, pid_t pid, const char *path);

/* Formats /proc/PID/map_files/START-END, the mapped object itself; false if it does not fit. */
bool procfs_map_files_path(char *buf, size_t len, pid_t pid, uint64_t start, uint64_t end);

/* Reads /proc/PID[/task/TID]/NAME into buf (NUL-terminated): bytes read or -errno. */
long procfs_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t len);

/*
 * Reads the comm of a process or thread into buf without its newline.
 * Returns false (buf "") if it is gone.
 */
bool procfs_comm(pid_t pid, pid_t tid, char *buf, size_t len);

/* ---- /proc/PID/status: "Key:\tvalue" lines ---- */

/* Reads /proc/PID[/task/TID]/status into buf: bytes read or -errno. */
long procfs_status_read(pid_t pid, pid_t tid, char *buf, size_t len);
/* Copies the value of key in status text (leading blanks skipped) to out; false if absent. */
bool procfs_status_field(const char *text, const char *key, char *out, size_t len);
/* Decimal value of key ("Tgid", "TracerPid"), or dflt if absent. */
long procfs_status_long(const char *text, const char *key, long dflt);
/* Hexadecimal value of key ("SigBlk", "CapEff"), or 0 if absent. */
uint64_t procfs_status_hex(const char *text, const char *key);

/* ---- /proc/PID/stat ---- */

struct procfs_stat {
	char state; /* 'R', 'S', 'D', 'Z', ... */
	int ppid;
	unsigned long flags; /* PF_* (PF_KTHREAD: 0x00200000) */
};

/* Parses /proc/PID[/task/TID]/stat (comm may hold spaces and ')').  Returns 0 or -errno. */
int procfs_stat_read(pid_t pid, pid_t tid, struct procfs_stat *st);

/* ---- /proc/PID/task ---- */

struct procfs_tasks {
	void *dir; /* DIR * */
};

/* Opens the thread list of pid.  Returns 0 or -errno. */
int procfs_tasks_open(struct procfs_tasks *it, pid_t pid);
/* The next thread id, or 0 at the end. */
pid_t procfs_tasks_next(struct procfs_tasks *it);
void procfs_tasks_close(struct procfs_tasks *it); /* safe on a zeroed or closed iterator */

/*
 * A thread of pid other than skip (0: any) that is neither a zombie nor dead
 * (a leader that called pthread_exit stays a zombie while the others run).
 * Returns its tid, or 0 when there is none.
 */
pid_t procfs_live_thread(pid_t pid, pid_t skip);

#endif /* GT_PROCFS_H */
