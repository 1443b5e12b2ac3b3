/* tally.c — runs in the program: the stubs call tally_entry to keep the figures of tally.h in
 * place. Built twice: as position-independent code with no relocation, no data and no library
 * call, copied into the program with the stubs (the Makefile checks all three and makes
 * build/arch/tally.bin, which <arch>_launch.S includes: tally_entry must come first), and
 * into the unit tests as it is (tests/unit/test_tally.c). No lock and no wait: every update is
 * one atomic operation, and a table with no room counts what it lost. Only the integer
 * registers are used (-mgeneral-regs-only): the program's vector registers are never touched. */
#include "tally.h"

#include "stub_layout.h"

#define INLINE static inline __attribute__((always_inline))

INLINE uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

INLINE void add(uint64_t *p, uint64_t n)
{
	__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
}

INLINE void sub(uint64_t *p, uint64_t n)
{
	__atomic_fetch_sub(p, n, __ATOMIC_RELAXED);
}

INLINE int claim(uint64_t *p, uint64_t from, uint64_t to)
{
	return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

INLINE void publish(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* A key another thread is writing (TALLY_BUSY for a few instructions), once written. A writer
 * that never finishes (a signal handler that left the stub by longjmp) is waited for a bounded
 * time: the slot is then passed over, and gputop merges a key found twice. */
INLINE uint64_t settled(const uint64_t *p)
{
	uint64_t k = load(p);
	for (int i = 0; k == TALLY_BUSY && i < 100000; i++)
		k = load(p);
	return k;
}

/* The call stub's record, as the words of stub_layout.h. */
INLINE uint64_t operand(const uint64_t *rec, unsigned where)
{
	if (where >= 1 && where <= 6)
		return rec[LR_CALL_OFF_ARGS / 8 + where - 1];
	if (where == TALLY_OUT)
		return rec[LR_CALL_OFF_OUT_VALUE / 8];
	if (where == TALLY_OUT2)
		return rec[LR_CALL_OFF_OUT2_VALUE / 8];
	if (where == TALLY_RETVAL)
		return rec[LR_CALL_OFF_RETVAL / 8];
	return 0;
}

#define NO_INDEX (~0ull)

/* One more launch of handle. A new handle takes the first empty slot of its window and the
 * next index of the dense arrays (another thread taking the same handle there at once: it is
 * counted where that one put it). Returns its index, NO_INDEX where it found none. */
INLINE uint64_t handle_count(struct tally_area *t, uint64_t probe, uint64_t handle)
{
	const uint32_t mask = (1u << TALLY_HANDLE_BITS) - 1;
	uint32_t at = tally_slot(handle, TALLY_HANDLE_BITS);
	if (handle <= TALLY_BUSY)	/* no function: counted by its probe only */
		return NO_INDEX;
	for (uint32_t i = 0; i < TALLY_WINDOW; i++) {
		struct tally_handle *h = &t->handle[(at + i) & mask];
		uint64_t k = load(&h->key);
		if (k == TALLY_EMPTY && claim(&h->key, TALLY_EMPTY, TALLY_BUSY)) {
			/* Fewer indexes than slots: one is always there. */
			uint64_t n = __atomic_fetch_add(&t->head.handles_used, 1, __ATOMIC_RELAXED);
			h->index = n;
			publish(&h->key, handle);
			t->launched[n].probe = probe;
			publish(&t->launched[n].key, handle);
			add(&t->launches[n], 1);
			add(&t->probe[probe].effects, 1);
			return n;
		}
		if (k == handle || settled(&h->key) == handle) {
			add(&t->launches[h->index], 1);
			add(&t->probe[probe].effects, 1);
			return h->index;
		}
	}
	add(&t->probe[probe].unmatched, 1);
	return NO_INDEX;
}

/* A launch of the handle at index by probe: its words 2-7 (the dimensions) kept as its record
 * would have, then their check, then (quiet: it left no record) its count. Two threads writing
 * at once may leave words of both: the check then disagrees, and gputop keeps the dimensions
 * it had. */
INLINE void quiet_count(struct tally_area *t, uint64_t index, uint64_t probe, const uint64_t *w, int quiet)
{
	if (index == NO_INDEX)
		return;
	struct tally_quiet *q = &t->quiet[index];
	__atomic_store_n(&q->probe, probe, __ATOMIC_RELAXED);
	for (int i = 0; i < 6; i++)
		__atomic_store_n(&q->w[i], w[i], __ATOMIC_RELAXED);
	publish(&q->check, tally_dims_check(probe, w));
	if (quiet)
		add(&q->launches, 1);
}

/* One of the two tables of live keys: the allocations (live[]) or PyTorch's Blocks (block[],
 * whose slots' generations gen[] count each change). */
struct live_table {
	struct tally_live *slot;
	uint64_t *gen;		/* NULL: none kept */
	uint32_t mask;
	unsigned bits;
};

INLINE struct live_table allocations(struct tally_area *t)
{
	return (struct live_table){ t->live, 0, (1u << TALLY_LIVE_BITS) - 1, TALLY_LIVE_BITS };
}

INLINE struct live_table blocks(struct tally_area *t)
{
	return (struct live_table){ t->block, t->block_gen, (1u << TALLY_BLOCK_BITS) - 1, TALLY_BLOCK_BITS };
}

/* A slot changed (after its key was published): its chunk's generation moves. */
INLINE void changed(const struct live_table *lt, uint32_t slot)
{
	if (lt->gen)
		add(&lt->gen[slot >> TALLY_CHUNK_BITS], 1);
}

/* An allocation of size bytes at key. It goes after every slot that holds key already: that
 * one's free has not returned yet (another thread's allocation got the address back first),
 * and a free removes the first it finds, the oldest. */
INLINE void live_insert(struct tally_area *t, struct live_table lt, uint64_t probe, uint64_t key, uint64_t size,
			uint64_t tsc, uint64_t thread)
{
	uint32_t at = tally_slot(key, lt.bits), from = 0;
	for (uint32_t i = 0; i < TALLY_WINDOW; i++) {
		uint64_t k = load(&lt.slot[(at + i) & lt.mask].key);
		if (k == key)
			from = i + 1;
		else if (k == TALLY_EMPTY)
			break;
	}
	for (uint32_t i = from; i < TALLY_WINDOW; i++) {
		struct tally_live *l = &lt.slot[(at + i) & lt.mask];
		uint64_t k = load(&l->key);
		if ((k == TALLY_EMPTY || k == TALLY_GONE) && claim(&l->key, k, TALLY_BUSY)) {
			l->size = (size & ((1ull << TALLY_SIZE_BITS) - 1)) | (probe + 1) << TALLY_SIZE_BITS;
			l->tsc = tsc;
			l->thread = thread;
			publish(&l->key, key);
			changed(&lt, (at + i) & lt.mask);
			add(&t->probe[probe].live_bytes, size);
			add(&t->probe[probe].live_count, 1);
			add(&t->probe[probe].effects, 1);
			return;
		}
	}
	add(&t->probe[probe].unmatched, 1);
}

INLINE void live_remove(struct tally_area *t, struct live_table lt, uint64_t probe, uint64_t key)
{
	uint32_t at = tally_slot(key, lt.bits);
	for (uint32_t i = 0; i < TALLY_WINDOW; i++) {
		struct tally_live *l = &lt.slot[(at + i) & lt.mask];
		uint64_t k = load(&l->key);
		if (k == key && claim(&l->key, key, TALLY_GONE)) {
			uint64_t size = l->size & ((1ull << TALLY_SIZE_BITS) - 1);
			uint64_t owner = (l->size >> TALLY_SIZE_BITS) - 1;
			changed(&lt, (at + i) & lt.mask);
			if (owner < TALLY_PROBES) {
				sub(&t->probe[owner].live_bytes, size);
				sub(&t->probe[owner].live_count, 1);
			}
			add(&t->probe[probe].effects, 1);
			return;
		}
		if (k == TALLY_EMPTY)
			break;
	}
	add(&t->probe[probe].unmatched, 1);
}

/* A kernel registered: its host function names it (the last registration wins). */
INLINE void name_insert(struct tally_area *t, uint64_t probe, uint64_t key, uint64_t name)
{
	const uint32_t mask = (1u << TALLY_NAME_BITS) - 1;
	uint32_t at = tally_slot(key, TALLY_NAME_BITS);
	if (key <= TALLY_BUSY)
		return;
	for (uint32_t i = 0; i < TALLY_WINDOW; i++) {
		struct tally_name *n = &t->name[(at + i) & mask];
		if (claim(&n->key, TALLY_EMPTY, TALLY_BUSY)) {
			n->name = name;
			publish(&n->key, key);
			add(&t->probe[probe].effects, 1);
			return;
		}
		if (settled(&n->key) == key) {
			publish(&n->name, name);
			add(&t->probe[probe].effects, 1);
			return;
		}
	}
	add(&t->probe[probe].unmatched, 1);
}

/* Returns whether the call's record is worth the calls' ring: a registration's is not (its
 * name is kept here; a PyTorch rank's ~21,000 at once would fill the ring), nor a PyTorch
 * Block's while gputop wants no record of them (head.quiet_blocks). */
INLINE uint64_t on_return(struct tally_area *t, const uint64_t *rec)
{
	uint64_t probe = rec[LR_CALL_OFF_PROBE / 8] - 1, entry = rec[LR_CALL_OFF_ENTRY_TSC / 8];
	uint64_t ret = rec[LR_CALL_OFF_RET_TSC / 8];
	uint32_t result = (uint32_t)rec[LR_CALL_OFF_RETVAL / 8];
	if (probe >= TALLY_PROBES)
		return 1;
	const struct tally_spec *s = &t->spec[probe];
	struct tally_probe *tp = &t->probe[probe];
	uint64_t ticks = ret > entry ? ret - entry : 0;
	int failed = result && !(s->flags & TALLY_VOID);
	/* The error before the call: gputop reads calls before errors, so a failing call caught
	 * between the two adds never looks like a success ("every call failed" stays said). */
	if (failed) {
		add(&tp->errors, 1);
		publish(&tp->last_error, result);
	}
	add(&tp->calls, 1);
	add(&tp->ticks, ticks);
	if (failed)
		return 1;
	uint64_t cls = s->class_arg ? operand(rec, s->class_arg) : 0;
	uint64_t value = operand(rec, s->value) * (s->times ? operand(rec, s->times) : 1);
	cls = cls < TALLY_CLASSES ? cls : TALLY_CLASSES - 1;
	add(&tp->class_calls[cls], 1);
	add(&tp->class_sum[cls], value);
	add(&tp->class_ticks[cls], ticks);
	uint64_t key = operand(rec, s->key);
	switch (s->effect) {
	case TALLY_HANDLE: {
		if (!(s->flags & TALLY_DIMS) || !load(&t->head.quiet)) {
			handle_count(t, probe, key);
			break;
		}
		/* Quiet: the words a launch record holds after the handle (the stack's: none). */
		uint64_t w[6];
		for (int i = 0; i < 5; i++)
			w[i] = rec[LR_CALL_OFF_ARGS / 8 + 1 + i];
		w[5] = 0;
		quiet_count(t, handle_count(t, probe, key), probe, w, 1);
		return 0;
	}
	case TALLY_INSERT:
		if (key > TALLY_BUSY)	/* NULL: a zero-byte allocation holds nothing */
			live_insert(t, allocations(t), probe, key, value, ret, rec[LR_CALL_OFF_THREAD / 8]);
		break;
	case TALLY_REMOVE:
		if (key > TALLY_BUSY)	/* freeing NULL frees nothing */
			live_remove(t, allocations(t), probe, key);
		break;
	case TALLY_BLOCK_IN:
		if (key > TALLY_BUSY)
			live_insert(t, blocks(t), probe, key, value, ret,
				    s->owner ? operand(rec, s->owner) : rec[LR_CALL_OFF_THREAD / 8]);
		return !load(&t->head.quiet_blocks);
	case TALLY_BLOCK_OUT:
		if (key > TALLY_BUSY)
			live_remove(t, blocks(t), probe, key);
		return !load(&t->head.quiet_blocks);
	case TALLY_NAME:
		name_insert(t, probe, key, value);
		return 0;
	}
	return 1;
}

uint64_t tally_entry(struct tally_area *t, uint64_t op, uint64_t a, uint64_t b, const uint64_t *w)
{
	switch (op) {
	case TALLY_OP_RETURN:
		return on_return(t, (const uint64_t *)a);
	case TALLY_OP_LAUNCH:
		if (a < TALLY_PROBES) {
			add(&t->probe[a].calls, 1);
			handle_count(t, a, b);
		}
		break;
	case TALLY_OP_QUIET:
	case TALLY_OP_WORDS:
		if (a < TALLY_PROBES) {
			add(&t->probe[a].calls, 1);
			quiet_count(t, handle_count(t, a, b), a, w + 2, op == TALLY_OP_QUIET);
		}
		break;
	case TALLY_OP_UNRECORDED:
		if (a < TALLY_PROBES) {
			add(&t->probe[a].calls, 1);
			add(&t->probe[a].untimed, 1);
		}
		break;
	}
	return 1;
}
