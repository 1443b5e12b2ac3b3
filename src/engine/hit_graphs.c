/* hit_graphs.c — CUDA graphs at the tracer, a consumer of calls (graphs_consumer, hit.h). A
 * capture is not execution: while a stream captures, launches, copies and memsets are held back
 * (its hold); at the capture's end the driver is asked (in the stopped thread) for the captured
 * graph's nodes, the held operations that became nodes are dropped and the others counted. Held
 * by kind and size, not by stream: the launch ring does not record a launch's stream, and the
 * counts come out exact either way. An executable graph's nodes are asked at its instantiation
 * (or update) from the graph it came from; each launch of it then runs each node once (the
 * figures' stats_on_graph_launch), through the launch ring without a stop. */
#include "hit.h"
#include "hit_internal.h"

#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "config.h"
#include "graph_query.h"
#include "kernel_names.h"
#include "launchring.h"
#include "log.h"
#include "probes.h"
#include "stats.h"
#include "threads.h"
#include "tracee.h"

enum held_type { HELD_LAUNCH, HELD_COPY, HELD_MEMSET };

struct graph_held {
	uint8_t type;		/* enum held_type */
	uint8_t dir, mode;	/* copies */
	bool node;		/* it became a node of a captured graph: never counted */
	int kernel;
	uint32_t g[3], b[3];
	uint64_t bytes, ns;
};

/* A capture that never ends (a program stuck in it) must not grow gputop without bound: past
 * this, operations are counted as they come. */
#define HELD_MAX (1u << 20)

void graphs_free(struct hit_state *st)
{
	free(st->held);
	st->held = NULL;
	st->n_held = st->cap_held = 0;
}

static bool hold(struct hit_state *st, const struct graph_held *h)
{
	if (!st->captures)
		return false;
	if (st->n_held == st->cap_held) {
		size_t cap = st->cap_held ? st->cap_held * 2 : 256;
		struct graph_held *n = cap <= HELD_MAX ? realloc(st->held, cap * sizeof *n) : NULL;
		if (!n)
			return false;
		st->held = n;
		st->cap_held = cap;
	}
	st->held[st->n_held++] = *h;
	return true;
}

static bool graphs_hold(struct tracee *p, const struct cuda_call *c)
{
	struct graph_held h = { 0 };
	if (!p->hit->captures)
		return false;
	switch (c->op) {
	case OP_LAUNCH:
		h.type = HELD_LAUNCH;
		h.kernel = c->launch.kernel;
		memcpy(h.g, c->launch.grid, sizeof h.g);
		memcpy(h.b, c->launch.block, sizeof h.b);
		break;
	case OP_COPY:
		h = (struct graph_held){ .type = HELD_COPY, .dir = c->copy.dir,
					 .mode = (uint8_t)(c->copy.async ? COPY_ASYNC : COPY_SYNC),
					 .bytes = c->copy.bytes, .ns = c->ns };
		break;
	case OP_MEMSET:
		h = (struct graph_held){ .type = HELD_MEMSET, .bytes = c->memset_.bytes, .ns = c->ns };
		break;
	default:
		return false;
	}
	return hold(p->hit, &h);
}

/* What was held and did not become a node ran: counted now, in process proc's figures. */
static void count_held(struct hit_state *st, int proc)
{
	for (size_t i = 0; i < st->n_held; i++) {
		const struct graph_held *h = &st->held[i];
		if (h->node)
			continue;
		if (h->type == HELD_LAUNCH)
			stats_on_launch(proc, h->kernel, h->g, h->b);
		else if (h->type == HELD_COPY)
			stats_on_copy(proc, (enum copy_dir)h->dir, (enum copy_mode)h->mode, h->bytes, h->ns);
		else
			stats_on_memset(proc, h->bytes, h->ns);
	}
	st->n_held = 0;
}

static bool is_node_of(const struct graph_held *h, const struct stats_graph_node *n)
{
	switch (n->type) {
	case GRAPH_NODE_KERNEL:
		return h->type == HELD_LAUNCH && h->kernel == n->kernel;
	case GRAPH_NODE_COPY:
		return h->type == HELD_COPY && h->dir == n->dir && h->bytes == n->bytes;
	case GRAPH_NODE_MEMSET:
		return h->type == HELD_MEMSET && h->bytes == n->bytes;
	}
	return false;
}

/* Each node of the captured graph takes the first held operation of its kind. */
static void mark_nodes(struct hit_state *st, const struct stats_graph_node *nodes, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		for (size_t i = 0; i < st->n_held; i++)
			if (!st->held[i].node && is_node_of(&st->held[i], &nodes[k])) {
				st->held[i].node = true;
				break;
			}
}

static bool device_side(int proc, uint32_t memory_type, uint64_t addr)
{
	/* CUmemorytype: 1 host, 2 device, 3 array, 4 unified (the pointer tells). */
	return memory_type == 2 || memory_type == 3 || (memory_type == 4 && stats_is_device_ptr(proc, addr));
}

/* Scratch, off the stack (the tracer thread only), and the hook that catches up with a
 * graph's launches. */
static struct {
	struct graph_query_node q[GQ_MAX_NODES];
	struct stats_graph_node nodes[GQ_MAX_NODES];
	void (*catch_up_fn)(struct tracee *p, uint64_t now);
} graphs_state;

/* graph's nodes, asked of the driver in the stopped thread t of process p, as the figures keep
 * them. */
static int learn_nodes(struct tracee *p, struct thread *t, uint64_t graph, const struct stats_graph_node **out,
		       uint32_t *n)
{
	struct graph_query_node *q = graphs_state.q;
	struct stats_graph_node *nodes = graphs_state.nodes;
	int err = graph_query_nodes(p, t, probes_graph_fns(p), graph, q, n);
	if (err < 0) {
		log_debug("cannot list the nodes of graph %#llx: %s", (unsigned long long)graph, strerror(-err));
		return err;
	}
	for (uint32_t i = 0; i < *n; i++) {
		struct stats_graph_node *d = &nodes[i];
		memset(d, 0, sizeof *d);
		switch (q[i].type) {
		case GQ_TYPE_KERNEL:
			d->type = GRAPH_NODE_KERNEL;
			/* The CUkernel where there is one: CUDA 13's runtime launched that handle,
			 * already named; the node's CUfunction may be one never seen. */
			d->kernel = kernel_names_id(p, t, q[i].kern ? q[i].kern : q[i].func);
			memcpy(d->grid, q[i].grid, sizeof d->grid);
			memcpy(d->block, q[i].block, sizeof d->block);
			break;
		case GQ_TYPE_MEMCPY: {
			bool src = device_side(p->stats_id, q[i].src_type, q[i].src),
			     dst = device_side(p->stats_id, q[i].dst_type, q[i].dst);
			d->type = GRAPH_NODE_COPY;
			d->dir = src ? (dst ? DIR_D2D : DIR_D2H) : (dst ? DIR_H2D : DIR_H2H);
			d->bytes = q[i].bytes;
			break;
		}
		case GQ_TYPE_MEMSET:
			d->type = GRAPH_NODE_MEMSET;
			d->bytes = q[i].bytes;
			break;
		default:
			d->type = GRAPH_NODE_OTHER;
		}
	}
	*out = nodes;
	return 0;
}

void graphs_set_catch_up(void (*catch_up)(struct tracee *p, uint64_t now))
{
	graphs_state.catch_up_fn = catch_up;
}

/* The stubs' records up to this stop are counted (or held) before a capture begins or ends:
 * the calls made before it, on this thread, are all in them. */
static void catch_up(struct tracee *p, uint64_t now)
{
	if (graphs_state.catch_up_fn)
		graphs_state.catch_up_fn(p, now);
}

void hit_quiet_launches(struct tracee *p)
{
	bool wanted = account_wants_launch_records() || p->hit->captures > 0 ||
		      (config.stacks & CONFIG_STACKS_LAUNCHES) || config.launch_records;
	launchring_set_quiet(p, !wanted);
	/* PyTorch's Blocks: their records carry only a stack and an order (the table keeps them). */
	launchring_set_quiet_blocks(p, !(account_wants_launch_records() || (config.stacks & CONFIG_STACKS_ALLOCS) ||
					config.launch_records));
}

static void on_capture_end(struct tracee *p, const struct cuda_call *c)
{
	struct hit_state *st = p->hit;
	struct thread *t = threads_find(p, c->tid);
	const struct stats_graph_node *nodes;
	uint32_t n;
	catch_up(p, c->seen_ns);
	if (cuda_call_ok(c) && t && c->graph.graph && learn_nodes(p, t, c->graph.graph, &nodes, &n) == 0)
		mark_nodes(st, nodes, n);
	else if (cuda_call_ok(c))
		log_warn("cannot tell the nodes of a captured graph: its captured launches count as launches");
	if (st->captures > 0)
		st->captures--;
	if (!st->captures)
		count_held(st, p->stats_id);
}

/* exec runs graph's nodes from now on (instantiated, or updated: keep its row). */
static void define_exec(struct tracee *p, const struct cuda_call *c, bool update)
{
	const struct stats_graph_node *nodes = NULL;
	struct thread *t = threads_find(p, c->tid);
	uint32_t n = 0;
	catch_up(p, c->seen_ns);	/* the launches recorded so far ran the nodes it had until now */
	bool known = t && c->graph.graph && learn_nodes(p, t, c->graph.graph, &nodes, &n) == 0;
	stats_graph_define(p->stats_id, c->graph.exec, nodes, n, known, update);
	launchring_seen(p, c->graph.exec);	/* known now: its launches need no stop */
}

static void graphs_on_call(struct tracee *p, const struct cuda_call *c)
{
	struct hit_state *st = p->hit;
	if (c->op == OP_CAPTURE_END) {	/* a capture's end counts even when it failed */
		on_capture_end(p, c);
		return;
	}
	if (!cuda_call_ok(c))
		return;
	switch (c->op) {
	case OP_CAPTURE_BEGIN:
		catch_up(p, c->seen_ns);
		st->captures++;
		hit_quiet_launches(p);	/* its launches recorded, before the thread goes on */
		break;
	case OP_GRAPH_INSTANTIATE:
		if (c->graph.exec)
			define_exec(p, c, false);
		break;
	case OP_GRAPH_UPDATE:
		define_exec(p, c, true);
		break;
	case OP_GRAPH_EXEC_DESTROY:
		catch_up(p, c->seen_ns);	/* its last launches, still in the ring, ran its nodes */
		stats_graph_forget(p->stats_id, c->graph.exec);
		break;
	}
}

const struct cuda_consumer graphs_consumer = {
	.name = "CUDA graphs",
	.hold = graphs_hold,
	.call = graphs_on_call,
};
