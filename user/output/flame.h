/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * flame.h: flame graphs of attributed gap time — a merged stack tree built
 * from the analysis's pieces, written as folded stacks or as a
 * self-contained interactive SVG; shared by `flame`, `report`, `diff`, html.
 *
 * Every stack of a tree built from a result reads, root first:
 *
 *   category ; [thread] ; user frames root..leaf ; kernel frames_[k] ; [kind]
 *
 * - category: "lock", "allocator", ... (gt_cat_names), the piece's category.
 * - [thread]: the comm of the thread whose time it is ("[gpu-worker]"); on a
 *   critical path that is the waker whose work explains the wait.
 * - user frames demangled (C++, Rust legacy and v0); a function inlined into
 *   its caller is a frame of its own, "name [inlined]", above the caller's
 *   (the capture's INLINES); an unresolved frame is
 *   "[module+0xOFF]" (file offset, when the capture's mappings cover it),
 *   "[module]" or "[unknown]"; kernel frames end in "_[k]".
 * - [kind]: a piece without a stack gets one synthetic frame naming what it
 *   was: "[blocked]", "[run queue]", "[preempted]", "[on CPU]", "[on CPU,
 *   not sampled]", "[launch latency]", "[lost events]", "[untraced thread]",
 *   "[CUDA API]" or the uprobed function ("[malloc_trim]").  Run-queue and
 *   preempted pieces keep that frame after their stack too, so scheduler
 *   time never reads as if the thread were still blocked where it slept.
 *
 * Frame names never contain ';' (it becomes ':', as stackcollapse-perf does)
 * nor control characters, and are at most FLAME_MAX_NAME bytes of UTF-8.
 */
#ifndef GT_FLAME_H
#define GT_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"

struct capture;

#define FLAME_MAX_NAME	512	   /* bytes of one frame name (longer: cut with "…") */
#define FLAME_MAX_DEPTH 256	   /* frames of one stack, category and thread included */
#define FLAME_MAX_NODES (1U << 20) /* tree nodes; past it stacks end early (counted) */

/* Which pieces go into a tree.  flame_filter__init sets "everything". */
struct flame_filter {
	int cat;	     /* enum gt_cat, or -1: all categories */
	int kind;	     /* enum gt_gap_kind, or -1: all gaps */
	int64_t unit;	     /* -1: all; else gaps inside unit or at its edges
			      * (unit_before == unit or unit_after == unit) */
	int64_t device;	     /* -1: all devices */
	int64_t gap;	     /* -1: all gaps; else only the gap with this index */
	struct capture *cap; /* optional: its MAPPINGS turn unresolved user frames
			      * into [module+0xOFF]; NULL: [module] */
};

void flame_filter__init(struct flame_filter *f);
/* True if gap g passes the gap-level parts of f (kind, unit, device, gap). */
bool flame_filter__match_gap(const struct flame_filter *f, const struct an_gap *g);

/* Each node carries two weights: the tree's own and, for diffs, a "before" one. */
enum flame_side {
	FLAME_AFTER = 0, /* the weight of a plain flame graph */
	FLAME_BEFORE = 1,
};

struct flame;

struct flame *flame__new(void);
void flame__free(struct flame *fl); /* NULL-safe */
/* Drops every stack (weights and nodes) but keeps name caches for reuse. */
void flame__clear(struct flame *fl);

/*
 * Adds the pieces of r (analysed with an_opts.pieces = true) that pass f to
 * side.  A diff adds the older result as FLAME_BEFORE and the newer as
 * FLAME_AFTER to the same tree.  r must stay alive and unchanged while it is
 * being added; caches are keyed on it, so adding per-gap trees of one result
 * in a loop (f->gap = i, flame__clear between) costs O(pieces of that gap).
 * Returns 0, or -1 when r holds no pieces (an_opts.pieces was false).
 */
int flame__add_result(struct flame *fl, const struct an_result *r, const struct flame_filter *f,
		      enum flame_side side);
/* flame__new + flame__add_result(FLAME_AFTER); NULL when r has no pieces. */
struct flame *flame__from_result(const struct an_result *r, const struct flame_filter *f);

/*
 * Adds one stack of n frames, root first, weighing ns on side.  cat (enum
 * gt_cat, or -1) colours it in the SVG.  Names are sanitised as above.  For
 * tests and for outputs that build trees from other data.
 */
void flame__add_stack(struct flame *fl, const char *const *frames, size_t n, int cat, uint64_t ns,
		      enum flame_side side);

uint64_t flame__total(const struct flame *fl, enum flame_side side);
/* Weight that could not be placed at full depth (FLAME_MAX_NODES reached). */
uint64_t flame__truncated_ns(const struct flame *fl);

/*
 * Folded ("collapsed") stacks, one line per distinct stack with a non-zero
 * FLAME_AFTER weight: "frame;frame;...;frame <ns>\n", root first, lines
 * sorted bytewise.  Loads in flamegraph.pl, speedscope, inferno, ...
 * Returns 0 or -1 on a write error.
 */
int flame__write_folded(const struct flame *fl, FILE *out);
/* Same with both weights, "stack <before_ns> <after_ns>" (difffolded.pl's format). */
int flame__write_folded_diff(const struct flame *fl, FILE *out);

struct flame_svg_opts {
	const char *title;    /* default "gaptrace: where GPU idle time went" */
	const char *subtitle; /* e.g. capture, filters; NULL: none */
	unsigned width;	      /* px, default 1200 */
	double min_width_px;  /* narrower frames are left out (counted); default 0.1 */
	/*
	 * Differential: frames are sized by width_side's weights and coloured by
	 * the change from FLAME_BEFORE to FLAME_AFTER: red grew, blue shrank,
	 * the stronger the larger the change relative to max(before, after);
	 * hover shows both.  width_side FLAME_BEFORE shows what disappeared.
	 */
	bool differential;
	enum flame_side width_side;
	/*
	 * For an <svg> inside an HTML page: no XML prolog, no page-wide Ctrl-F
	 * capture.  The script always finds its own <svg> (document.currentScript)
	 * and uses only "gtf-" classes, never ids, so several graphs can share a page.
	 */
	bool embed;
};

/*
 * Writes the interactive SVG: hover a frame for name, time and share of the
 * total (and of the zoomed frame), click to zoom (click the root or "Reset
 * zoom" to go back), type a regex in the search box to highlight matching
 * frames and see their share.  No external resources.  o may be NULL.
 * Returns 0 or -1 on a write error.
 */
int flame__write_svg(const struct flame *fl, FILE *out, const struct flame_svg_opts *o);

/* What a frame is; flame__add_stack guesses it from the name. */
enum flame_frame_kind {
	FLAME_FRAME_CATEGORY = 0, /* "lock" */
	FLAME_FRAME_THREAD,	  /* "[gpu-worker]" */
	FLAME_FRAME_USER,	  /* a resolved user-space function */
	FLAME_FRAME_KERNEL,	  /* "schedule_[k]" */
	FLAME_FRAME_UNRESOLVED,	  /* "[libcuda.so.1+0x1234]", "[unknown]" */
	FLAME_FRAME_SYNTHETIC,	  /* "[run queue]", "[malloc_trim]", ... */
	FLAME_FRAME_INLINED,	  /* "crunch [inlined]": a user function inlined into its caller */
};

/* Suffix of an inlined frame's name. */
#define FLAME_INLINED_SUFFIX " [inlined]"

/* A distinct stack (a node with its own weight), for top-N lists. */
struct flame_stack {
	int cat;		    /* of its root frame, or -1 */
	uint64_t ns;		    /* FLAME_AFTER self weight */
	uint64_t before_ns;	    /* FLAME_BEFORE self weight */
	const char *const *frames;  /* root first: frames[0] is the category */
	const unsigned char *kinds; /* enum flame_frame_kind of each frame */
	size_t nframes;
};

/*
 * Calls cb for the n heaviest stacks (by FLAME_AFTER weight) whose category
 * is cat (-1: any), heaviest first, ties by name.  The frames array is valid
 * during the call only.  Returns how many were reported.
 */
size_t flame__top_stacks(const struct flame *fl, int cat, size_t n,
			 void (*cb)(const struct flame_stack *s, void *ctx), void *ctx);

/*
 * The leaf-most "meaningful" frames of a stack for one-line summaries: a
 * synthetic leaf ("[run queue]") if any, then resolved user frames (kernel
 * frames only when there is no user frame); never the category, the
 * thread or unresolved frames.  Fills out[] leaf first, returns how many
 * (at most max).
 */
size_t flame_stack__summary(const struct flame_stack *s, const char **out, size_t max);
/* The stack's thread frame without brackets ("gpu-worker"), or NULL. */
const char *flame_stack__thread(const struct flame_stack *s, char *buf, size_t len);

/* ---- report helpers (gaptrace report uses these; an HTML report may too) ---- */

struct json;

/*
 * Text section "Top stacks by category": for each category with time, its
 * per_cat heaviest stacks over all gaps, as "thread: leaf ← caller ← ..."
 * (flame_stack__summary) with time and share of the category.  Prints
 * nothing when r holds no pieces.
 */
void flame__print_top_stacks(FILE *f, const struct an_result *r, size_t per_cat);
/*
 * JSON: writes key "top_stacks" with the n heaviest stacks of gap index gap:
 * [{"category", "ns", "thread_name", "frames": [leaf first, demangled,
 * category and thread left out], "frame_info": [the same frames as
 * {"name", "inlined"}: name without the " [inlined]" suffix]}].  scratch is a flame reused across gaps
 * (cleared here), so a loop over all gaps costs O(pieces).
 */
void flame__json_top_stacks(struct json *j, struct flame *scratch, const struct an_result *r,
			    uint32_t gap, size_t n);

#endif /* GT_FLAME_H */
