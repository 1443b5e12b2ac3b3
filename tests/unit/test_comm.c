/* test_comm.c — unit test of src/figures/comm_table.c and comm_rows.c (with stats.c): per device
 * figures (a device past the table and -1 count as "not known"), NCCL operations by op, the
 * P2P matrix of peer copies and of ncclSend with the peer's device resolved from the
 * communicators (of the same process, of another, or not at all when two disagree), ranks
 * named by a communicator only where the environment gave none, interval deltas, 'z', and
 * the NCCL datatype sizes of nccl.h. One "ok"/"not ok" line per check. */
#include "comm_table.h"
#include "cuda_api.h"
#include "rows.h"
#include "stats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void take(struct stats_snapshot *s, pid_t pid)
{
	if (stats_snapshot_of(pid, s) < 0) {
		printf("not ok - stats_snapshot_of failed\n");
		exit(1);
	}
}

static const struct row_p2p *p2p_row(const struct rows *r, int src, int dst)
{
	for (size_t i = 0; i < r->n_p2p; i++)
		if (r->p2p[i].src == src && r->p2p[i].dst == dst)
			return &r->p2p[i];
	return NULL;
}

static void test_types(void)
{
	/* nccl.h: Int8, Uint8, Int32, Uint32, Int64, Uint64, Float16, Float32, Float64, Bfloat16,
	 * Float8e4m3, Float8e5m2; then none. */
	const unsigned want[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1, 0 };
	bool all = true;
	for (unsigned t = 0; t < sizeof want / sizeof want[0]; t++)
		all &= cuda_nccl_type_size(t) == want[t];
	check(all, "NCCL datatype sizes as nccl.h's enum, 0 past it");
	check(cuda_nccl_type_size(UINT64_MAX) == 0, "a huge datatype has no size");
}

static void test_device_slots(void)
{
	struct stats_comm c;
	memset(&c, 0, sizeof c);
	comm_table_on_device(&c, 3, DEV_LAUNCH, 0, 0);
	comm_table_on_device(&c, -1, DEV_LAUNCH, 0, 0);
	comm_table_on_device(&c, STATS_MAX_DEVICES, DEV_COPY, 100, 0);
	comm_table_on_device(&c, 3, DEV_ALLOC, 4096, 0);
	check(c.dev[3].launches == 1 && c.dev[3].allocs == 1 && c.dev[3].alloc_bytes == 4096,
	      "device 3: a launch and a 4096 B allocation");
	check(c.dev[COMM_DEV_UNKNOWN].launches == 1 && c.dev[COMM_DEV_UNKNOWN].copy_bytes == 100,
	      "device -1 and a device past the table count as not known");
}

static void test_peer_resolution(void)
{
	struct stats_comm a, b, c;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	memset(&c, 0, sizeof c);
	comm_table_learn(&a, 0x10, 0, 2, 4);
	comm_table_learn(&b, 0x20, 1, 2, 5);
	const struct stats_comm *all[] = { &a, &b };
	check(comm_table_peer_device(&a, all, 2, 2, 1) == 5, "rank 1 of 2 is another process's: device 5");
	check(comm_table_peer_device(&a, all, 2, 3, 1) == -1, "no communicator of 3 ranks: not known");
	comm_table_learn(&c, 0x30, 1, 2, 6);
	const struct stats_comm *three[] = { &a, &b, &c };
	check(comm_table_peer_device(&a, three, 3, 2, 1) == -1, "two jobs disagree on rank 1's device: not known");
	comm_table_learn(&a, 0x11, 1, 2, 7);
	check(comm_table_peer_device(&a, three, 3, 2, 1) == 7, "the process's own rank 1 first (ncclCommInitAll)");
	check(comm_table_learn(&a, 0x10, -1, -1, -1)->device == 4, "learning again with -1 keeps what was known");
	check(comm_table_learn(&a, 0, 1, 2, 0) == NULL, "a NULL communicator is not learnt");
}

/* Two processes, one rank each; then one with a rank from its environment. */
static void test_stats_and_rows(void)
{
	stats_init();
	int p0 = stats_process_new(100, 1, "rank0"), p1 = stats_process_new(101, 1, "rank1");
	int p2 = stats_process_new(102, 1, "envrank");
	stats_process_set_rank(p2, 7, 0);

	stats_comm_learn(p0, 0xa0, 0, 2, 0, true);
	stats_on_collective(p0, COLL_ALLREDUCE, 4000, 10, 0xa0, -1, 0);
	stats_on_collective(p0, COLL_ALLREDUCE, 4000, 10, 0xa0, -1, 0);
	stats_on_collective(p0, COLL_SEND, 800, 5, 0xa0, 1, 0);
	stats_on_collective(p0, COLL_RECV, 1600, 5, 0xa0, 1, 0);
	stats_on_device(p0, 0, DEV_LAUNCH, 0, 0);
	stats_on_p2p(p0, 0, 2, 123);

	stats_comm_learn(p1, 0xb0, 1, 2, 1, true);
	stats_on_collective(p1, COLL_ALLREDUCE, 4000, 10, 0xb0, -1, 1);
	stats_on_collective(p1, COLL_SEND, 1600, 5, 0xb0, 0, 1);

	stats_comm_learn(p2, 0xc0, 3, 4, 2, true);
	stats_on_collective(p2, COLL_SEND, 10, 1, 0xc0, 0, 2);	/* rank 0 of 4: nobody's */

	struct stats_snapshot all, one, prev;
	take(&all, 0);
	struct rows r;
	check(rows_build(&r, &all, NULL) == 0, "rows of all processes");
	check(r.n_coll_total == 3 && r.coll_total[0].op == COLL_ALLREDUCE && r.coll_total[0].total.calls == 3 &&
	      r.coll_total[0].total.bytes == 12000, "in all: 3 AllReduce of 12000 B");
	const struct row_p2p *s01 = p2p_row(&r, 0, 1), *s10 = p2p_row(&r, 1, 0), *s2x = p2p_row(&r, 2, -1);
	check(s01 && s01->total.calls == 1 && s01->total.bytes == 800, "ncclSend rank 0 -> 1: device 0 -> 1, 800 B");
	check(s10 && s10->total.bytes == 1600, "ncclSend rank 1 -> 0: device 1 -> 0, 1600 B");
	check(s2x && s2x->total.bytes == 10, "a send to a rank no communicator names: destination not known");
	check(p2p_row(&r, 0, 2) && p2p_row(&r, 0, 2)->total.bytes == 123, "a peer copy 0 -> 2");
	size_t sends = 0;
	for (size_t i = 0; i < r.n_coll; i++)
		sends += r.coll[i].op == COLL_SEND;
	check(r.n_coll == 6 && sends == 3, "per process: 6 rows (3, 2, 1), 3 of them Send");
	check(r.coll[0].pid == 100 && r.coll[0].rank == 0 && r.coll[0].nranks == 2,
	      "per process rows by rank: rank 0 first, of 2");
	bool env_kept = false;
	for (size_t i = 0; i < all.n_proc; i++)
		if (all.proc[i].info.pid == 102)
			env_kept = all.proc[i].info.rank == 7 && all.proc[i].info.nranks == 4;
	check(env_kept, "a rank from the environment stays; the size comes from the communicator");
	rows_free(&r);

	take(&one, 101);
	check(rows_build(&r, &one, NULL) == 0, "rows of one process");
	check(r.n_coll_total == 2 && r.n_coll == 2 && r.n_comm == 1 && r.comm[0].rank == 1 && r.comm[0].device == 1,
	      "process 101: its 2 operations and its communicator");
	rows_free(&r);
	stats_snapshot_free(&one);

	/* Interval deltas, then 'z'. */
	prev = all;
	stats_on_collective(p0, COLL_ALLREDUCE, 4000, 10, 0xa0, -1, 0);
	take(&all, 0);
	check(rows_build(&r, &all, &prev) == 0, "rows with a previous snapshot");
	check(r.coll_total[0].total.calls == 4 && r.coll_total[0].delta.calls == 1 && r.coll_total[0].delta.bytes == 4000,
	      "AllReduce: 4 in all, 1 of 4000 B in the interval");
	check(r.coll[0].delta.calls == 1, "rank 0's row: 1 in the interval");
	rows_free(&r);
	stats_snapshot_free(&prev);
	stats_snapshot_free(&all);
	stats_reset();
	take(&all, 0);
	check(rows_build(&r, &all, NULL) == 0 && r.n_coll_total == 0 && r.n_p2p == 0 && r.n_comm == 3,
	      "'z': no operation nor P2P left; the communicators stay");
	rows_free(&r);
	stats_snapshot_free(&all);
	stats_free();
}

int main(void)
{
	test_types();
	test_device_slots();
	test_peer_resolution();
	test_stats_and_rows();
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures != 0;
}
