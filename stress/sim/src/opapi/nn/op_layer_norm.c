/*
 * op_layer_norm.c - aclnnLayerNorm(input, normalizedShape, weightOptional, biasOptional, double
 * eps, out, meanOutOptional, rstdOutOptional) (the real ops-nn signature; aclnn_layer_norm.h):
 *   mean = E[x], rstd = 1 / sqrt(Var[x] + eps) over the trailing normalizedShape dims,
 *   out = (x - mean) * rstd * weight + bias.
 *
 * input, weight, bias and out: FLOAT, FLOAT16 or BF16; normalizedShape (1 to ndim values) must
 * equal input's trailing dims; weight and bias, when given, have that shape; out has input's
 * shape; meanOut / rstdOut, when given, have input's leading dims followed by ones.  Each row
 * is read through the view's strides and computed in float32: the mean (sum in order / R),
 * the biased variance of (x - mean) (a second pass), eps as a float; out rounded once.  The
 * two running sums of each row are kept in the workspace (two floats per row of the leading
 * dims), zeroed by the kernel before it accumulates; the "dirty-accumulator" fault skips that.
 */
#include <string.h>

#include "aclnn_layer_norm.h"
#include "nb_scratch_pool.h"
#include "op_norm.h"

#define OP "aclnnLayerNorm"

typedef struct {
    int32_t g;
    int32_t has_w, has_b, has_mean, has_rstd;
    float eps;
} ln_attrs;

/* Row statistics and the normalised row, in place.  The two running sums (of the row, then of
 * its squared deviations) accumulate in acc, the row's slot of the workspace, which the kernel
 * zeroes first (ln_kernel). */
static void ln_row(float *row, int64_t R, float eps, const float *w, const float *b, float *acc,
                   float *mean, float *rstd)
{
    for (int64_t j = 0; j < R; j++)
        acc[0] += row[j];
    float m = acc[0] / (float)R;
    for (int64_t j = 0; j < R; j++)
        acc[1] += (row[j] - m) * (row[j] - m);
    float rs = 1.0f / sqrtf(acc[1] / (float)R + eps);
    for (int64_t j = 0; j < R; j++) {
        float y = (row[j] - m) * rs;
        if (w)
            y = y * w[j];
        if (b)
            y = y + b[j];
        row[j] = y;
    }
    *mean = m;
    *rstd = rs;
}

static int ln_kernel(aclsim_kernel_ctx *k)
{
    const ln_attrs *a = k->attrs;
    const aclsim_tensor_desc *x = &k->inputs[0], *o = &k->outputs[0];
    const aclsim_tensor_desc *wd = a->has_w ? &k->inputs[1] : NULL;
    const aclsim_tensor_desc *bd = a->has_b ? &k->inputs[1 + a->has_w] : NULL;
    const aclsim_tensor_desc *md = a->has_mean ? &k->outputs[1] : NULL;
    const aclsim_tensor_desc *rd = a->has_rstd ? &k->outputs[1 + a->has_mean] : NULL;
    int lead[OP_MAX_DIMS], trail[OP_MAX_DIMS], all[OP_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    op_norm_masks(x->ndim, a->g, lead, trail);
    const int64_t R = op_numel_over(x, trail), A = op_numel_over(x, lead);
    const int64_t oes = aclsim_dtype_size(o->dtype);
    float *buf = malloc((size_t)(3 * R + 1) * sizeof *buf);
    aclsim_stage *st = NULL;
    uint8_t *dst = aclsim_numel(o) ? aclsim_stage_begin(o, &st) : NULL;
    if (!buf || (aclsim_numel(o) && !dst)) {
        free(buf);
        aclsim_stage_abandon(st);
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                  k->op);
    }
    float *w = buf, *b = buf + R, *row = buf + 2 * R;
    /* Two floats of workspace per row: its running sums, zeroed here.  Under the
     * "dirty-accumulator" fault the zeroing is skipped, so each row's statistics start from
     * whatever the workspace held: invisible while that is zero (or the same bytes every call),
     * wrong values that change with the caller's prior contents otherwise. */
    float *acc = k->workspace;
    if (!aclsim_fault("dirty-accumulator"))
        memset(acc, 0, (size_t)(2 * A) * sizeof *acc);
    if (wd)
        op_gather_f32(wd, all, NULL, w);
    if (bd)
        op_gather_f32(bd, all, NULL, b);
    op_iter rows, mi, ri;
    op_iter_over(&rows, x, lead, NULL);
    if (md)
        op_iter_over(&mi, md, all, NULL);
    if (rd)
        op_iter_over(&ri, rd, all, NULL);
    for (int64_t r = 0; r < A; r++) {
        float mean, rstd;
        op_gather_f32(x, trail, op_iter_ptr(&rows, 0), row);
        ln_row(row, R, a->eps, wd ? w : NULL, bd ? b : NULL, acc + 2 * r, &mean, &rstd);
        for (int64_t j = 0; j < R; j++)
            op_store_c(dst + (r * R + j) * oes, o->dtype, row[j], 0.0);
        if (md) {
            op_store_c((uint8_t *)op_iter_ptr(&mi, 0), md->dtype, mean, 0.0);
            ACLSIM_SAN_STORE(op_iter_ptr(&mi, 0), aclsim_dtype_size(md->dtype));
            op_iter_next(&mi);
        }
        if (rd) {
            op_store_c((uint8_t *)op_iter_ptr(&ri, 0), rd->dtype, rstd, 0.0);
            ACLSIM_SAN_STORE(op_iter_ptr(&ri, 0), aclsim_dtype_size(rd->dtype));
            op_iter_next(&ri);
        }
        op_iter_next(&rows);
    }
    free(buf);
    if (st)
        aclsim_stage_commit(st, o);
    return 0;
}

static int ln_check(const char *api, const char *name, const aclsim_tensor_desc *d)
{
    if (!op_norm_dtype(d->dtype))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s dtype %s is not supported (supported: FLOAT, FLOAT16, BF16)",
                                api, name, aclsim_dtype_name(d->dtype));
    if (d->ndim > OP_MAX_DIMS)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s has %d dims (at most %d)", api,
                                name, (int)d->ndim, OP_MAX_DIMS);
    return 0;
}

/* Reads and checks everything; fills the descriptors and attrs. */
static int ln_read(const char *api, const aclTensor *input, const aclIntArray *normalizedShape,
                   const aclTensor *w, const aclTensor *b, aclTensor *out, aclTensor *mean,
                   aclTensor *rstd, aclsim_tensor_desc d[6], ln_attrs *a)
{
    int64_t *ns = NULL;
    uint64_t nn = 0;
    int rc;
    if ((rc = aclsim_tensor_get(api, "input", input, &d[0])) || (rc = ln_check(api, "input", &d[0])) ||
        (rc = aclsim_int_array_get(api, "normalizedShape", normalizedShape, &ns, &nn)))
        return rc;
    rc = op_norm_trailing(api, "normalizedShape", &d[0], ns, (int)nn);
    free(ns);
    if (rc)
        return rc;
    a->g = (int32_t)nn;
    const aclTensor *opt[] = {w, b};
    const char *onm[] = {"weightOptional", "biasOptional"};
    for (int i = 0; i < 2; i++) {
        if (!opt[i])
            continue;
        if ((rc = aclsim_tensor_get(api, onm[i], opt[i], &d[1 + i])) ||
            (rc = ln_check(api, onm[i], &d[1 + i])))
            return rc;
        const aclsim_tensor_desc *t = &d[1 + i];
        if (!op_same_shape(t->dims, t->ndim, d[0].dims + d[0].ndim - nn, (int)nn)) {
            char b1[256];
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s shape %s must equal normalizedShape", api, onm[i],
                                    aclsim_shape_str(t->dims, t->ndim, b1, sizeof b1));
        }
    }
    if ((rc = aclsim_tensor_get(api, "out", out, &d[3])) || (rc = ln_check(api, "out", &d[3])))
        return rc;
    if (!op_same_shape(d[0].dims, d[0].ndim, d[3].dims, d[3].ndim))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: out shape must equal input shape", api);
    aclTensor *stat[] = {mean, rstd};
    const char *snm[] = {"meanOutOptional", "rstdOutOptional"};
    for (int i = 0; i < 2; i++)
        if (stat[i] && ((rc = aclsim_tensor_get(api, snm[i], stat[i], &d[4 + i])) ||
                        (rc = op_norm_stat_shape(api, snm[i], &d[0], a->g, &d[4 + i]))))
            return rc;
    a->has_w = w != NULL;
    a->has_b = b != NULL;
    a->has_mean = mean != NULL;
    a->has_rstd = rstd != NULL;
    return 0;
}

ACLSIM_API aclnnStatus aclnnLayerNormGetWorkspaceSize(
    const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = OP "GetWorkspaceSize";
    const void *ptrs[] = {input, normalizedShape, out, workspaceSize, executor};
    const char *names[] = {"input", "normalizedShape", "out", "workspaceSize", "executor"};
    for (int i = 0; i < 5; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, names[i]);
    aclsim_tensor_desc d[6];
    ln_attrs attrs = {.eps = (float)eps};
    int rc = ln_read(api, input, normalizedShape, weightOptional, biasOptional, out,
                     meanOutOptional, rstdOutOptional, d, &attrs);
    if (rc)
        return rc;
    int work = aclsim_numel(&d[3]) > 0 || (attrs.has_mean && aclsim_numel(&d[4]) > 0) ||
               (attrs.has_rstd && aclsim_numel(&d[5]) > 0);
    int64_t rows = 1; /* the leading dims: two floats of workspace per row (ln_kernel) */
    for (int i = 0; i < d[0].ndim - attrs.g; i++)
        rows *= d[0].dims[i];
    uint64_t ws = work ? (uint64_t)(2 * rows) * sizeof(float) : 0;
    aclsim_executor *ex = aclsim_executor_create(OP, work ? ln_kernel : NULL, ws);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if ((rc = aclsim_executor_add_input(ex, "input", &d[0])) ||
        (attrs.has_w && (rc = aclsim_executor_add_input(ex, "weightOptional", &d[1]))) ||
        (attrs.has_b && (rc = aclsim_executor_add_input(ex, "biasOptional", &d[2]))) ||
        (rc = aclsim_executor_add_output(ex, "out", &d[3])) ||
        (attrs.has_mean && (rc = aclsim_executor_add_output(ex, "meanOutOptional", &d[4]))) ||
        (attrs.has_rstd && (rc = aclsim_executor_add_output(ex, "rstdOutOptional", &d[5]))) ||
        (rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
