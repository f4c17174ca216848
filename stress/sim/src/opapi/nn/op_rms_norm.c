/*
 * op_rms_norm.c - aclnnRmsNorm(x, gamma, double epsilon, yOut, rstdOut) (the real ops-nn
 * signature; header aclnn_rms_norm.h, whose outputs are declared `const aclTensor *`):
 *   rstd = 1 / sqrt(mean(x^2 over gamma's trailing dims) + epsilon),  y = x * rstd * gamma.
 *
 * x, gamma and yOut: FLOAT16, FLOAT or BF16; gamma's shape is x's last gamma.ndim dims; yOut
 * has x's shape; rstdOut (floating, FLOAT on CANN) has x's leading dims followed by ones.
 * Each row is read through the view's strides and computed in float32: the sum of squares in
 * order, epsilon as a float, y = (x * rstd) * gamma rounded once to yOut's dtype.
 */
#include "aclnn_rms_norm.h"
#include "nb_scratch_pool.h"
#include "op_norm.h"

#define OP "aclnnRmsNorm"

typedef struct {
    int32_t g;
    float eps;
} rms_attrs;

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
