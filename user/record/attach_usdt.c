// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_usdt.c: attaches gaptrace's USDT programs to an object's
 * gaptrace:* probes, within the spec ids and sites libbpf can hold.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "record/attach.h"
#include "record/attach_priv.h"
#include "gaptrace.skel.h"
#include "symbols/usdt_specs.h"
#include "support/procfs.h"
#include "support/util.h"

static const char *const usdt_names[] = {
    "unit_begin", "unit_end", "gpu_launch", "gpu_op", "gpu_batch", "gpu_name",
};

static struct bpf_program *usdt_prog(struct attacher *a, size_t i)
{
	struct gaptrace_bpf *s = a->skel;
	struct bpf_program *progs[] = {
	    s->progs.usdt_unit_begin, s->progs.usdt_unit_end,  s->progs.usdt_gpu_launch,
	    s->progs.usdt_gpu_op,     s->progs.usdt_gpu_batch, s->progs.usdt_gpu_name,
	};

	return progs[i];
}

/*
 * libbpf's attach and the spec-id accounting under one lock: the reapers
 * destroy USDT links (which give spec ids back to libbpf) meanwhile.
 */
static struct bpf_link *usdt_attach(struct attacher *a, const struct bpf_program *prog, pid_t pid,
				    const char *path, const char *name, unsigned specs)
{
	struct bpf_link *l;
	int err;

	pthread_mutex_lock(&a->usdt_lock);
	l = bpf_program__attach_usdt(prog, pid, path, "gaptrace", name, NULL);
	err = l ? 0 : errno;
	if (l)
		a->spec_ids_used += specs;
	pthread_mutex_unlock(&a->usdt_lock);
	errno = err;
	return l;
}

static struct bpf_link *usdt_link(struct attacher *a, const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *name, unsigned specs)
{
	uint64_t t0 = gt_now_mono_ns();
	struct bpf_link *l = usdt_attach(a, prog, pid, path, name, specs);
	int err = l ? 0 : errno;
	pid_t alt;

	attach__note_slow("USDT probe", name, pid, t0);
	if (!l && err == ESRCH && (alt = procfs_live_thread(pid, pid)) > 0) {
		l = usdt_attach(a, prog, alt, path, name, specs);
		err = l ? 0 : errno;
	}
	if (!l && err == ESRCH)
		attach__target_gone(a, pid);
	errno = err;
	return l;
}

/*
 * libbpf spends a spec id per distinct argument string of a probe and fails
 * (1.1.2: with a double free) when its map has none left: a probe is
 * attached only if its specs fit in what is free, and only with at most
 * GT_USDT_MAX_SITES sites.  Warned once, counted for the summary.
 */
static bool usdt_fits(struct attacher *a, pid_t pid, const char *path, const char *name,
		      const struct usdt_census *c)
{
	unsigned free_ids;

	pthread_mutex_lock(&a->usdt_lock);
	free_ids = GT_USDT_SPEC_IDS - GT_MIN(a->spec_ids_used, GT_USDT_SPEC_IDS);
	pthread_mutex_unlock(&a->usdt_lock);
	if (c->specs <= free_ids && c->sites <= GT_USDT_MAX_SITES)
		return true;
	if (!a->usdt_skipped++)
		gt_warn("not attaching USDT gaptrace:%s in %s (pid %d): %u sites with %u%s "
			"distinct argument specs, %u spec ids free (of %u) and %u sites allowed; "
			"its records will be missing (counted in the summary)",
			name, path, pid, c->sites, c->specs, c->specs > free_ids ? "+" : "",
			free_ids, GT_USDT_SPEC_IDS, GT_USDT_MAX_SITES);
	return false;
}

int attach__usdt(struct attacher *a, pid_t pid, const char *obj, const char *path)
{
	struct usdt_census census[GT_ARRAY_SIZE(usdt_names)];
	int n = 0;

	if (a->gone || syms_elf_usdt_census(path, "gaptrace", usdt_names, GT_ARRAY_SIZE(usdt_names),
					    GT_USDT_SPEC_IDS, census) <= 0)
		return 0;
	for (size_t i = 0; i < GT_ARRAY_SIZE(usdt_names); i++) {
		struct bpf_link *l;
		size_t site = SIZE_MAX;

		if (!census[i].sites || !usdt_fits(a, pid, obj, usdt_names[i], &census[i]))
			continue;
		if (attach__gated(i) &&
		    attach__gate_hold(a, pid, path, i, census[i].specs, &site)) {
			a->usdt_seen |= 1U << i;
			continue;
		}
		l = usdt_link(a, usdt_prog(a, i), pid, path, usdt_names[i], census[i].specs);
		if (!l && a->gone) {
			attach__warn_gone(a, pid, "USDT probe", usdt_names[i]);
			break;
		}
		if (!l) {
			attach__note_refused(a, pid, errno);
			gt_warn("cannot attach USDT gaptrace:%s in %s (pid %d): %s; its records "
				"will be missing",
				usdt_names[i], obj, pid, strerror(errno));
			continue;
		}
		attach__add_link(a, l, census[i].specs, true);
		attach__gate_link(a, site, l);
		a->usdt_links++;
		a->usdt_seen |= 1U << i;
		n++;
	}
	if (n)
		gt_dbg("attached %d USDT probes in %s (pid %d)", n, obj, pid);
	return n;
}

struct bpf_link *attach__usdt_probe(struct attacher *a, size_t i, pid_t pid, const char *path,
				    unsigned specs)
{
	return usdt_link(a, usdt_prog(a, i), pid, path, usdt_names[i], specs);
}

unsigned attacher__usdt_links(const struct attacher *a)
{
	return a->usdt_links;
}

bool attacher__has_usdt(const struct attacher *a, const char *name)
{
	for (size_t i = 0; i < GT_ARRAY_SIZE(usdt_names); i++)
		if (!strcmp(name, usdt_names[i]))
			return a->usdt_seen & (1U << i);
	return false;
}
