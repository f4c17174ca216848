/*
 * op_softmax_backward.c - aclnnSoftmaxBackward(gradOutput, output, int64_t dim, out) (the real
 * ops-nn signature; header aclnn_softmax_backward.h), the gradient of aclnnSoftmax:
 * out = output * (gradOutput - sum(gradOutput * output)) along dim.
 *
 * dtypes FLOAT, FLOAT16, BF16, DOUBLE; gradOutput, output and out share one shape; dim in
 * [-ndim, ndim) (a 0-d tensor takes -1 or 0).  Each slice along dim is read through the views'
 * strides and computed in float32 (double for DOUBLE): the dot product summed in order, then
 * each element rounded once to out's dtype and written straight into out's view (no staging).
 * Empty tensors succeed and write nothing.
 *
 * Fault `softmax-grad-tail` (ACLSIM_FAULTS): the dot product is reduced eight lanes at a time
 * and the lanes left over when the slice length is not a multiple of 8 are dropped, as a
 * vectorised loop without its scalar tail would: every slice's out is off by
 * output * (the dropped terms), deterministically.
 */
#include <math.h>
#include <stdlib.h>

#include "aclnn_softmax_backward.h"
#include "op_softmax.h"

#define OP "aclnnSoftmaxBackward"
#define LANES 8 /* the reduction width the softmax-grad-tail fault drops the tail of */

typedef struct {
    int32_t dim;
    int32_t drop_tail; /* softmax-grad-tail, read at phase 1 */
} softmax_bwd_attrs;

/* sum(g[i] * y[i]) over the n used terms (float32, or double when dbl). */
static double dot(const double *g, const double *y, int64_t n, int dbl)
{
    if (dbl) {
        double s = 0.0;
        for (int64_t i = 0; i < n; i++)
            s += g[i] * y[i];
        return s;
    }
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++)
        s += (float)g[i] * (float)y[i];
    return s;
}

static int softmax_bwd_kernel(aclsim_kernel_ctx *k)
{
    const softmax_bwd_attrs *a = k->attrs;
    const aclsim_tensor_desc *g = &k->inputs[0], *y = &k->inputs[1], *o = &k->outputs[0];
    const int nd = g->ndim, dim = a->dim, dbl = g->dtype == ACL_DOUBLE;
    const int64_t n = nd ? g->dims[dim] : 1;
    const int64_t gs = nd ? g->strides[dim] : 0, ys = nd ? y->strides[dim] : 0;
    const int64_t os = nd ? o->strides[dim] : 0;
    const int64_t ges = aclsim_dtype_size(g->dtype), yes = aclsim_dtype_size(y->dtype);
    const int64_t oes = aclsim_dtype_size(o->dtype);
    double *row = malloc((size_t)n * 2 * sizeof *row);
    if (!row)
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                  k->op);
    op_iter it;
    op_softmax_rows(&it, g, dim);
    op_iter_add_strided(&it, op_view_base(y), y->strides, yes);
    op_iter_add_strided(&it, op_view_base(o), o->strides, oes);
    const int64_t used = a->drop_tail ? n - n % LANES : n;
    const int64_t outer = aclsim_numel(g) / (n ? n : 1);
    for (int64_t r = 0; r < outer; r++) {
        const uint8_t *pg = op_iter_ptr(&it, 0), *py = op_iter_ptr(&it, 1);
        uint8_t *po = (uint8_t *)op_iter_ptr(&it, 2);
        for (int64_t i = 0; i < n; i++) {
            row[i] = op_load_f64(pg + i * gs * ges, g->dtype);
            row[n + i] = op_load_f64(py + i * ys * yes, y->dtype);
        }
        const double s = dot(row, row + n, used, dbl);
        for (int64_t i = 0; i < n; i++) {
            double v = dbl ? row[n + i] * (row[i] - s)
                           : (double)((float)row[n + i] * ((float)row[i] - (float)s));
            op_store_f64(po + i * os * oes, o->dtype, v);
        }
        op_iter_next(&it);
    }
    free(row);
    return 0;
}

static aclnnStatus check(const char *api, const aclsim_tensor_desc *all[3], int64_t dim, int *d)
{
    static const char *names[] = {"gradOutput", "output", "out"};
    char b1[256], b2[256];
    for (int i = 0; i < 3; i++) {
        if (!op_is_floating(all[i]->dtype))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s dtype %s is not supported (supported: FLOAT, FLOAT16, "
                                    "BF16, DOUBLE)",
                                    api, names[i], aclsim_dtype_name(all[i]->dtype));
        if (all[i]->ndim > OP_MAX_DIMS)
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s has %d dims (at most %d)",
                                    api, names[i], (int)all[i]->ndim, OP_MAX_DIMS);
        if (i && !op_same_shape(all[i]->dims, all[i]->ndim, all[0]->dims, all[0]->ndim))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s shape %s must equal gradOutput shape %s", api,
                                    names[i], aclsim_shape_str(all[i]->dims, all[i]->ndim, b1, sizeof b1),
                                    aclsim_shape_str(all[0]->dims, all[0]->ndim, b2, sizeof b2));
    }
    if (all[1]->dtype != all[0]->dtype)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: output dtype %s must equal gradOutput dtype %s", api,
                                aclsim_dtype_name(all[1]->dtype), aclsim_dtype_name(all[0]->dtype));
    return op_softmax_dim(api, "gradOutput", dim, all[0]->ndim, d);
}

ACLSIM_API aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                            const aclTensor *output, int64_t dim,
                                                            aclTensor *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor)
{
    const char *api = OP "GetWorkspaceSize";
    const void *ptrs[] = {gradOutput, output, out, workspaceSize, executor};
    const char *names[] = {"gradOutput", "output", "out", "workspaceSize", "executor"};
    for (int i = 0; i < 5; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, names[i]);
    aclsim_tensor_desc dg, dy, dout;
    int rc, d = 0;
    if ((rc = aclsim_tensor_get(api, "gradOutput", gradOutput, &dg)) ||
        (rc = aclsim_tensor_get(api, "output", output, &dy)) ||
        (rc = aclsim_tensor_get(api, "out", out, &dout)))
        return rc;
    const aclsim_tensor_desc *all[3] = {&dg, &dy, &dout};
    if ((rc = check(api, all, dim, &d)))
        return rc;
    softmax_bwd_attrs attrs = {.dim = d, .drop_tail = aclsim_fault("softmax-grad-tail")};
    int launch = aclsim_numel(&dout) != 0;
    aclsim_executor *ex = aclsim_executor_create(OP, launch ? softmax_bwd_kernel : NULL, 0);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if ((rc = aclsim_executor_add_input(ex, "gradOutput", &dg)) ||
        (rc = aclsim_executor_add_input(ex, "output", &dy)) ||
        (rc = aclsim_executor_add_output(ex, "out", &dout)) ||
        (rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
