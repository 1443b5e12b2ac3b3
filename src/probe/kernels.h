/* kernels.h — names for what a launch passes: a host stub (its symbol is the mangled kernel
 * name), a CUDA 13 kernel handle (named by the static `__handle` variable that holds it, or by
 * the __cudaGetKernel call that made it), or a driver CUfunction/CUkernel (named by the
 * cuModuleGetFunction/cuLibraryGetKernel call that returned it). Where nothing names it, the
 * name says so: "kernel@0x…" or "module+0x…", never a guess. */
#ifndef GPUTOP_KERNELS_H
#define GPUTOP_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct module;
struct tracee;
struct kernels_state;

/* A process's part (p->kernels, base/tracee.h): the values it launches and its handle
 * variables; made and freed with it. The functions below that take a process act on its part
 * (the kernel ids are of its figures). */
struct kernels_state *kernels_state_new(void);
void kernels_state_free(struct kernels_state *st);

/* Kernel id (stats.h) for a launched value. Hot path: one hash lookup once it is known. */
int kernels_id_of(struct tracee *p, pid_t pid, uint64_t value);

/* Whether value was ever looked up or learned (a launch of a value never seen may be worth
 * asking the driver about). */
bool kernels_seen(const struct tracee *p, uint64_t value);
bool kernels_named(const struct tracee *p, uint64_t value);	/* learned, not "kernel@0x…", not to recheck */
bool kernels_unknown(const struct tracee *p, uint64_t value);	/* not looked up, "kernel@0x…", or doubtful */
/* A name that is the host side's of an nvcc extended lambda's kernel (its placeholder types,
 * "Unvhdl…", which do not demangle; the device's name, CUPTI's, differs) is doubtful: the value
 * is not kernels_named, so that its first launch's park asks the driver, and such a name never
 * replaces another. The driver was asked about value (its answer, if any, learned): the name
 * it has is kept from now on. */
void kernels_asked(struct tracee *p, uint64_t value);
/* Module loading returned value again, recorded after the return (the name it was asked for
 * is not read then: the caller's buffer may hold another by now). Named already, it keeps its
 * name but is no longer kernels_named, so that the driver is asked again at its next launch
 * that stops: a handle the driver reused after a module's unload names another kernel.
 * Whether it was named. */
bool kernels_recheck(struct tracee *p, uint64_t value);

/* Learning names. mangled may be a C++ mangled name or a plain one (extern "C", Triton). */
void kernels_learn_name(struct tracee *p, uint64_t value, const char *mangled);
void kernels_learn_from_stub(struct tracee *p, uint64_t value, uint64_t stub);	/* value is named as stub is */
void kernels_learn_alias(struct tracee *p, uint64_t value, uint64_t known);	/* value is named as known is */

/* A module's static `__handle` variables (found by module_scan.c; name: the kernel's, demangled,
 * kept by the caller for the session) are read by kernels_scan_handle_vars: at the first
 * launch of an unknown handle after they were added (or by kernels_scan_pending, once the
 * program runs again after the stop that found them), then at most once a second. */
void kernels_add_handle_var(struct tracee *p, const struct module *m, uint64_t var_addr, const char *name);
void kernels_forget_module(struct tracee *p, const struct module *m);
void kernels_scan_handle_vars(struct tracee *p, pid_t pid);
void kernels_scan_pending(struct tracee *p, pid_t pid);
void kernels_reset(struct tracee *p);

/* The kernel's mangled name inside a nvcc device-stub symbol, e.g. from
 * "_ZZ21__device_stub__Z2kkPfPfE8__handle" → "_Z2kkPf" (written to out). 0 or -1. */
int kernels_stub_symbol_to_mangled(const char *symbol, char *out, size_t size);

/* Demangled copy of name (malloc'd; the name itself when it is not mangled). */
char *kernels_demangle(const char *name);

#endif
