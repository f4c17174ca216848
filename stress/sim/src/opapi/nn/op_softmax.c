/*
 * op_softmax.c - aclnnSoftmax(self, int64_t dim, out) (the real ops-nn signature; header
 * aclnn_softmax.h): out = exp(x - max) / sum(exp(x - max)) along dim.
 *
 * dtypes FLOAT, FLOAT16, BF16, DOUBLE; out has self's shape and a floating dtype; dim in
 * [-ndim, ndim) (a 0-d tensor takes -1 or 0).  Each slice along dim is read through the view's
 * strides, computed in float32 (double for DOUBLE): the max, then exp(x - max) summed in order,
 * then each exp divided by the sum and rounded once to out's dtype.  Empty tensors succeed and
 * write nothing (there is nothing to write).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aclnn_softmax.h"
#include "nb_scratch_pool.h"
#include "op_softmax.h"

#define OP "aclnnSoftmax"

typedef struct {
    int32_t dim;
    int32_t plan; /* fault plan-cache: the plan slot phase 1 filled, -1 for none */
} softmax_attrs;

/* Fault "plan-cache": phase 1 writes the call's plan (reduction dim, out dtype) into a
 * process-wide cache whose slots are keyed by self's shape only, and the executor keeps the
 * slot's index instead of a copy; the kernel reads the plan back from the slot, after checking
 * that the slot still holds its shape.  Serially every phase 1 refreshes the slot right before
 * its launch; two calls of one shape and one plan in flight write the same plan.  Only calls of
 * the same shape that differ in dtype or dim in flight together (A.phase1, B.phase1, A.launch)
 * launch A with B's plan: A reduces along B's dim and rounds to B's dtype. */
#define PLAN_SLOTS 8
typedef struct {
    int ndim;
    int64_t dims[OP_MAX_DIMS];
    int32_t dim, dtype;
} softmax_plan;
/* The cache is simulator state shared by every library that links this object: it lives in
 * libnnopbase (aclsim_shared_state), one per process. */
typedef struct {
    softmax_plan slot[PLAN_SLOTS];
    int used, next;
    pthread_mutex_t mu;
} plan_cache;

static void plan_init(void *state)
{
    plan_cache *c = state;
    pthread_mutex_init(&c->mu, NULL);
}

static plan_cache *plans(void)
{
    return aclsim_shared_state("softmax.plan_cache", sizeof(plan_cache), plan_init);
}

static int plan_matches(const softmax_plan *p, const aclsim_tensor_desc *x)
{
    return p->ndim == x->ndim && !memcmp(p->dims, x->dims, sizeof(int64_t) * (size_t)x->ndim);
}

static int32_t plan_publish(const aclsim_tensor_desc *x, int32_t dim, int32_t dtype)
{
    plan_cache *c = plans();
    if (!c)
        return -1;
    pthread_mutex_lock(&c->mu);
    int slot = -1;
    for (int i = 0; i < c->used && slot < 0; i++)
        if (plan_matches(&c->slot[i], x))
            slot = i; /* keyed by the shape alone: the bug */
    if (slot < 0) {
        slot = c->used < PLAN_SLOTS ? c->used++ : c->next++ % PLAN_SLOTS;
        c->slot[slot].ndim = x->ndim;
        memcpy(c->slot[slot].dims, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    }
    c->slot[slot].dim = dim;
    c->slot[slot].dtype = dtype;
    pthread_mutex_unlock(&c->mu);
    return slot;
}

/* The plan a kernel runs: its slot's when the slot still holds its shape, else its own. */
static softmax_attrs plan_read(const softmax_attrs *a, const aclsim_tensor_desc *x, int32_t *dt)
{
    softmax_attrs out = *a;
    plan_cache *c = a->plan < 0 ? NULL : plans();
    if (!c)
        return out;
    pthread_mutex_lock(&c->mu);
    if (plan_matches(&c->slot[a->plan], x)) {
        out.dim = c->slot[a->plan].dim;
        *dt = c->slot[a->plan].dtype;
    }
    pthread_mutex_unlock(&c->mu);
    return out;
}

static int float_dtype(int32_t dt) { return op_is_floating(dt); }

/* One slice of n values (float32 or double compute), written as doubles into res. */
static void softmax_row(const double *x, int64_t n, int dbl, double *res)
{
    if (dbl) {
        double m = -INFINITY, s = 0.0;
        for (int64_t i = 0; i < n; i++)
            m = x[i] > m ? x[i] : m;
        for (int64_t i = 0; i < n; i++)
            s += (res[i] = exp(x[i] - m));
        for (int64_t i = 0; i < n; i++)
            res[i] /= s;
        return;
    }
    float m = -INFINITY, s = 0.0f;
    for (int64_t i = 0; i < n; i++)
        m = (float)x[i] > m ? (float)x[i] : m;
    for (int64_t i = 0; i < n; i++) {
        float e = expf((float)x[i] - m);
        res[i] = e;
        s += e;
    }
    for (int64_t i = 0; i < n; i++)
        res[i] = (float)res[i] / s;
}

static int softmax_kernel(aclsim_kernel_ctx *k)
{
    const aclsim_tensor_desc *x = &k->inputs[0], *o = &k->outputs[0];
    int32_t round_to = o->dtype;
    const softmax_attrs plan = plan_read(k->attrs, x, &round_to);
    const int nd = x->ndim, dim = plan.dim;
    const int64_t n = nd ? x->dims[dim] : 1, xs = nd ? x->strides[dim] : 0;
    const int64_t xes = aclsim_dtype_size(x->dtype), oes = aclsim_dtype_size(o->dtype);
    int64_t cst[OP_MAX_DIMS];
    op_contiguous_strides(o->dims, nd, cst);
    const int64_t cs = nd ? cst[dim] : 0;
    aclsim_stage *st;
    uint8_t *dst = aclsim_stage_begin(o, &st);
    double *row = malloc((size_t)n * 2 * sizeof *row);
    if (!dst || !row) {
        free(row);
        aclsim_stage_abandon(st);
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                  k->op);
    }
    op_iter it;
    op_softmax_rows(&it, x, dim);
    op_iter_add_strided(&it, dst, cst, oes);
    int64_t outer = aclsim_numel(x) / (n ? n : 1);
    for (int64_t r = 0; r < outer; r++) {
        const uint8_t *px = op_iter_ptr(&it, 0);
        uint8_t *pd = (uint8_t *)op_iter_ptr(&it, 1);
        for (int64_t i = 0; i < n; i++)
            row[i] = op_load_f64(px + i * xs * xes, x->dtype);
        softmax_row(row, n, x->dtype == ACL_DOUBLE, row + n);
        for (int64_t i = 0; i < n; i++) {
            double v = row[n + i];
            if (round_to != o->dtype) { /* the plan's dtype: another call's (plan-cache) */
                _Alignas(16) uint8_t tmp[16] = {0};
                op_store_f64(tmp, round_to, v);
                v = op_load_f64(tmp, round_to);
            }
            op_store_f64(pd + i * cs * oes, o->dtype, v);
        }
        op_iter_next(&it);
    }
    free(row);
    aclsim_stage_commit(st, o);
    return 0;
}

ACLSIM_API aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                    aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor)
{
    const char *api = OP "GetWorkspaceSize";
    const void *ptrs[] = {self, out, workspaceSize, executor};
    const char *names[] = {"self", "out", "workspaceSize", "executor"};
    for (int i = 0; i < 4; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, names[i]);
    aclsim_tensor_desc ds, dout;
    int rc;
    if ((rc = aclsim_tensor_get(api, "self", self, &ds)) ||
        (rc = aclsim_tensor_get(api, "out", out, &dout)))
        return rc;
    const aclsim_tensor_desc *all[] = {&ds, &dout};
    for (int i = 0; i < 2; i++) {
        if (!float_dtype(all[i]->dtype))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s dtype %s is not supported (supported: FLOAT, FLOAT16, "
                                    "BF16, DOUBLE)",
                                    api, i ? "out" : "self", aclsim_dtype_name(all[i]->dtype));
        if (all[i]->ndim > OP_MAX_DIMS)
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s has %d dims (at most %d)",
                                    api, i ? "out" : "self", (int)all[i]->ndim, OP_MAX_DIMS);
    }
    char b1[256], b2[256];
    if (!op_same_shape(ds.dims, ds.ndim, dout.dims, dout.ndim))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: out shape %s must equal self shape %s", api,
                                aclsim_shape_str(dout.dims, dout.ndim, b1, sizeof b1),
                                aclsim_shape_str(ds.dims, ds.ndim, b2, sizeof b2));
    int d = 0;
    rc = op_softmax_dim(api, "self", dim, (int)ds.ndim, &d);
    if (rc)
        return rc;
    softmax_attrs attrs = {.dim = d, .plan = -1};
    if (aclsim_fault("plan-cache") && ds.ndim > 0)
        attrs.plan = plan_publish(&ds, d, dout.dtype);
    return op_publish_unary(OP, softmax_kernel, aclsim_numel(&ds) != 0, &ds, &dout, &attrs, sizeof attrs,
                            workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize,
                                    aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
