/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * match.h: which process the monitor traces: a pid, or a match that finds
 * the program again after it restarts (its name or command line, a cgroup,
 * a systemd unit).
 */
#ifndef GT_MATCH_H
#define GT_MATCH_H

#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum match_kind { MATCH_PID, MATCH_NAME, MATCH_CGROUP };

struct matcher {
	enum match_kind kind;
	pid_t pid;
	char name[16]; /* MATCH_NAME: matched against comm exactly, too */
	regex_t re;
	bool re_ok;
	char cgroup[PATH_MAX];	  /* MATCH_CGROUP: the cgroup's cgroup.procs */
	char what[PATH_MAX + 32]; /* for messages: "pid 12", "--match NAME" */
};

/*
 * kind's argument: a pid, a name or POSIX extended regex (matching comm
 * exactly or the regex anywhere in comm or the command line), a cgroup v2
 * path (/system.slice/x.service) or a systemd unit (x or x.service).
 * unit: arg names a unit.  0, or -1 with a one-line message in err.
 */
int matcher__init(struct matcher *m, enum match_kind kind, const char *arg, bool unit, char *err,
		  size_t errlen);
/*
 * The process to trace now, 0 if none: with several, one whose parent is
 * not among them (a launcher's workers are followed from it), the lowest pid.
 * Never gaptrace itself.
 */
pid_t matcher__find(const struct matcher *m);
/* True when the match finds the program again after it exits (not -p). */
bool matcher__follows_restarts(const struct matcher *m);
void matcher__free(struct matcher *m);

#endif /* GT_MATCH_H */
