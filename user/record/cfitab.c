// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfitab.c: a bounded parser of DWARF call frame information that keeps only
 * what an x86-64 unwinder needs per address range: where the CFA is, that the
 * return address sits at CFA - 8, and where the caller's %rbp was saved.
 *
 * The bytes come from files a traced program maps, so they are hostile: every
 * length is checked against its section, every entry against its own end,
 * the remembered-state stack and the work per object are capped, and what is
 * skipped is counted (struct cfitab_stats), never guessed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/cfitab.h"
#include "support/util.h"

#define REG_RBP	     6
#define REG_RSP	     7
#define REG_RA	     16
#define REMEMBER_MAX 16	   /* DW_CFA_remember_state depth kept */
#define AUG_MAX	     16	   /* augmentation string bytes read */
#define CIE_CACHE    8	   /* CIEs kept parsed (most objects use one or two) */
#define OPS_PER_ROW  64ULL /* work budget: instructions per row allowed, on average */
#define OPS_MIN	     (1ULL << 20)

#define DW_EH_PE_omit	 0xff
#define DW_EH_PE_absptr	 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2	 0x02
#define DW_EH_PE_udata4	 0x03
#define DW_EH_PE_udata8	 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2	 0x0a
#define DW_EH_PE_sdata4	 0x0b
#define DW_EH_PE_sdata8	 0x0c
#define DW_EH_PE_pcrel	 0x10

/* Row priorities at one address: an FDE's row beats a fallback, which beats an FDE's end. */
enum { PRIO_END = 0, PRIO_FALLBACK = 1, PRIO_FDE = 2 };

struct cfitab_raw {
	struct gt_cfi_row row;
	uint32_t prio;
	uint32_t seq;
};

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_n(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = (uint8_t)rd_n(c, 1);

		if (c->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (shift >= 64) {
			c->bad = true;
			return 0;
		}
		b = (uint8_t)rd_n(c, 1);
		if (c->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* An encoded pointer; base: the ELF address of data's first byte (pcrel). */
static bool rd_ptr(struct cur *c, uint8_t enc, const uint8_t *data, uint64_t base, uint64_t *out)
{
	const uint8_t *at = c->p;
	uint64_t v;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		v = rd_n(c, 8);
		break;
	case DW_EH_PE_uleb128:
		v = rd_uleb(c);
		break;
	case DW_EH_PE_udata2:
		v = rd_n(c, 2);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)rd_n(c, 2);
		break;
	case DW_EH_PE_udata4:
		v = rd_n(c, 4);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)rd_n(c, 4);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)rd_sleb(c);
		break;
	default:
		c->bad = true;
		return false;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += base + (uint64_t)(at - data);
		break;
	default:
		/* datarel, textrel, funcrel, aligned: not used by x86-64 .eh_frame FDEs. */
		c->bad = true;
		return false;
	}
	*out = v;
	return !c->bad;
}

struct cie {
	uint64_t off;
	int64_t data_align;
	uint64_t code_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool aug_z, signal;
	const uint8_t *insns, *insns_end;
};

/* The register rules the rows keep, as the CFA instructions left them. */
struct state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	int16_t plt; /* > 0: the CFA is the PLT expression, this its byte threshold */
	bool cfa_expr;
	int8_t rbp; /* 0: unchanged, 1: a rule the walk cannot follow, else -n: at CFA - 8n */
	int64_t rbp_off;
	int8_t ra; /* 0: at CFA + ra_off, 1: undefined, 2: another rule */
	int64_t ra_off;
};

static void raw_push(struct cfitab *t, uint64_t pc, struct gt_cfi_row row, uint32_t prio)
{
	if (pc > UINT32_MAX) {
		t->st.far_pcs++;
		return;
	}
	if (t->nraw >= t->max_rows) {
		t->st.truncated = true;
		return;
	}
	gt_grow((void **)&t->raw, &t->raw_cap, t->nraw, sizeof(*t->raw));
	row.pc = (uint32_t)pc;
	t->raw[t->nraw++] = (struct cfitab_raw){.row = row, .prio = prio, .seq = t->seq++};
}

static struct gt_cfi_row state_row(const struct state *s, bool signal)
{
	struct gt_cfi_row r = {.kind = GT_CFI_EXPR};

	if (signal) {
		r.kind = GT_CFI_SIGNAL;
		return r;
	}
	if (s->ra == 1) {
		r.kind = GT_CFI_ROOT;
		return r;
	}
	if (s->ra != 0 || s->ra_off != -8 || s->rbp == 1)
		return r;
	if (s->rbp < 0) {
		if (s->rbp_off % 8 || s->rbp_off / 8 < -128 || s->rbp_off / 8 > -1)
			return r;
		r.rbp8 = (int8_t)(s->rbp_off / 8);
	}
	if (s->cfa_expr) {
		if (s->plt > 0) {
			r.kind = GT_CFI_PLT;
			r.cfa8 = s->plt;
		}
		return r;
	}
	if ((s->cfa_reg != REG_RSP && s->cfa_reg != REG_RBP) || s->cfa_off % 8 ||
	    s->cfa_off / 8 < INT16_MIN || s->cfa_off / 8 > INT16_MAX)
		return r;
	r.kind = s->cfa_reg == REG_RSP ? GT_CFI_RSP : GT_CFI_RBP;
	r.cfa8 = (int16_t)(s->cfa_off / 8);
	return r;
}

/*
 * The PLT's CFA as linkers write it: %rsp + 8, plus 8 once %rip is at or
 * past byte N of its 16-byte entry (the push): breg7 8; breg16 0; lit15;
 * and; litN; ge; lit3; shl; plus.  N, or 0 for any other expression.
 */
static int16_t plt_expr(const uint8_t *b, uint64_t len)
{
	static const uint8_t head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
	static const uint8_t tail[] = {0x2a, 0x33, 0x24, 0x22};

	if (len != sizeof(head) + 1 + sizeof(tail) || memcmp(b, head, sizeof(head)) ||
	    memcmp(b + sizeof(head) + 1, tail, sizeof(tail)))
		return 0;
	if (b[sizeof(head)] < 0x30 || b[sizeof(head)] > 0x4f)
		return 0;
	return (int16_t)(b[sizeof(head)] - 0x30);
}

static void set_rule(struct state *s, uint64_t reg, int kind, int64_t off)
{
	/* kind: 0 offset, 1 undefined, 2 same value, 3 anything else. */
	if (reg == REG_RBP) {
		s->rbp = kind == 0 ? -1 : kind == 3 ? 1 : 0;
		s->rbp_off = off;
	} else if (reg == REG_RA) {
		s->ra = kind == 0 ? 0 : kind == 1 ? 1 : 2;
		s->ra_off = off;
	}
}

static void restore_reg(struct state *s, const struct state *init, uint64_t reg)
{
	if (reg == REG_RBP) {
		s->rbp = init->rbp;
		s->rbp_off = init->rbp_off;
	} else if (reg == REG_RA) {
		s->ra = init->ra;
		s->ra_off = init->ra_off;
	}
}

struct fde_run {
	struct cfitab *t;
	const struct cie *cie;
	const uint8_t *sec;
	uint64_t sec_addr;
	uint64_t loc, end;
	struct state init, cur;
	struct gt_cfi_row last;
	bool have_last;
};

static void run_emit(struct fde_run *r)
{
	struct gt_cfi_row row = state_row(&r->cur, r->cie->signal);

	if (r->loc >= r->end)
		return;
	if (r->have_last && !memcmp(&row, &r->last, sizeof(row)))
		return;
	if (row.kind == GT_CFI_EXPR)
		r->t->st.expr_rows++;
	raw_push(r->t, r->loc, row, PRIO_FDE);
	r->last = row;
	r->have_last = true;
}

static bool run_advance(struct fde_run *r, uint64_t delta)
{
	run_emit(r);
	if (delta > r->end - r->loc)
		return false;
	r->loc += delta;
	return true;
}

/* Runs CFA instructions [p, end); fde: false for the CIE's initial ones.  0, or -1 on a bad one. */
static int run_insns(struct fde_run *r, const uint8_t *p, const uint8_t *end, bool fde)
{
	const struct cie *cie = r->cie;
	struct state stack[REMEMBER_MAX];
	unsigned depth = 0;
	struct cur c = {p, end, false};
	struct state *s = &r->cur;

	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)rd_n(&c, 1);
		uint64_t reg, a = 0;

		if (r->t->st.ops++ >= r->t->max_ops) {
			r->t->st.truncated = true;
			return -1;
		}
		switch (op >> 6) {
		case 1:
			if (fde && !run_advance(r, (op & 0x3f) * cie->code_align))
				return -1;
			continue;
		case 2:
			a = rd_uleb(&c);
			set_rule(s, op & 0x3f, 0, (int64_t)a * cie->data_align);
			continue;
		case 3:
			restore_reg(s, &r->init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			if (!rd_ptr(&c, cie->fde_enc, r->sec, r->sec_addr, &a) || a < r->loc ||
			    (fde && !run_advance(r, a - r->loc)))
				return -1;
			break;
		case 0x02:
		case 0x03:
		case 0x04: /* advance_loc1/2/4 */
			a = rd_n(&c, op == 0x02 ? 1 : op == 0x03 ? 2 : 4);
			if (c.bad || (fde && !run_advance(r, a * cie->code_align)))
				return -1;
			break;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&c);
			set_rule(s, reg, 0, (int64_t)rd_uleb(&c) * cie->data_align);
			break;
		case 0x06: /* restore_extended */
			restore_reg(s, &r->init, rd_uleb(&c));
			break;
		case 0x07: /* undefined */
			set_rule(s, rd_uleb(&c), 1, 0);
			break;
		case 0x08: /* same_value */
			set_rule(s, rd_uleb(&c), 2, 0);
			break;
		case 0x09: /* register */
			reg = rd_uleb(&c);
			rd_uleb(&c);
			set_rule(s, reg, 3, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == REMEMBER_MAX)
				return -1;
			stack[depth++] = *s;
			break;
		case 0x0b: /* restore_state */
			if (!depth)
				return -1;
			/* The CFA rule too, as GCC's epilogues (remember, ret, restore) expect. */
			*s = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			s->cfa_reg = rd_uleb(&c);
			s->cfa_off = (int64_t)rd_uleb(&c);
			s->cfa_expr = false;
			break;
		case 0x0d: /* def_cfa_register */
			s->cfa_reg = rd_uleb(&c);
			s->cfa_expr = false;
			break;
		case 0x0e: /* def_cfa_offset */
			s->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case 0x0f: /* def_cfa_expression */
			a = rd_uleb(&c);
			if (c.bad || a > (uint64_t)(c.end - c.p))
				return -1;
			s->cfa_expr = true;
			s->plt = plt_expr(c.p, a);
			c.p += a;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = rd_uleb(&c);
			a = rd_uleb(&c);
			if (c.bad || a > (uint64_t)(c.end - c.p))
				return -1;
			c.p += a;
			set_rule(s, reg, 3, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&c);
			set_rule(s, reg, 0, rd_sleb(&c) * cie->data_align);
			break;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = rd_uleb(&c);
			s->cfa_off = rd_sleb(&c) * cie->data_align;
			s->cfa_expr = false;
			break;
		case 0x13: /* def_cfa_offset_sf */
			s->cfa_off = rd_sleb(&c) * cie->data_align;
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&c);
			if (op == 0x14)
				rd_uleb(&c);
			else
				rd_sleb(&c);
			set_rule(s, reg, 3, 0);
			break;
		case 0x2e: /* GNU_args_size */
			rd_uleb(&c);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			set_rule(s, reg, 0, -(int64_t)rd_uleb(&c) * cie->data_align);
			break;
		default:
			return -1;
		}
	}
	return c.bad ? -1 : 0;
}

/* Parses the CIE at off of the section. */
static bool parse_cie(const uint8_t *sec, size_t size, uint64_t off, bool eh, struct cie *out)
{
	struct cur c = {sec, sec + size, false};
	uint64_t len, id;
	char aug[AUG_MAX + 1] = "";
	unsigned naug = 0;
	uint8_t ver;
	bool is64 = false;

	if (off >= size)
		return false;
	c.p = sec + off;
	len = rd_n(&c, 4);
	if (len == 0xffffffff) {
		len = rd_n(&c, 8);
		is64 = true;
	}
	if (c.bad || !len || len > (uint64_t)(c.end - c.p))
		return false;
	c.end = c.p + len;
	id = rd_n(&c, is64 ? 8 : 4);
	if (eh ? id != 0 : id != (is64 ? ~0ULL : 0xffffffffULL))
		return false;
	*out = (struct cie){.off = off, .fde_enc = eh ? DW_EH_PE_absptr : DW_EH_PE_udata8};
	ver = (uint8_t)rd_n(&c, 1);
	if (ver != 1 && ver != 3 && ver != 4)
		return false;
	for (;;) {
		uint8_t ch = (uint8_t)rd_n(&c, 1);

		if (c.bad)
			return false;
		if (!ch)
			break;
		if (naug == AUG_MAX)
			return false;
		aug[naug++] = (char)ch;
	}
	if (ver == 4) {
		/* address_size, segment_selector_size */
		if (rd_n(&c, 1) != 8 || rd_n(&c, 1) != 0)
			return false;
	}
	out->code_align = rd_uleb(&c);
	out->data_align = rd_sleb(&c);
	out->ra_reg = ver == 1 ? rd_n(&c, 1) : rd_uleb(&c);
	if (c.bad || out->ra_reg != REG_RA || !out->code_align || out->code_align > 16 ||
	    out->data_align < -64 || out->data_align > 64)
		return false;
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&c);
		struct cur a;

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return false;
		a = (struct cur){c.p, c.p + alen, false};
		out->aug_z = true;
		for (unsigned i = 1; i < naug; i++) {
			uint64_t dummy;
			uint8_t enc;

			switch (aug[i]) {
			case 'R':
				out->fde_enc = (uint8_t)rd_n(&a, 1);
				break;
			case 'L':
				rd_n(&a, 1);
				break;
			case 'P':
				enc = (uint8_t)rd_n(&a, 1);
				/* The personality routine's address: any encoding, skipped. */
				if (!rd_ptr(&a, enc & 0x7f, sec, 0, &dummy))
					return false;
				break;
			case 'S':
				out->signal = true;
				break;
			case 'B':
			case 'G':
				break;
			default:
				return false;
			}
			if (a.bad)
				return false;
		}
		c.p += alen;
	} else if (naug) {
		/* Old "eh" augmentations carry data we cannot size. */
		return false;
	}
	out->insns = c.p;
	out->insns_end = c.end;
	return true;
}

static const struct cie *cie_get(struct cie *cache, unsigned *next, const uint8_t *sec, size_t size,
				 uint64_t off, bool eh, struct cfitab *t)
{
	for (unsigned i = 0; i < CIE_CACHE; i++)
		if (cache[i].insns && cache[i].off == off)
			return &cache[i];
	struct cie *c = &cache[*next % CIE_CACHE];

	if (!parse_cie(sec, size, off, eh, c)) {
		c->insns = NULL;
		return NULL;
	}
	(*next)++;
	t->st.cies++;
	return c;
}

int cfitab__add_section(struct cfitab *t, const uint8_t *sec, size_t size, uint64_t addr, bool eh)
{
	struct cie cache[CIE_CACHE] = {};
	unsigned next = 0;
	uint64_t off = 0;

	while (off + 4 <= size && !t->st.truncated) {
		struct cur c = {sec + off, sec + size, false};
		uint64_t len, id, id_at, pc = 0, range = 0;
		const struct cie *cie;
		struct fde_run r;
		bool is64 = false;

		len = rd_n(&c, 4);
		if (len == 0 && eh)
			break; /* the terminator */
		if (len == 0xffffffff) {
			len = rd_n(&c, 8);
			is64 = true;
		}
		if (c.bad || len < 4 || len > (uint64_t)(c.end - c.p)) {
			t->st.bad_entries++;
			break; /* a lying length: nothing after it can be found */
		}
		c.end = c.p + len;
		id_at = (uint64_t)(c.p - sec);
		id = rd_n(&c, is64 ? 8 : 4);
		off = (uint64_t)(c.end - sec);
		if (eh ? id == 0 : id == (is64 ? ~0ULL : 0xffffffffULL))
			continue; /* a CIE, parsed when an FDE names it */
		/* .eh_frame: id is the distance back to the CIE; .debug_frame: its offset. */
		if (eh && id > id_at) {
			t->st.bad_entries++;
			continue;
		}
		cie = cie_get(cache, &next, sec, size, eh ? id_at - id : id, eh, t);
		if (!cie) {
			t->st.bad_entries++;
			continue;
		}
		if (!rd_ptr(&c, cie->fde_enc, sec, addr, &pc) ||
		    !rd_ptr(&c, cie->fde_enc & 0x0f, sec, addr, &range) || !range ||
		    range > (1ULL << 32) || pc + range < pc) {
			/* A zero-range FDE is a linker's leftover of a discarded function. */
			if (c.bad || range)
				t->st.bad_entries++;
			continue;
		}
		if (cie->aug_z) {
			uint64_t alen = rd_uleb(&c);

			if (c.bad || alen > (uint64_t)(c.end - c.p)) {
				t->st.bad_entries++;
				continue;
			}
			c.p += alen;
		}
		t->st.fdes++;
		r = (struct fde_run){
		    .t = t, .cie = cie, .sec = sec, .sec_addr = addr, .loc = pc, .end = pc + range};
		r.cur.cfa_reg = REG_RSP;
		r.cur.cfa_off = 8;
		r.cur.ra_off = -8;
		if (run_insns(&r, cie->insns, cie->insns_end, false)) {
			t->st.bad_ops++;
			r.cur.cfa_expr = true;
			r.cur.plt = 0;
		}
		r.init = r.cur;
		if (run_insns(&r, c.p, c.end, true)) {
			/* Cut short: from here on no row is trusted. */
			t->st.bad_ops++;
			r.cur.cfa_expr = true;
			r.cur.plt = 0;
		}
		run_emit(&r);
		raw_push(t, r.end, (struct gt_cfi_row){.kind = GT_CFI_NONE}, PRIO_END);
	}
	return t->st.truncated ? -E2BIG : 0;
}

void cfitab__add_fallback(struct cfitab *t, uint64_t start, uint64_t end, uint8_t kind,
			  int16_t cfa8)
{
	if (start >= end)
		return;
	raw_push(t, start, (struct gt_cfi_row){.kind = kind, .cfa8 = cfa8}, PRIO_FALLBACK);
	raw_push(t, end, (struct gt_cfi_row){.kind = GT_CFI_NONE}, PRIO_END);
}

static int raw_cmp(const void *a, const void *b)
{
	const struct cfitab_raw *x = a, *y = b;

	if (x->row.pc != y->row.pc)
		return x->row.pc < y->row.pc ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool row_same(const struct gt_cfi_row *a, const struct gt_cfi_row *b)
{
	return a->kind == b->kind && a->rbp8 == b->rbp8 && a->cfa8 == b->cfa8;
}

int cfitab__finish(struct cfitab *t)
{
	size_t n = 0;

	free(t->rows);
	t->rows = NULL;
	t->nr = 0;
	if (!t->nraw)
		goto out;
	qsort(t->raw, t->nraw, sizeof(*t->raw), raw_cmp);
	t->rows = gt_xcalloc(t->nraw, sizeof(*t->rows));
	for (size_t i = 0; i < t->nraw; i++) {
		const struct gt_cfi_row *r = &t->raw[i].row;

		/* Of several rows at one address the last sorted wins (highest priority, latest). */
		if (i + 1 < t->nraw && t->raw[i + 1].row.pc == r->pc)
			continue;
		if (n && row_same(&t->rows[n - 1], r))
			continue;
		if (!n && r->kind == GT_CFI_NONE)
			continue;
		t->rows[n++] = *r;
	}
	t->nr = n;
out:
	free(t->raw);
	t->raw = NULL;
	t->nraw = t->raw_cap = 0;
	return 0;
}

struct gt_cfi_row cfitab__find(const struct cfitab *t, uint32_t pc)
{
	size_t lo = 0, hi = t->nr;

	/* The last row at or before pc. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return (struct gt_cfi_row){.pc = pc, .kind = GT_CFI_NONE};
	return t->rows[lo - 1];
}

void cfitab__init(struct cfitab *t, size_t max_rows)
{
	*t = (struct cfitab){.max_rows = max_rows};
	t->max_ops = GT_MAX(OPS_MIN, (uint64_t)max_rows * OPS_PER_ROW);
}

void cfitab__free(struct cfitab *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->raw);
	cfitab__init(t, t->max_rows);
}
