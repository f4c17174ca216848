/*
 * nb_executor.c - aclOpExecutor: the generic two-stage machinery shared by all operators.
 *
 * Phase 1 (an operator's ...GetWorkspaceSize) builds an executor holding COPIES of the tensor
 * descriptors and attributes, so the user may destroy the aclTensor objects right after it.
 * Phase 2 (aclsim_executor_run, nb_launch.c) launches it.  A single-use executor is
 * unregistered by phase 2 and freed when its kernel has run; a repeatable one lives until
 * aclDestroyAclOpExecutor and its last in-flight launch.  This file: building and publishing an
 * executor, and the public executor functions (repeatable, destroy, tensor addresses,
 * aclnnInit / aclnnFinalize).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_executor.h"

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

void aclsim_executor_set_unrepeatable(aclsim_executor *ex)
{
    ex->unrepeatable = 1;
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
    if (ex->unrepeatable) { /* as CANN's SetRepeatable: ACLNN_ERR_INNER, it stays single-use */
        int rc = aclsim_set_error(ACLNN_ERR_INNER,
                                  "aclSetAclOpExecutorRepeatable: the %s executor %p cannot be "
                                  "repeatable (its phase 1 copied host data to the device)",
                                  ex->op, (void *)executor);
        aclsim_obj_release(&ex->obj);
        return rc;
    }
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
