/* torch_snapshot.c — _snapshot()'s pickle (torch_snapshot.h). The keys and values are those of
 * PyTorch 2.x's torch/csrc/cuda/memory_snapshot.cpp: per segment device, address, total_size,
 * allocated_size, active_size, requested_size, stream, segment_type ("large"/"small"),
 * segment_pool_id (a tuple; (0, 0) for the default pools), is_expandable, frames (of the
 * segment's allocation: none known), blocks; per block address, size, requested_size, state,
 * frames (innermost first, {filename, line, name}; none for a block from before gputop came or
 * without --stacks allocs); then device_traces (one list per device: gputop records no history,
 * so they are empty) and allocator_settings (from PYTORCH_CUDA_ALLOC_CONF as the program
 * started with it; PyTorch's defaults elsewhere). */
#define _GNU_SOURCE
#include "torch_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "outfile.h"
#include "pickle.h"
#include "stacks.h"

static void key(struct pickle *p, const char *k)
{
	pickle_str(p, k);
}

static void frames(struct pickle *p, uint32_t stack)
{
	const struct stack *st = stacks_get(stack);
	pickle_list_begin(p);
	for (uint32_t i = 0; st && i < st->n; i++) {
		const struct stack_frame *f = &st->frame[i];
		pickle_dict_begin(p);
		key(p, "filename");
		pickle_str(p, f->file ? f->file : f->module ? f->module : "??");
		key(p, "line");
		pickle_uint(p, f->line);
		key(p, "name");
		pickle_str(p, f->function ? f->function : "??");
		pickle_dict_end(p);
	}
	pickle_list_end(p);
}

static void segment(struct pickle *p, const struct torch_shot *s, const struct torch_shot_segment *g)
{
	pickle_dict_begin(p);
	key(p, "device");
	pickle_int(p, g->device);
	key(p, "address");
	pickle_uint(p, g->address);
	key(p, "total_size");
	pickle_uint(p, g->total_size);
	key(p, "allocated_size");
	pickle_uint(p, g->allocated_size);
	key(p, "active_size");
	pickle_uint(p, g->active_size);
	key(p, "requested_size");
	pickle_uint(p, g->requested_size);
	key(p, "stream");
	pickle_int(p, (int64_t)g->stream);
	key(p, "segment_type");
	pickle_str(p, g->large ? "large" : "small");
	key(p, "segment_pool_id");
	pickle_tuple_begin(p);
	pickle_int(p, 0);
	pickle_int(p, 0);
	pickle_tuple_end(p);
	key(p, "is_expandable");
	pickle_bool(p, g->expandable);
	key(p, "frames");
	frames(p, STACK_NONE);
	key(p, "blocks");
	pickle_list_begin(p);
	for (size_t k = g->first; k < g->first + g->n; k++) {
		const struct torch_shot_block *b = &s->block[k];
		pickle_dict_begin(p);
		key(p, "address");
		pickle_uint(p, b->address);
		key(p, "size");
		pickle_uint(p, b->size);
		key(p, "requested_size");
		pickle_uint(p, b->requested);
		key(p, "state");
		pickle_str(p, torch_shot_state_name(b->state));
		key(p, "frames");
		frames(p, b->stack);
		pickle_dict_end(p);
	}
	pickle_list_end(p);
	pickle_dict_end(p);
}

/* A setting of PYTORCH_CUDA_ALLOC_CONF ("k1:v1,k2:v2"), or NULL. */
static const char *conf_value(const char *conf, const char *name, char *out, size_t size)
{
	size_t n = strlen(name);
	for (const char *c = conf; c && *c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL) {
		while (*c == ' ')
			c++;
		if (strncmp(c, name, n) == 0 && c[n] == ':') {
			size_t len = strcspn(c + n + 1, ",");
			snprintf(out, size, "%.*s", (int)len, c + n + 1);
			return out;
		}
	}
	return NULL;
}

static void settings(struct pickle *p, const char *conf)
{
	char v[64];
	pickle_dict_begin(p);
	key(p, "PYTORCH_CUDA_ALLOC_CONF");
	pickle_str(p, conf);
	key(p, "max_split_size");
	pickle_int(p, conf_value(conf, "max_split_size_mb", v, sizeof v) ? strtoll(v, NULL, 10) << 20 : -1);
	key(p, "garbage_collection_threshold");
	pickle_float(p, conf_value(conf, "garbage_collection_threshold", v, sizeof v) ? strtod(v, NULL) : 0.0);
	key(p, "expandable_segments");
	pickle_bool(p, conf_value(conf, "expandable_segments", v, sizeof v) && strcmp(v, "True") == 0);
	key(p, "pinned_num_register_threads");
	pickle_int(p, conf_value(conf, "pinned_num_register_threads", v, sizeof v) ? strtoll(v, NULL, 10) : 1);
	key(p, "release_lock_on_cudamalloc");
	pickle_bool(p, conf_value(conf, "release_lock_on_cudamalloc", v, sizeof v) && strcmp(v, "True") == 0);
	key(p, "pinned_use_cuda_host_register");
	pickle_bool(p, conf_value(conf, "pinned_use_cuda_host_register", v, sizeof v) && strcmp(v, "True") == 0);
	key(p, "roundup_power2_divisions");
	pickle_dict_begin(p);
	pickle_dict_end(p);
	pickle_dict_end(p);
}

int torch_snapshot_pickle(const struct torch_shot *s, unsigned char **buf, size_t *len)
{
	struct pickle p;
	int devices = 1;
	pickle_init(&p);
	pickle_dict_begin(&p);
	key(&p, "segments");
	pickle_list_begin(&p);
	for (size_t i = 0; i < s->n_segment; i++) {
		segment(&p, s, &s->segment[i]);
		if (s->segment[i].device + 1 > devices)
			devices = s->segment[i].device + 1;
	}
	pickle_list_end(&p);
	for (size_t i = 0; i < s->n_device; i++)
		if (s->device[i].device + 1 > devices)
			devices = s->device[i].device + 1;
	key(&p, "device_traces");
	pickle_list_begin(&p);
	for (int d = 0; d < devices; d++) {
		pickle_list_begin(&p);
		pickle_list_end(&p);
	}
	pickle_list_end(&p);
	key(&p, "allocator_settings");
	settings(&p, s->alloc_conf);
	pickle_dict_end(&p);
	int err = pickle_finish(&p);
	if (err < 0) {
		pickle_free(&p);
		return err;
	}
	*buf = p.buf;
	*len = p.len;
	return 0;
}

int torch_snapshot_write(const char *path, const struct torch_shot *s)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	char *tmp = NULL;
	int err = torch_snapshot_pickle(s, &buf, &len);
	int fd = err ? -1 : outfile_temp_beside(path, &tmp);
	if (!err && fd < 0)
		err = -errno;
	for (size_t off = 0; !err && off < len;) {
		ssize_t n = write(fd, buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err && tmp)
		unlink(tmp);
	if (err)
		log_warn("cannot write the memory snapshot %s: %s", path, strerror(-err));
	free(tmp);
	free(buf);
	return err;
}

int torch_snapshot_check(const char *path, const char *what)
{
	struct stat st;
	char *tmp;
	int fd;
	if (!path)
		return 0;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		log_error("cannot write %s file '%s': %s", what, path,
			  S_ISLNK(st.st_mode) ? "it is a symbolic link" : "not a regular file");
		return -EINVAL;
	}
	if ((fd = outfile_temp_beside(path, &tmp)) < 0) {
		int err = errno;
		log_error("cannot write %s file '%s': %s", what, path, strerror(err));
		return -err;
	}
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}
