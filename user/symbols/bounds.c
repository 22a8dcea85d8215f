// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bounds.c: counting and reporting the cuts the symbolizer makes when an
 * object a traced program maps goes past a cap (bounds.h).
 */
#include <stddef.h>

#include "support/util.h"
#include "symbols/bounds.h"

struct bound_info {
	const char *key;
	const char *what; /* the warning's subject and consequence */
};

static const struct bound_info infos[BOUND_NKINDS] = {
    [BOUND_MINIDEBUG] = {"bounds.minidebuginfo",
			 ".gnu_debugdata (MiniDebugInfo) inflates past 64 MiB: only its "
			 ".dynsym is used"},
    [BOUND_ZDWARF] = {"bounds.compressed_dwarf",
		      "compressed DWARF inflates past 256 MiB a section or 512 MiB in all: "
		      "no inline frames from it"},
    [BOUND_NAMES] = {"bounds.symbol_names",
		     "symbol names past 4 KiB each or 64 MiB in all: names cut or dropped"},
    [BOUND_SCOPES] = {"bounds.dwarf_scopes",
		      "DWARF scopes nested past 1024 levels or 1M DIEs: inline chain cut"},
    [BOUND_USDT] = {"bounds.usdt_notes",
		    "over 65536 .note.stapsdt notes or 4096 probe names: the rest ignored"},
    [BOUND_OBJECTS] = {"bounds.objects_closed",
		       "more mapped objects than the symbolizer keeps open (256 or 256 MiB): "
		       "the least recently used are closed and reopened on demand"},
    [BOUND_INLINES_LOST] = {"bounds.inlines_lost",
			    "inline frames not resolved: their object was closed (too many "
			    "objects) and its process is gone"},
    [BOUND_CFI_MAPS] = {"bounds.cfi_mappings",
			"more than 64 executable mappings in one process: the CFI walk "
			"ends in those past the 64th (lowest addresses kept)"},
    [BOUND_MAPPINGS] = {"bounds.mappings",
			"more than 65536 mappings in a process (1M in all) or 8 MiB of their "
			"paths (64 MiB in all): the rest are left out, their frames unnamed"},
};

static uint64_t counts[BOUND_NKINDS];

void bound__cut(enum bound_kind kind, const char *object)
{
	if ((unsigned)kind >= BOUND_NKINDS)
		return;
	if (!counts[kind]++)
		gt_warn("%s%s%s (counted in the capture as %s)", object ? object : "",
			object ? ": " : "", infos[kind].what, infos[kind].key);
	else
		gt_dbg("%s%s%s", object ? object : "", object ? ": " : "", infos[kind].what);
}

uint64_t bound__count(enum bound_kind kind)
{
	return (unsigned)kind < BOUND_NKINDS ? counts[kind] : 0;
}

const char *bound__key(enum bound_kind kind)
{
	return (unsigned)kind < BOUND_NKINDS ? infos[kind].key : "";
}
