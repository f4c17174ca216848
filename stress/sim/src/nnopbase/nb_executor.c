/*
 * nb_executor.c - aclOpExecutor: the generic two-stage machinery shared by all operators.
 *
 * Phase 1 (an operator's ...GetWorkspaceSize) builds an executor holding COPIES of the tensor
 * descriptors and attributes, so the user may destroy the aclTensor objects right after it.
 * Phase 2 (aclsim_executor_run) checks the executor, context, workspace and stream, snapshots
 * the descriptors into a launch record and enqueues it on the stream.  The launch holds a
 * reference to the executor: a single-use executor is unregistered by phase 2 and freed when
 * its kernel has run; a repeatable one lives until aclDestroyAclOpExecutor and its last
 * in-flight launch.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "nb_private.h"

#define NAME_CAP 32
#define EXEC_KIND ACLSIM_KIND_BIT(ACLSIM_KIND_EXECUTOR)

typedef struct {
    int n, cap;
    aclsim_tensor_desc *d;
    char (*names)[NAME_CAP];
} tensor_list;

struct aclsim_executor {
    aclsim_obj obj;
    pthread_mutex_t mu; /* guards repeatable and the data addresses in in/out */
    char op[64];
    aclsim_kernel_fn kernel;
    uint64_t workspace_size;
    int deterministic;
    int repeatable;
    tensor_list in, out;
    void *attrs;
    size_t attrs_size;
    aclsim_launch_hook launch_hook; /* optional, run at phase 2 on the launching thread */
    uint64_t san_call;              /* the sanitizer's call number (0 when it is off) */
    int san_own_loads;              /* the kernel reports its input loads itself */
};

typedef struct {
    aclsim_executor *ex; /* referenced */
    aclsim_tensor_desc *in, *out;
    void *workspace;
    uint64_t workspace_size;
    uint64_t launch_id;
    int64_t launch_args[ACLSIM_LAUNCH_ARGS];
} launch;

static atomic_ullong g_launch_id;

static void executor_free(aclsim_obj *o)
{
    aclsim_executor *ex = (aclsim_executor *)o;
    pthread_mutex_destroy(&ex->mu);
    free(ex->in.d);
    free(ex->in.names);
    free(ex->out.d);
    free(ex->out.names);
    free(ex->attrs);
    free(ex);
}

int aclsim_kernel_fail(aclsim_kernel_ctx *k, int code, const char *fmt, ...)
{
    if (k->msg && k->msg_cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->msg, k->msg_cap, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ---- phase 1 --------------------------------------------------------------------------------- */

aclsim_executor *aclsim_executor_create(const char *op, aclsim_kernel_fn kernel,
                                        uint64_t workspace_size)
{
    aclsim_executor *ex = calloc(1, sizeof *ex);
    if (!ex) {
        aclsim_set_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%s: out of host memory", op);
        return NULL;
    }
    aclsim_obj_init(&ex->obj, ACLSIM_KIND_EXECUTOR, executor_free);
    pthread_mutex_init(&ex->mu, NULL);
    snprintf(ex->op, sizeof ex->op, "%s", op);
    ex->kernel = kernel;
    ex->workspace_size = workspace_size;
    ex->deterministic = aclsim_deterministic();
    if (aclsim_sanitize_on)
        ex->san_call = aclsim_san_call_new(op);
    return ex;
}

static int list_add(aclsim_executor *ex, tensor_list *l, const char *name, const aclsim_tensor_desc *d)
{
    if (l->n == l->cap) {
        int ncap = l->cap ? 2 * l->cap : 4;
        aclsim_tensor_desc *nd = realloc(l->d, (size_t)ncap * sizeof *nd);
        if (nd)
            l->d = nd;
        char(*nn)[NAME_CAP] = nd ? realloc(l->names, (size_t)ncap * sizeof *nn) : NULL;
        if (!nd || !nn)
            return aclsim_set_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%s: out of host memory", ex->op);
        l->names = nn;
        l->cap = ncap;
    }
    l->d[l->n] = *d;
    snprintf(l->names[l->n], NAME_CAP, "%s", name ? name : "?");
    l->n++;
    return 0;
}

void aclsim_executor_san_own_loads(aclsim_executor *ex)
{
    ex->san_own_loads = 1;
}

void aclsim_executor_set_launch_hook(aclsim_executor *ex, aclsim_launch_hook hook)
{
    ex->launch_hook = hook;
}

int aclsim_executor_add_input(aclsim_executor *ex, const char *name, const aclsim_tensor_desc *d)
{
    return list_add(ex, &ex->in, name, d);
}

int aclsim_executor_add_output(aclsim_executor *ex, const char *name, const aclsim_tensor_desc *d)
{
    return list_add(ex, &ex->out, name, d);
}

int aclsim_executor_set_attrs(aclsim_executor *ex, const void *attrs, size_t size)
{
    void *copy = size ? malloc(size) : NULL;
    if (size && !copy)
        return aclsim_set_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%s: out of host memory", ex->op);
    if (size)
        memcpy(copy, attrs, size);
    free(ex->attrs);
    ex->attrs = copy;
    ex->attrs_size = size;
    return 0;
}

aclnnStatus aclsim_executor_publish(aclsim_executor *ex, uint64_t *workspaceSize,
                                    aclOpExecutor **executor)
{
    void *h = aclsim_obj_register(&ex->obj);
    if (!h) {
        int rc = aclsim_set_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%s: out of host memory", ex->op);
        aclsim_obj_release(&ex->obj);
        return rc;
    }
    *workspaceSize = ex->workspace_size;
    *executor = (aclOpExecutor *)h;
    return ACLNN_SUCCESS;
}

void aclsim_executor_discard(aclsim_executor *ex)
{
    if (ex)
        aclsim_obj_release(&ex->obj);
}

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

/* ---- public executor functions --------------------------------------------------------------- */

ACLSIM_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    if (!executor)
        return aclsim_set_error(ACLNN_ERR_INNER_NULLPTR, /* 561103 as in CANN */
                                "aclSetAclOpExecutorRepeatable: executor is NULL");
    aclsim_executor *ex = (aclsim_executor *)aclsim_obj_acquire(executor, EXEC_KIND);
    if (!ex)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "aclSetAclOpExecutorRepeatable: executor %p already run or destroyed",
                                (void *)executor);
    pthread_mutex_lock(&ex->mu);
    ex->repeatable = 1;
    pthread_mutex_unlock(&ex->mu);
    aclsim_obj_release(&ex->obj);
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    if (!executor) /* 561103 as in CANN */
        return aclsim_set_error(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor: executor is NULL");
    aclsim_obj *o = aclsim_obj_unregister(executor, EXEC_KIND);
    if (!o)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "aclDestroyAclOpExecutor: executor %p already run or destroyed",
                                (void *)executor);
    aclsim_obj_release(o); /* in-flight launches keep their own references */
    return ACLNN_SUCCESS;
}

/* Point every descriptor the executor copied from `tensor` at addr; the number changed. */
static int retarget(tensor_list *l, const aclTensor *tensor, void *addr)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        if (l->d[i].handle == tensor) {
            l->d[i].data = addr;
            n++;
        }
    return n;
}

/* As in CANN (nnopbase acl_op_api.cpp): a NULL tensor is 561103; the tensor's address is set
 * first (even when the executor is NULL, which is then 561103); for op_api executors `index` is
 * not used: the executor refers to the tensor, so every input and output built from it follows
 * (an in-place operator's selfRef too).  Stricter: a handle that is not live is 161002. */
static aclnnStatus set_addr(const char *api, aclOpExecutor *executor, aclTensor *tensor, void *addr)
{
    if (!tensor)
        return aclsim_set_error(ACLNN_ERR_INNER_NULLPTR, "%s: tensor is NULL", api);
    if (nb_tensor_set_data(tensor, addr) != 0)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: tensor %p is not a live aclTensor",
                                api, (void *)tensor);
    if (!executor)
        return aclsim_set_error(ACLNN_ERR_INNER_NULLPTR, "%s: executor is NULL", api);
    aclsim_executor *ex = (aclsim_executor *)aclsim_obj_acquire(executor, EXEC_KIND);
    if (!ex)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: executor %p already run or destroyed",
                                api, (void *)executor);
    pthread_mutex_lock(&ex->mu);
    retarget(&ex->in, tensor, addr);
    retarget(&ex->out, tensor, addr);
    pthread_mutex_unlock(&ex->mu);
    aclsim_obj_release(&ex->obj);
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, size_t index, aclTensor *tensor,
                                             void *addr)
{
    (void)index; /* unused for op_api executors, as in CANN */
    return set_addr("aclSetInputTensorAddr", executor, tensor, addr);
}

ACLSIM_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, size_t index,
                                              aclTensor *tensor, void *addr)
{
    (void)index;
    return set_addr("aclSetOutputTensorAddr", executor, tensor, addr);
}

ACLSIM_API aclnnStatus aclnnInit(const char *configPath)
{
    (void)configPath; /* nothing to load: operators are compiled in */
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclnnFinalize(void)
{
    return ACLNN_SUCCESS;
}
