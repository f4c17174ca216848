/*
 * op_rms_norm.c - aclnnRmsNorm(x, gamma, double epsilon, yOut, rstdOut) (the real ops-nn
 * signature; header aclnn_rms_norm.h, whose outputs are declared `const aclTensor *`):
 *   rstd = 1 / sqrt(mean(x^2 over gamma's trailing dims) + epsilon),  y = x * rstd * gamma.
 *
 * x, gamma and yOut: FLOAT16, FLOAT or BF16; gamma's shape is x's last gamma.ndim dims; yOut
 * has x's shape; rstdOut (floating, FLOAT on CANN) has x's leading dims followed by ones.
 * Each row is read through the view's strides and computed in float32: the sum of squares in
 * order, epsilon as a float, y = (x * rstd) * gamma rounded once to yOut's dtype.
 *
 * Fault "gamma-cache" (ACLSIM_FAULTS): the kernel keeps gamma converted to float32 in a small
 * process-wide cache keyed by the device allocation that holds it (the runtime's allocation,
 * invalidated as a free callback would: an address freed with aclrtFree and allocated again is
 * a new allocation and misses), gamma's offset in it, its dtype and length.  A hit skips the
 * conversion and never reads gamma.  With fresh aclrtMalloc memory per call every lookup
 * misses; a caching allocator (torch_npu's, or the harness's --allocator recycle) never frees
 * the block, so when it hands the block to another call's gamma of the same length, with
 * other values, the kernel scales by the old gamma.  A case repeated in its own blocks gets its
 * own gamma back, so serial replay never shows it.
 */
#include <pthread.h>

#include "aclnn_rms_norm.h"
#include "nb_scratch_pool.h"
#include "op_norm.h"

#define OP "aclnnRmsNorm"

typedef struct {
    int32_t g;
    float eps;
} rms_attrs;

/* ---- the gamma-cache fault ------------------------------------------------------------- */
#define GC_SLOTS 8

typedef struct {
    uint64_t serial; /* the allocation holding gamma (0: slot empty) */
    int64_t offset, n;
    int32_t dtype;
    float *g;
} gc_slot;

typedef struct {
    pthread_mutex_t mu;
    gc_slot slot[GC_SLOTS];
    unsigned next;
} gc_state;

static void gc_init(void *state)
{
    gc_state *s = state;
    pthread_mutex_init(&s->mu, NULL);
}

/* gamma as float32 into g[0..n): from the cache when its allocation, offset, dtype and length
 * were seen, else gathered (and cached). */
static void gc_gamma(const aclsim_tensor_desc *gm, const int *all, float *g, int64_t n)
{
    aclsim_devmem_info info = {0};
    const uint8_t *at = op_view_base(gm);
    gc_state *s = aclsim_shared_state("rms_norm.gamma_cache", sizeof(gc_state), gc_init);
    if (!s || n <= 0 || !aclsim_devmem_lookup(at, 0, &info)) {
        op_gather_f32(gm, all, NULL, g);
        return;
    }
    const int64_t offset = at - (const uint8_t *)info.base;
    const size_t bytes = (size_t)n * sizeof *g;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < GC_SLOTS; i++) {
        gc_slot *c = &s->slot[i];
        if (c->g && c->serial == info.serial && c->offset == offset && c->dtype == gm->dtype &&
            c->n == n) {
            memcpy(g, c->g, bytes); /* a hit: gamma itself is not read */
            pthread_mutex_unlock(&s->mu);
            return;
        }
    }
    op_gather_f32(gm, all, NULL, g);
    float *copy = malloc(bytes);
    if (copy) {
        gc_slot *c = &s->slot[s->next++ % GC_SLOTS];
        free(c->g);
        memcpy(copy, g, bytes);
        *c = (gc_slot){info.serial, offset, n, gm->dtype, copy};
    }
    pthread_mutex_unlock(&s->mu);
}

static int rms_kernel(aclsim_kernel_ctx *k)
{
    const rms_attrs *a = k->attrs;
    const aclsim_tensor_desc *x = &k->inputs[0], *gm = &k->inputs[1];
    const aclsim_tensor_desc *y = &k->outputs[0], *rs = &k->outputs[1];
    int lead[OP_MAX_DIMS], trail[OP_MAX_DIMS], all[OP_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    op_norm_masks(x->ndim, a->g, lead, trail);
    const int64_t R = op_numel_over(x, trail), A = op_numel_over(x, lead);
    const int64_t yes = aclsim_dtype_size(y->dtype);
    float *buf = malloc((size_t)(2 * R + 1) * sizeof *buf);
    aclsim_stage *st = NULL;
    uint8_t *dst = aclsim_numel(y) ? aclsim_stage_begin(y, &st) : NULL;
    if (!buf || (aclsim_numel(y) && !dst)) {
        free(buf);
        aclsim_stage_abandon(st);
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                  k->op);
    }
    float *g = buf, *row = buf + R;
    if (aclsim_fault("gamma-cache"))
        gc_gamma(gm, all, g, R);
    else
        op_gather_f32(gm, all, NULL, g);
    op_iter rows, stat;
    op_iter_over(&rows, x, lead, NULL);
    op_iter_over(&stat, rs, all, NULL);
    for (int64_t r = 0; r < A; r++) {
        op_gather_f32(x, trail, op_iter_ptr(&rows, 0), row);
        float ss = 0.0f;
        for (int64_t j = 0; j < R; j++)
            ss += row[j] * row[j];
        float rstd = 1.0f / sqrtf(ss / (float)R + a->eps);
        for (int64_t j = 0; j < R; j++)
            op_store_c(dst + (r * R + j) * yes, y->dtype, (row[j] * rstd) * g[j], 0.0);
        op_store_c((uint8_t *)op_iter_ptr(&stat, 0), rs->dtype, rstd, 0.0);
        ACLSIM_SAN_STORE(op_iter_ptr(&stat, 0), aclsim_dtype_size(rs->dtype));
        op_iter_next(&rows);
        op_iter_next(&stat);
    }
    free(buf);
    if (st)
        aclsim_stage_commit(st, y);
    return 0;
}

static int rms_validate(const char *api, const aclsim_tensor_desc *dx, const aclsim_tensor_desc *dg,
                        const aclsim_tensor_desc *dy, const aclsim_tensor_desc *dr)
{
    const aclsim_tensor_desc *t[] = {dx, dg, dy};
    const char *nm[] = {"x", "gamma", "yOut"};
    for (int i = 0; i < 3; i++) {
        if (!op_norm_dtype(t[i]->dtype))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s dtype %s is not supported (supported: FLOAT16, FLOAT, "
                                    "BF16)",
                                    api, nm[i], aclsim_dtype_name(t[i]->dtype));
        if (t[i]->ndim > OP_MAX_DIMS)
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s has %d dims (at most %d)",
                                    api, nm[i], (int)t[i]->ndim, OP_MAX_DIMS);
    }
    int rc = op_norm_trailing(api, "gamma shape", dx, dg->dims, dg->ndim);
    if (rc)
        return rc;
    if (!op_same_shape(dx->dims, dx->ndim, dy->dims, dy->ndim)) {
        char b1[256], b2[256];
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: yOut shape %s must equal x shape %s",
                                api, aclsim_shape_str(dy->dims, dy->ndim, b1, sizeof b1),
                                aclsim_shape_str(dx->dims, dx->ndim, b2, sizeof b2));
    }
    return op_norm_stat_shape(api, "rstdOut", dx, dg->ndim, dr);
}

ACLSIM_API aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma,
                                                    double epsilon, const aclTensor *yOut,
                                                    const aclTensor *rstdOut,
                                                    uint64_t *workspaceSize,
                                                    aclOpExecutor **executor)
{
    const char *api = OP "GetWorkspaceSize";
    const void *ptrs[] = {x, gamma, yOut, rstdOut, workspaceSize, executor};
    const char *names[] = {"x", "gamma", "yOut", "rstdOut", "workspaceSize", "executor"};
    for (int i = 0; i < 6; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, names[i]);
    aclsim_tensor_desc dx, dg, dy, dr;
    int rc;
    if ((rc = aclsim_tensor_get(api, "x", x, &dx)) || (rc = aclsim_tensor_get(api, "gamma", gamma, &dg)) ||
        (rc = aclsim_tensor_get(api, "yOut", yOut, &dy)) ||
        (rc = aclsim_tensor_get(api, "rstdOut", rstdOut, &dr)) ||
        (rc = rms_validate(api, &dx, &dg, &dy, &dr)))
        return rc;
    rms_attrs attrs = {.g = dg.ndim, .eps = (float)epsilon};
    int work = aclsim_numel(&dy) > 0 || aclsim_numel(&dr) > 0;
    aclsim_executor *ex = aclsim_executor_create(OP, work ? rms_kernel : NULL, 0);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if ((rc = aclsim_executor_add_input(ex, "x", &dx)) ||
        (rc = aclsim_executor_add_input(ex, "gamma", &dg)) ||
        (rc = aclsim_executor_add_output(ex, "yOut", &dy)) ||
        (rc = aclsim_executor_add_output(ex, "rstdOut", &dr)) ||
        (rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnRmsNorm(void *workspace, uint64_t workspaceSize,
                                    aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
