/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * capture.h: the gaptrace capture file, an append-only sequence of blocks
 * (pcapng is the model), and its writer and defensive reader.
 *
 * On disk every block is
 *
 *   u32 type | u32 total_len | u32 body_len | u32 flags(0)
 *   body (body_len bytes) | zero padding to a multiple of 8
 *   u32 crc32 | u32 total_len
 *
 * total_len = 16 + round_up(body_len, 8) + 8.  crc32 (zlib polynomial) covers
 * everything before it: the 16-byte head, the body and the padding.  Integers
 * are in the writer's byte order.
 *
 * The first block is HEADER (type 0x0A0D0D0A reads the same in both byte
 * orders).  Its body starts with u32 0x1A2B3C4D (reveals the byte order),
 * u16 major, u16 minor, then key=value strings (see KV bodies).  A reader
 * refuses a major it does not know and skips block types it does not know.
 *
 * Block bodies:
 *   EVENTS    concatenated records, each starting with struct gt_hdr
 *             (include/gaptrace/gaptrace.h); size >= 16, <= GT_CAP_MAX_RECORD,
 *             multiple of 8 not required.  A record of a known type smaller
 *             than its first layout (gt_rec_min_size) is skipped.
 *   KV        (HEADER after its 8 fixed bytes, COUNTERS, END): a sequence of
 *             NUL-terminated "key=value" strings.
 *   STACKS    entries: s32 stack_id | u32 pid (0: kernel stack) | u16 nr |
 *             u16 flags (GT_STACK_*) | u32 0 | u64 ip[nr]
 *             GT_STACK_ROOT: the kernel's CFI walk reached the thread's root.
 *             GT_STACK_DWARF: unwound by the recorder from a --stacks dwarf
 *             snapshot; its id is >= 0x40000000 (frame-pointer stack ids,
 *             made in BPF and never reused in a capture, are below; each
 *             (pid, frames) is written once).
 *   SYMBOLS   entries: u64 ip | u32 pid (0: kernel) | u32 sym_off |
 *             u16 name_len | u16 module_len | name | module | pad to 8.
 *             name_len 0 = unresolved.  Strings are not NUL-terminated.
 *   MAPPINGS  entries: u64 start | u64 end | u64 pgoff | u32 pid | u16 path_len |
 *             u8 build_id_len | u8 0 | u8 build_id[20] | u32 0 | path | pad to 8
 *   PROBES    entries: u32 func_id | u16 name_len | u16 module_len |
 *             u16 category_len | u16 0 | u32 0 | name | module | category |
 *             pad to 8
 *   GPU_OPS   (since 1.1) GT_REC_GPU_OP records (struct gt_gpu_op, exactly
 *             its size), delta-coded; the reader hands back the same
 *             records, byte for byte.  Body: u32 count | u32 flags (0) |
 *             count entries.  Integers are LEB128 varints; "z" marks a
 *             zigzag-coded wrapping u64 difference.  Each entry is
 *               ctx: 0 = a new context (then kind, device, stream; it gets
 *                    the next index, from 1), or the index of an earlier
 *                    one of this block
 *               mask (GPU_OPS fields below), z start_ns - previous start_ns,
 *               z end_ns - start_ns, z op_id - previous op_id,
 *               then in mask bit order: 0x1 hdr.cpu, 0x2 z hdr.ts_ns delta,
 *               0x4 pid, 0x8 tid, 0x10 z bytes delta, 0x20 context,
 *               0x40 name_id, 0x80 subkind, 0x100 rec.tid, 0x200 grid[3]
 *               then block[3].
 *             "Previous" is the context's last record in this block (a new
 *             context starts from a zero record with its kind, device and
 *             stream); a field whose bit is clear repeats it.  At most
 *             GT_CAP_GPU_MAX_CTX contexts per block; every block decodes
 *             alone.  A 1.0 reader skips the block as unknown type 8: it
 *             sees no GPU operation.
 *   INLINES   (since 1.2) the inlined calls at an address, for the SYMBOLS
 *             entry of the same (pid, ip): u64 ip | u32 pid | u8 n |
 *             u8 flags (GT_INLINE_*) | u16 0 | n times (u16 len | name) |
 *             pad to 8.  Names innermost first; the function they were
 *             inlined into is the SYMBOLS name and is not repeated.  1 <= n
 *             <= GT_CAP_MAX_INLINE, 1 <= len <= GT_CAP_MAX_STRING - 1.
 *             GT_INLINE_CALLER: the chain of ip as a return address (stack
 *             frames past the first, looked up at ip - 1); else as the
 *             first frame.  An address may have one entry of each.  A 1.1
 *             reader skips the block as unknown type 9: it shows no inline
 *             frames.
 *   ZSTD      (since 1.3) a batch of blocks compressed together: u32 raw_len |
 *             u32 types | one zstd frame that decompresses to exactly
 *             raw_len bytes (1 <= raw_len <= GT_CAP_MAX_ZRAW): the inner
 *             blocks, each u32 type | u32 body_len | body | zero padding to
 *             a multiple of 8.  The outer CRC covers the compressed bytes;
 *             inner blocks are read as if they stood in the file in its
 *             place (never HEADER or ZSTD).  types has bit 1 << t set for
 *             each inner type t < 32 (a reader looking for one type skips
 *             the others' batches undecompressed).  The recorder writes one per
 *             flush (every 100 ms), each its own frame, so a cut file keeps
 *             every whole ZSTD block.  A 1.2 reader skips it as unknown
 *             type 10: it sees an empty capture.
 * Later blocks of the same kind add to earlier ones; for COUNTERS the last
 * value of a key wins.  END marks a clean stop.
 */
#ifndef GT_CAPTURE_H
#define GT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/keys.h"

#define GT_CAP_MAJOR 1
#define GT_CAP_MINOR 3 /* 1: GPU_OPS blocks; 2: INLINES blocks; 3: ZSTD blocks */
#define GT_CAP_BOM   0x1A2B3C4DU

#define GT_CAP_BLOCK_HEAD   16
#define GT_CAP_BLOCK_TAIL   8
#define GT_CAP_MAX_BLOCK    (64U << 20) /* total_len cap */
#define GT_CAP_MAX_HEADER   (1U << 20)	/* HEADER block cap */
#define GT_CAP_MAX_RECORD   8192	/* one EVENTS record */
#define GT_CAP_MAX_STRING   4096	/* any string field */
#define GT_CAP_EVENTS_FLUSH (1U << 20)	/* writer flushes EVENTS at this size */
#define GT_CAP_GPU_MAX_CTX  4096	/* contexts (kind, device, stream) per GPU_OPS block */
#define GT_CAP_MAX_INLINE   16		/* inlined calls of one INLINES entry */
#define GT_CAP_MAX_ZRAW	    (64U << 20) /* decompressed bytes of one ZSTD block */
#define GT_CAP_ZSTD_BATCH   (8U << 20)	/* writer compresses a batch at this size */
#define GT_CAP_ZSTD_LEVEL   3		/* what `record` writes with */

enum gt_block_type {
	GT_BLK_HEADER = 0x0A0D0D0A,
	GT_BLK_EVENTS = 1,
	GT_BLK_STACKS = 2,
	GT_BLK_SYMBOLS = 3,
	GT_BLK_MAPPINGS = 4,
	GT_BLK_COUNTERS = 5,
	GT_BLK_PROBES = 6,
	GT_BLK_END = 7,
	GT_BLK_GPU_OPS = 8,
	GT_BLK_INLINES = 9,
	GT_BLK_ZSTD = 10,
};

#define GT_INLINE_CALLER 0x1 /* INLINES entry of a return address */

#define GT_STACK_KERNEL 0x1
#define GT_STACK_DWARF	0x2 /* unwound from a stack snapshot with DWARF CFI */
/*
 * The kernel's CFI walk ended at the thread's outermost frame, which the
 * code's own CFI marks (glibc's clone3 and _start): the stack is whole even
 * where a stripped library leaves those frames unnamed.  Older captures
 * never set it; readers that do not know it ignore it.
 */
#define GT_STACK_ROOT 0x4

/* ---- writer ---- */

struct capture_writer;

/*
 * Creates path with mode 0600 (an existing file is first renamed to
 * path.old) and writes the HEADER block from kv, an array of n "key=value"
 * strings.  Returns NULL and a one-line message in err on failure.
 */
struct capture_writer *capture_writer__open(const char *path, const char *const *kv, size_t n,
					    char *err, size_t errlen);
/* Same, writing to an already open file descriptor (not closed by us). */
struct capture_writer *capture_writer__open_fd(int fd, const char *const *kv, size_t n, char *err,
					       size_t errlen);
/*
 * Appends one record (struct gt_hdr first, hdr.size == size) to the pending
 * EVENTS block; flushes it when it reaches GT_CAP_EVENTS_FLUSH.  0 or -errno.
 */
int capture_writer__event(struct capture_writer *w, const void *rec, size_t size);
/*
 * GT_REC_GPU_OP records of exactly sizeof(struct gt_gpu_op) go to a GPU_OPS
 * block (on by default); off, they are written into EVENTS as before 1.1.
 * Flushes what is pending first.  0 or -errno.
 */
int capture_writer__compact_gpu(struct capture_writer *w, bool on);
/*
 * Blocks after this call go into ZSTD blocks compressed at level (1-19;
 * 0: plain blocks, the default, as a 1.2 writer wrote).  Flushes first.
 * 0 or -errno.
 */
int capture_writer__compress(struct capture_writer *w, int level);
/*
 * Writes pending events as one EVENTS block and one GPU_OPS block (none when
 * empty), then, compressing, the batch of blocks as one ZSTD block.  0 or -errno.
 */
int capture_writer__flush(struct capture_writer *w);
/* Flushes pending events, then writes one block of any type. 0 or -errno. */
int capture_writer__block(struct capture_writer *w, uint32_t type, const void *body, size_t len);
/* Bytes written so far (blocks on disk, compressed). */
uint64_t capture_writer__bytes(const struct capture_writer *w);
/* Records written so far (through capture_writer__event). */
uint64_t capture_writer__events(const struct capture_writer *w);
/* Flushes, writes nothing else, closes (if it opened the file). 0 or -errno. NULL-safe. */
int capture_writer__close(struct capture_writer *w);

/* Growable body buffer used to build STACKS/SYMBOLS/MAPPINGS/PROBES/KV bodies. */
struct capture_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};
void capture_buf__reset(struct capture_buf *b);
void capture_buf__free(struct capture_buf *b);
void capture_buf__kv(struct capture_buf *b, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a key of the table (capture/keys.h). */
void capture_buf__key(struct capture_buf *b, enum capture_key key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void capture_buf__stack(struct capture_buf *b, int32_t stack_id, uint32_t pid, bool kernel,
			const uint64_t *ips, uint16_t nr);
/* Same with the entry's GT_STACK_* flags given. */
void capture_buf__stack_flags(struct capture_buf *b, int32_t stack_id, uint32_t pid, uint16_t flags,
			      const uint64_t *ips, uint16_t nr);
void capture_buf__symbol(struct capture_buf *b, uint64_t ip, uint32_t pid, uint32_t sym_off,
			 const char *name, const char *module);
/* An INLINES entry: n (capped at GT_CAP_MAX_INLINE) names, innermost first; none for n 0. */
void capture_buf__inline(struct capture_buf *b, uint64_t ip, uint32_t pid, uint8_t flags,
			 const char *const *names, size_t n);
void capture_buf__mapping(struct capture_buf *b, uint32_t pid, uint64_t start, uint64_t end,
			  uint64_t pgoff, const uint8_t *build_id, uint8_t build_id_len,
			  const char *path);
void capture_buf__probe(struct capture_buf *b, uint32_t func_id, const char *name,
			const char *module, const char *category);

/* ---- reader ---- */

struct capture;

struct capture_block {
	uint32_t type;
	uint32_t len;	  /* body bytes */
	const void *body; /* valid until the next capture__next/rewind/close */
	uint64_t offset;  /* file offset of the block head */
	uint32_t index;	  /* 0-based block number */
};

/*
 * Opens and validates the HEADER block.  On failure returns NULL with one of
 * these messages in err (P = the path as given):
 *   "cannot open P: <strerror>"
 *   "P is not a gaptrace capture (file is empty): pass a file written by 'gaptrace record'"
 *   "P is not a gaptrace capture (bad magic 0x%08x): pass a file written by 'gaptrace record'"
 *   "P was written on a host of the other byte order: read it on a little-endian host"
 *     (or "big-endian"; the writer's order)
 *   "P has capture version %u.%u; this gaptrace reads version 1.x: upgrade gaptrace"
 *   "P: capture header is damaged (CRC mismatch): the file cannot be read"
 *   "P: capture header is truncated: the file cannot be read"
 */
struct capture *capture__open(const char *path, char *err, size_t errlen);
/* Same over a memory buffer (not copied; must outlive the reader); name used in messages. */
struct capture *capture__open_mem(const void *buf, size_t len, const char *name, char *err,
				  size_t errlen);
/*
 * Next block after HEADER.  Returns 1 and fills *blk, or 0 at the end.
 * Damage never aborts silently: each problem adds one warning (below), and
 * reading either skips the block (CRC mismatch, lengths consistent) or stops
 * (truncation, inconsistent or oversized lengths) and returns 0.
 *   "P: capture truncated at byte %llu: kept %u whole blocks; the recording
 *      was cut short, the data up to there is usable"
 *   "P: block %u at byte %llu fails its CRC check: skipped it; the file is damaged"
 *   "P: block %u at byte %llu has inconsistent lengths (head %u, tail %u): stopped
 *      reading there, kept %u blocks; the file is damaged"
 *   "P: block %u at byte %llu claims %u bytes, over the %u limit: stopped reading
 *      there, kept %u blocks; the file is damaged"
 *   "P: compressed block %u at byte %llu claims %u bytes uncompressed, over the
 *      %u limit: skipped it; the file is damaged or hostile"
 *   "P: compressed block %u at byte %llu does not decompress to its %u bytes
 *      (<zstd error>): skipped it; the file is damaged"
 *   "P: compressed block %u at byte %llu holds a malformed inner block at
 *      offset %u: kept the blocks before it; the file is damaged"
 * Unknown block types are returned to the caller, which skips them (and
 * counts them through capture__note_unknown).
 */
int capture__next(struct capture *c, struct capture_block *blk);
/* Back to the first block after HEADER, so analysis can make a second pass. */
int capture__rewind(struct capture *c);
/*
 * Until the next rewind, capture__next may leave out blocks of types outside
 * mask (bit 1 << type): ZSTD blocks without such a type are passed over
 * without decompressing (or checking) them.  Other blocks still come back.
 */
void capture__only(struct capture *c, uint32_t mask);
/*
 * Whether a helper thread decompresses the next ZSTD block while the caller
 * works on the current one (by default from the second one on, where the
 * process may use two CPUs).
 */
void capture__read_ahead(struct capture *c, bool on);
/* HEADER key lookup: value string or NULL. */
const char *capture__header(const struct capture *c, const char *key);
/* The same for a key of the table (capture/keys.h). */
const char *capture__header_key(const struct capture *c, enum capture_key key);
void capture__version(const struct capture *c, unsigned *major, unsigned *minor);
/* Warnings collected so far (each one line, no trailing newline). */
size_t capture__nwarnings(const struct capture *c);
const char *capture__warning(const struct capture *c, size_t i);
/* True once the reader met truncation or damage it could not skip. */
bool capture__truncated(const struct capture *c);
/* Counts of blocks skipped: CRC failures; unknown types (reported by caller). */
unsigned capture__crc_errors(const struct capture *c);
/* ZSTD blocks decompressed (or tried) over all passes; *ahead: by the helper thread. */
unsigned capture__zstd_blocks(const struct capture *c, unsigned *ahead);
void capture__note_unknown(struct capture *c, uint32_t type);
unsigned capture__unknown_blocks(const struct capture *c);
uint64_t capture__size(const struct capture *c);
const char *capture__path(const struct capture *c);
void capture__close(struct capture *c); /* NULL-safe */

/* ---- body parsers: all bounds-checked; return 0 ok, -1 malformed ---- */

/*
 * Calls cb for every record of an EVENTS body.  Stops and returns -1 at a
 * record whose size is < 16, > GT_CAP_MAX_RECORD or past the body end; a cb
 * returning non-zero stops the walk and that value is returned.  A record
 * smaller than its type's first layout (gt_rec_min_size) is skipped: cb
 * reads every field of that layout without checking the size.
 */
int capture__events(const void *body, size_t len,
		    int (*cb)(const void *rec, size_t size, void *ctx), void *ctx);
/*
 * Calls cb for every record of a GPU_OPS body, each a whole struct gt_gpu_op
 * as it was written.  -1 on a malformed body (after the records before the damage);
 * a cb returning non-zero stops the walk and that value is returned.
 */
int capture__gpu_ops(const void *body, size_t len,
		     int (*cb)(const void *rec, size_t size, void *ctx), void *ctx);
/* True for the block types that hold records (EVENTS, GPU_OPS). */
bool capture__has_records(uint32_t type);
/* capture__events or capture__gpu_ops by type; 0 for a block without records. */
int capture__records(uint32_t type, const void *body, size_t len,
		     int (*cb)(const void *rec, size_t size, void *ctx), void *ctx);
/* Calls cb(key, value) for each "key=value" string (value may be ""). */
int capture__kv(const void *body, size_t len,
		int (*cb)(const char *key, const char *value, void *ctx), void *ctx);

struct capture_stack {
	int32_t stack_id;
	uint32_t pid;
	bool kernel;
	uint16_t nr;
	uint16_t flags;	     /* GT_STACK_* */
	const uint64_t *ips; /* points into the body; unaligned-safe copy not needed (8-aligned) */
};
int capture__stacks(const void *body, size_t len,
		    int (*cb)(const struct capture_stack *s, void *ctx), void *ctx);

struct capture_symbol {
	uint64_t ip;
	uint32_t pid;
	uint32_t sym_off;
	const char *name; /* not NUL-terminated: use name_len */
	uint16_t name_len;
	const char *module;
	uint16_t module_len;
};
int capture__symbols(const void *body, size_t len,
		     int (*cb)(const struct capture_symbol *s, void *ctx), void *ctx);

struct capture_inline {
	uint64_t ip;
	uint32_t pid;
	uint8_t flags; /* GT_INLINE_* */
	uint8_t n;
	const char *name[GT_CAP_MAX_INLINE]; /* not NUL-terminated: use name_len */
	uint16_t name_len[GT_CAP_MAX_INLINE];
};
/* -1 on a malformed body: n 0 or over the cap, an empty or oversized name, or past the end. */
int capture__inlines(const void *body, size_t len,
		     int (*cb)(const struct capture_inline *in, void *ctx), void *ctx);

struct capture_mapping {
	uint64_t start, end, pgoff;
	uint32_t pid;
	uint8_t build_id[20];
	uint8_t build_id_len;
	const char *path;
	uint16_t path_len;
};
int capture__mappings(const void *body, size_t len,
		      int (*cb)(const struct capture_mapping *m, void *ctx), void *ctx);

struct capture_probe {
	uint32_t func_id;
	const char *name;
	uint16_t name_len;
	const char *module;
	uint16_t module_len;
	const char *category;
	uint16_t category_len;
};
int capture__probes(const void *body, size_t len,
		    int (*cb)(const struct capture_probe *p, void *ctx), void *ctx);

/* Name of a block type for `gaptrace info` ("EVENTS", ..., "unknown"). */
const char *capture__block_name(uint32_t type);

#endif /* GT_CAPTURE_H */
