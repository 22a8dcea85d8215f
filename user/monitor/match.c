// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * match.c: finding the monitor's target in /proc (by name, command line or
 * cgroup), again after every restart.  Names and command lines are the
 * processes' own: read bounded, matched, never trusted further.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor/match.h"
#include "support/procfs.h"
#include "support/util.h"

#define MATCH_MAX_CANDIDATES 4096
#define CMDLINE_MAX	     4096

int matcher__init(struct matcher *m, enum match_kind kind, const char *arg, bool unit, char *err,
		  size_t errlen)
{
	uint64_t v;
	int e;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	switch (kind) {
	case MATCH_PID:
		if (gt_parse_uint(arg, 1, INT32_MAX, &v)) {
			snprintf(err, errlen, "bad pid '%s': give a process id", arg);
			return -1;
		}
		m->pid = (pid_t)v;
		snprintf(m->what, sizeof(m->what), "pid %d", m->pid);
		return 0;
	case MATCH_NAME:
		snprintf(m->name, sizeof(m->name), "%s", arg);
		e = regcomp(&m->re, arg, REG_EXTENDED | REG_NOSUB);
		if (e) {
			char msg[128];

			regerror(e, &m->re, msg, sizeof(msg));
			snprintf(err, errlen, "bad --match '%s': %s; give a name or a regex", arg,
				 msg);
			return -1;
		}
		m->re_ok = true;
		snprintf(m->what, sizeof(m->what), "--match %s", arg);
		return 0;
	case MATCH_CGROUP:
		/* A unit's cgroup under systemd: system.slice/UNIT. */
		if (unit && (strchr(arg, '/') || !*arg || arg[0] == '.')) {
			snprintf(err, errlen,
				 "bad --unit '%s': give a unit name, e.g. prover.service", arg);
			return -1;
		}
		if (unit)
			snprintf(m->cgroup, sizeof(m->cgroup),
				 "/sys/fs/cgroup/system.slice/%s%s/cgroup.procs", arg,
				 strchr(arg, '.') ? "" : ".service");
		else
			snprintf(m->cgroup, sizeof(m->cgroup), "/sys/fs/cgroup/%s/cgroup.procs",
				 arg[0] == '/' ? arg + 1 : arg);
		if (strstr(arg, "..")) {
			snprintf(err, errlen, "bad %s '%s': no '..' in it",
				 unit ? "--unit" : "--cgroup", arg);
			return -1;
		}
		snprintf(m->what, sizeof(m->what), "%s %s", unit ? "--unit" : "--cgroup", arg);
		return 0;
	}
	return -1;
}

bool matcher__follows_restarts(const struct matcher *m)
{
	return m->kind != MATCH_PID;
}

void matcher__free(struct matcher *m)
{
	if (m->re_ok)
		regfree(&m->re);
	m->re_ok = false;
}

/* A process worth tracing: alive, not a kernel thread, not gaptrace itself. */
static bool traceable(pid_t pid, struct procfs_stat *st)
{
	if (pid == getpid() || procfs_stat_read(pid, 0, st))
		return false;
	return st->state != 'Z' && st->state != 'X' && !(st->flags & 0x00200000);
}

static bool name_matches(const struct matcher *m, pid_t pid)
{
	char comm[64], cmd[CMDLINE_MAX];
	long n;

	if (!procfs_comm(pid, 0, comm, sizeof(comm)))
		return false;
	/* Other gaptrace processes carry the pattern in their own command lines. */
	if (!strcmp(comm, "gaptrace"))
		return false;
	if (!strcmp(comm, m->name) || !regexec(&m->re, comm, 0, NULL, 0))
		return true;
	n = procfs_read(pid, 0, "cmdline", cmd, sizeof(cmd));
	if (n <= 0)
		return false;
	for (long i = 0; i < n - 1; i++)
		if (!cmd[i] || !isprint((unsigned char)cmd[i]))
			cmd[i] = ' ';
	cmd[n < (long)sizeof(cmd) ? n : (long)sizeof(cmd) - 1] = '\0';
	return !regexec(&m->re, cmd, 0, NULL, 0);
}

struct cand {
	pid_t pid, ppid;
};

/* One candidate whose parent is not a candidate, the lowest pid such. */
static pid_t pick(const struct cand *c, size_t n)
{
	pid_t best = 0;

	for (size_t i = 0; i < n; i++) {
		bool child = false;

		for (size_t j = 0; j < n && !child; j++)
			child = c[j].pid == c[i].ppid;
		if (!child && (!best || c[i].pid < best))
			best = c[i].pid;
	}
	return best;
}

static size_t scan_proc(const struct matcher *m, struct cand *c)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < MATCH_MAX_CANDIDATES) {
		struct procfs_stat st;
		uint64_t v;

		if (gt_parse_uint(de->d_name, 1, INT32_MAX, &v) || !traceable((pid_t)v, &st) ||
		    !name_matches(m, (pid_t)v))
			continue;
		c[n++] = (struct cand){(pid_t)v, st.ppid};
	}
	closedir(d);
	return n;
}

static size_t scan_cgroup(const struct matcher *m, struct cand *c)
{
	char *buf = gt_xmalloc(65536), *line, *save = NULL;
	long len = gt_read_file(m->cgroup, buf, 65536);
	size_t n = 0;

	for (line = len > 0 ? strtok_r(buf, "\n", &save) : NULL; line && n < MATCH_MAX_CANDIDATES;
	     line = strtok_r(NULL, "\n", &save)) {
		struct procfs_stat st;
		uint64_t v;

		if (!gt_parse_uint(line, 1, INT32_MAX, &v) && traceable((pid_t)v, &st))
			c[n++] = (struct cand){(pid_t)v, st.ppid};
	}
	free(buf);
	return n;
}

pid_t matcher__find(const struct matcher *m)
{
	struct cand *c;
	struct procfs_stat st;
	size_t n;
	pid_t pid;

	if (m->kind == MATCH_PID)
		return traceable(m->pid, &st) ? m->pid : 0;
	c = gt_xcalloc(MATCH_MAX_CANDIDATES, sizeof(*c));
	n = m->kind == MATCH_NAME ? scan_proc(m, c) : scan_cgroup(m, c);
	pid = pick(c, n);
	free(c);
	return pid;
}
