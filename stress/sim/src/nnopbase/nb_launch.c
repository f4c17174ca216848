/*
 * nb_launch.c - phase 2 of every operator (aclsim_executor_run): checks the executor, the
 * calling thread's context, the workspace and the stream, runs the executor's launch hook,
 * snapshots the descriptors into a launch record and enqueues it on the stream; and the launch
 * task the stream worker runs: it pins every tensor's and the workspace's device memory, runs
 * the kernel, checks the guards after the outputs.  The launch holds a reference to the
 * executor (nb_executor.c) until its task is released.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "nb_executor.h"

typedef struct {
    aclsim_executor *ex; /* referenced */
    aclsim_tensor_desc *in, *out;
    void *workspace;
    uint64_t workspace_size;
    uint64_t launch_id;
    int64_t launch_args[ACLSIM_LAUNCH_ARGS];
    void *stream; /* the launch stream's handle */
} launch;

static atomic_ullong g_launch_id;

/* ---- the launch task (runs on the stream worker) -------------------------------------------- */

static int pin_tensor(const launch *L, const char *role, int idx, const char *name,
                      const aclsim_tensor_desc *d, aclsim_devmem_ref **pin, char *msg, size_t cap)
{
    uint64_t first, nbytes;
    *pin = NULL;
    if (aclsim_extent(d, &first, &nbytes) != 0) {
        aclsim_format(msg, cap, "kernel %s: %s %d (%s) has a view that overflows", L->ex->op, role,
                      idx, name);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (nbytes == 0)
        return 0; /* empty tensors touch no memory; NULL data is fine */
    const uint8_t *p = (const uint8_t *)d->data + first;
    *pin = d->data ? aclsim_devmem_pin(p, nbytes) : NULL;
    if (!*pin && aclsim_sanitize_on)
        aclsim_san_bad_range(L->ex->op, p, nbytes, role[0] == 'i' ? ACLSIM_SAN_R : ACLSIM_SAN_W);
    if (!*pin) {
        aclsim_format(msg, cap,
                      "kernel %s: %s %d (%s) reads/writes %p + %llu bytes, which is not inside one "
                      "live device allocation (NULL, freed, or too small)",
                      L->ex->op, role, idx, name, (const void *)p, (unsigned long long)nbytes);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    return 0;
}

static int launch_task(void *arg, char *msg, size_t cap)
{
    launch *L = arg;
    aclsim_executor *ex = L->ex;
    int n_in = ex->in.n, n_out = ex->out.n;
    aclsim_devmem_ref **pins = calloc((size_t)(n_in + n_out + 1), sizeof *pins);
    if (!pins) {
        aclsim_format(msg, cap, "kernel %s: out of host memory", ex->op);
        return ACL_ERROR_RT_INTERNAL_ERROR;
    }
    int rc = 0;
    if (aclsim_sanitize_on)
        aclsim_san_call_enter(ex->san_call, ex->op, "kernel");
    for (int i = 0; i < n_in && !rc; i++)
        rc = pin_tensor(L, "input", i, ex->in.names[i], &L->in[i], &pins[i], msg, cap);
    for (int i = 0; i < n_out && !rc; i++)
        rc = pin_tensor(L, "output", i, ex->out.names[i], &L->out[i], &pins[n_in + i], msg, cap);
    aclsim_devmem_ref **wpin = &pins[n_in + n_out];
    if (!rc && L->workspace_size) {
        *wpin = aclsim_devmem_pin(L->workspace, L->workspace_size);
        if (!*wpin) {
            aclsim_format(msg, cap,
                          "kernel %s: workspace %p + %llu bytes is not inside one live device "
                          "allocation (freed before the kernel ran?)",
                          ex->op, L->workspace, (unsigned long long)L->workspace_size);
            rc = ACL_ERROR_RT_AICORE_EXCEPTION;
        }
    }
    for (int i = 0; i < n_in && !rc && aclsim_sanitize_on && !ex->san_own_loads; i++) /* reads */
        aclsim_san_tensor(&L->in[i], ACLSIM_SAN_R, __FILE__, __LINE__);
    if (!rc && ex->kernel) {
        aclsim_kernel_ctx k = {
            .op = ex->op,
            .n_inputs = n_in,
            .inputs = L->in,
            .n_outputs = n_out,
            .outputs = L->out,
            .attrs = ex->attrs,
            .attrs_size = ex->attrs_size,
            .workspace = L->workspace,
            .workspace_size = L->workspace_size,
            .deterministic = ex->deterministic,
            .launch_id = L->launch_id,
            .msg = msg,
            .msg_cap = cap,
            .stream = L->stream,
        };
        memcpy(k.launch_args, L->launch_args, sizeof k.launch_args);
        rc = ex->kernel(&k);
        if (rc && !*msg)
            aclsim_format(msg, cap, "kernel %s failed", ex->op);
    }
    /* Guards after the outputs and the workspace: did the kernel write past them? */
    char who[96], gmsg[ACLSIM_MSG_CAP];
    snprintf(who, sizeof who, "kernel %s", ex->op);
    for (int i = n_in; i < n_in + n_out + 1; i++) {
        if (pins[i] && aclsim_devmem_check_guard(pins[i], who, gmsg, sizeof gmsg) && !rc) {
            aclsim_format(msg, cap, "%s", gmsg);
            rc = ACL_ERROR_RT_AICORE_EXCEPTION;
        }
    }
    for (int i = 0; i < n_in + n_out + 1; i++)
        aclsim_devmem_unpin(pins[i]);
    free(pins);
    if (aclsim_sanitize_on)
        aclsim_san_call_leave();
    return rc;
}

static void launch_release(void *arg)
{
    launch *L = arg;
    aclsim_obj_release(&L->ex->obj);
    free(L->in);
    free(L->out);
    free(L);
}

/* ---- phase 2 --------------------------------------------------------------------------------- */

aclnnStatus aclsim_executor_run(const char *op, void *workspace, uint64_t workspaceSize,
                                aclOpExecutor *executor, aclrtStream stream)
{
    if (!executor)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", op);
    aclsim_executor *ex = (aclsim_executor *)aclsim_obj_acquire(executor, EXEC_KIND);
    if (!ex)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: executor %p already run or destroyed (a non-repeatable "
                                "executor runs once; call %sGetWorkspaceSize again or use "
                                "aclSetAclOpExecutorRepeatable)",
                                op, (void *)executor, op);
    if (strcmp(ex->op, op) != 0) {
        int rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                  "%s: executor %p was created by %sGetWorkspaceSize, not by "
                                  "%sGetWorkspaceSize",
                                  op, (void *)executor, ex->op, op);
        aclsim_obj_release(&ex->obj);
        return rc;
    }
    pthread_mutex_lock(&ex->mu);
    int repeatable = ex->repeatable;
    pthread_mutex_unlock(&ex->mu);
    if (!repeatable) {
        /* Consume it: from here on, the reference we hold is the last one. */
        aclsim_obj *table_ref = aclsim_obj_unregister(executor, EXEC_KIND);
        if (!table_ref) { /* another thread ran it at the same moment */
            aclsim_obj_release(&ex->obj);
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: executor %p already run or destroyed",
                                    op, (void *)executor);
        }
        aclsim_obj_release(table_ref);
    }

    int rc = 0;
    aclsim_stream *s = NULL;
    launch *L = NULL;
    if (!aclsim_current_context()) {
        rc = aclsim_set_error(ACLNN_ERR_RUNTIME_ERROR,
                              "%s: no current context in the calling thread (runtime error "
                              "107002): call aclrtSetDevice or aclrtSetCurrentContext on this "
                              "thread first",
                              op);
        goto out;
    }
    if (workspaceSize < ex->workspace_size) {
        rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                              "%s: workspaceSize %llu is smaller than the %llu bytes returned by "
                              "%sGetWorkspaceSize",
                              op, (unsigned long long)workspaceSize,
                              (unsigned long long)ex->workspace_size, op);
        goto out;
    }
    if (ex->workspace_size > 0 && (!workspace || !aclsim_devmem_lookup(workspace, ex->workspace_size, NULL))) {
        rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                              "%s: workspace %p + %llu bytes is not inside one live device "
                              "allocation",
                              op, workspace, (unsigned long long)ex->workspace_size);
        goto out;
    }
    int src = aclsim_stream_resolve(stream, &s);
    if (src) {
        rc = aclsim_set_error(ACLNN_ERR_RUNTIME_ERROR,
                              src == ACL_ERROR_RT_CONTEXT_NULL
                                  ? "%s: the current context has no default stream (runtime error "
                                    "%d, stream %p)"
                                  : "%s: stream is not a live stream (runtime error %d, stream %p)",
                              op, src, stream);
        goto out;
    }
    for (int i = 0; i < ex->out.n && aclsim_sanitize_on; i++) /* the launch's to write */
        aclsim_san_output(&ex->out.d[i], ex->in.d, ex->in.n, ex->san_call, ex->op,
                          ex->out.names[i]);
    if (!ex->kernel)
        goto out; /* nothing to compute (empty tensors) */
    L = calloc(1, sizeof *L);
    if (L) {
        L->in = malloc((size_t)(ex->in.n ? ex->in.n : 1) * sizeof *L->in);
        L->out = malloc((size_t)(ex->out.n ? ex->out.n : 1) * sizeof *L->out);
    }
    if (!L || !L->in || !L->out) {
        rc = aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", op);
        goto out;
    }
    pthread_mutex_lock(&ex->mu);
    memcpy(L->in, ex->in.d, (size_t)ex->in.n * sizeof *L->in);
    memcpy(L->out, ex->out.d, (size_t)ex->out.n * sizeof *L->out);
    pthread_mutex_unlock(&ex->mu);
    L->ex = ex;
    L->workspace = workspace;
    L->workspace_size = ex->workspace_size;
    L->launch_id = atomic_fetch_add(&g_launch_id, 1) + 1;
    L->stream = aclsim_stream_handle(s);
    if (ex->launch_hook && aclsim_sanitize_on)
        aclsim_san_call_enter(ex->san_call, ex->op, "phase2");
    if (ex->launch_hook)
        ex->launch_hook(ex->attrs, L->launch_args); /* on the launching thread, now */
    if (ex->launch_hook && aclsim_sanitize_on)
        aclsim_san_call_leave();
    if (aclsim_stream_enqueue(s, launch_task, L, launch_release) != 0) {
        L->ex = NULL;
        rc = aclsim_set_error(ACLNN_ERR_RUNTIME_ERROR,
                              "%s: stream %p is being destroyed (runtime error)", op, stream);
        goto out;
    }
    aclsim_stream_put(s);
    return ACLNN_SUCCESS; /* our executor reference now belongs to the launch */

out:
    if (L) {
        free(L->in);
        free(L->out);
        free(L);
    }
    aclsim_stream_put(s);
    aclsim_obj_release(&ex->obj);
    return rc;
}
