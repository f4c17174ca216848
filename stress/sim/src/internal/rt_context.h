/*
 * rt_context.h - a context as the rt_*.c files of libascendcl see it (hidden symbols):
 * rt_context.c creates and destroys contexts, rt_current.c keeps each thread's current one and
 * resolves it, rt_sysparam.c reads and writes its system-parameter overrides.
 */
#ifndef ACLSIM_RT_CONTEXT_H
#define ACLSIM_RT_CONTEXT_H

#include <pthread.h>

#include "rt_private.h"

/* aclSysParamOpt values: 0 DETERMINISTIC .. 3 ENABLE_KERNEL_EARLY_START. */
#define RT_N_OPTS 4

typedef struct {
    aclsim_obj obj;
    int32_t device;
    void *default_stream;       /* handle; immutable after creation */
    pthread_mutex_t mu;         /* guards opt_* */
    int64_t opt_value[RT_N_OPTS];
    unsigned char opt_set[RT_N_OPTS];
} rt_context;

#define RT_CTX_KINDS \
    (ACLSIM_KIND_BIT(ACLSIM_KIND_CONTEXT) | ACLSIM_KIND_BIT(ACLSIM_KIND_CONTEXT_DEFAULT))

/* rt_current.c */
/* The live context of `handle` with a reference (aclsim_obj_release it), or NULL. */
RT_HIDDEN rt_context *rt_ctx_acquire(void *handle);
/* The calling thread's current context with a reference, or NULL (none, or destroyed). */
RT_HIDDEN rt_context *rt_current_acquire(void);
/* Make `handle` the calling thread's current context. */
RT_HIDDEN void rt_current_set(void *handle);
/* A context being torn down: the calling thread forgets it if it was current. */
RT_HIDDEN void rt_current_forget(void *handle);

#endif /* ACLSIM_RT_CONTEXT_H */
