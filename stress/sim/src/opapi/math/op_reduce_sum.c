/*
 * op_reduce_sum.c - aclnnReduceSum(self, aclIntArray *dim, bool keepDims, aclDataType dtype,
 * out) (the real ops-math signature; header aclnn_reduce_sum.h): the sum of self over the
 * dims in `dim`, computed in and returned as `dtype`.
 *
 * self, dtype and out over the 12 math dtypes; out's dtype must be `dtype`.  dim values in
 * [-ndim, ndim), no repeats; an empty dim sums over every dim (as torch.sum(dim=[]) does).
 * keepDims keeps the reduced dims as 1, otherwise they are removed; out must have that shape.
 * Each element of self is first cast to `dtype` (as torch.sum(dtype=) does), then accumulated
 * in order: float32 for FLOAT/FLOAT16/BF16, double for DOUBLE, 64-bit wrapping integers for
 * the integral types and BOOL (stored as sum != 0), double pairs for complex; the sum is
 * rounded once to out.  Reducing an empty dim gives zeros; an empty out writes nothing.
 */
#include <stdlib.h>

#include "aclnn_reduce_sum.h"
#include "nb_scratch_pool.h"
#include "op_reduce_sum.h"

#define OP "aclnnReduceSum"

/* Sum of the elements under the reduced dims starting at base, into re/im or iv. */
static void rs_sum(const rs_attrs *a, const aclsim_tensor_desc *x, const uint8_t *base,
                   double *re, double *im, int64_t *iv)
{
    op_iter it;
    op_iter_over(&it, x, a->reduce, base);
    const int64_t n = op_numel_over(x, a->reduce);
    const int32_t dt = a->dtype;
    float f = 0.0f;
    double d = 0.0, di = 0.0;
    uint64_t u = 0;
    for (int64_t j = 0; j < n; j++) {
        const uint8_t *p = op_iter_ptr(&it, 0);
        if (op_is_complex(dt)) {
            double r, i;
            op_load_c(p, x->dtype, &r, &i);
            if (dt == ACL_COMPLEX64)
                r = (float)r, i = (float)i;
            d += r;
            di += i;
        } else if (dt == ACL_DOUBLE) {
            d += op_load_f64(p, x->dtype);
        } else if (op_is_floating(dt)) {
            f += op_round_f32(op_load_f32(p, x->dtype), dt);
        } else if (dt == ACL_BOOL) { /* x != 0, as a cast to BOOL */
            double r, i;
            op_load_c(p, x->dtype, &r, &i);
            u += r != 0.0 || i != 0.0;
        } else {
            int64_t v = op_is_floating(x->dtype) || op_is_complex(x->dtype)
                            ? op_f64_to_i64(op_load_f64(p, x->dtype))
                            : op_load_i64(p, x->dtype);
            u += (uint64_t)op_wrap(v, dt);
        }
        op_iter_next(&it);
    }
    *re = op_is_floating(dt) && dt != ACL_DOUBLE ? f : d;
    *im = di;
    *iv = (int64_t)u;
}

static int rs_kernel(aclsim_kernel_ctx *k)
{
    rs_attrs plan = *(const rs_attrs *)k->attrs;
    if (plan.plan_slot >= 0) /* thread-plan: the mask the launch copied (op_reduce_sum_plan.c) */
        for (int i = 0; i < OP_MAX_DIMS; i++)
            plan.reduce[i] = (int32_t)((k->launch_args[0] >> i) & 1);
    const rs_attrs *a = &plan;
    const aclsim_tensor_desc *x = &k->inputs[0], *o = &k->outputs[0];
    const int64_t oes = aclsim_dtype_size(o->dtype), total = aclsim_numel(o);
    aclsim_stage *st;
    uint8_t *dst = aclsim_stage_begin(o, &st);
    if (!dst)
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                  k->op);
    int keep[OP_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        keep[i] = !a->reduce[i];
    op_iter it;
    op_iter_over(&it, x, keep, NULL);
    /* the plan's kept dims bound the elements written: out's count under the call's own plan,
     * and a launch with a foreign plan (thread-plan) still reads only inside self */
    const int64_t kept = op_numel_over(x, keep), n_out = kept < total ? kept : total;
    for (int64_t j = 0; j < n_out; j++) {
        double re, im;
        int64_t iv;
        rs_sum(a, x, op_iter_ptr(&it, 0), &re, &im, &iv);
        if (op_is_floating(a->dtype) || op_is_complex(a->dtype))
            op_store_c(dst + j * oes, o->dtype, re, im);
        else
            op_store_i64(dst + j * oes, o->dtype, op_wrap(iv, a->dtype));
        op_iter_next(&it);
    }
    aclsim_stage_commit(st, o);
    return 0;
}

/* Reduced-dim mask from the dim array, and the expected out shape. */
static int rs_dims(const char *api, const aclsim_tensor_desc *x, const int64_t *dims, uint64_t n,
                   bool keepDims, rs_attrs *a, int64_t *oshape, int *ond)
{
    for (uint64_t i = 0; i < n; i++) {
        int d = op_wrap_dim(dims[i], x->ndim);
        if (d < 0 || (x->ndim && a->reduce[d]))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    d < 0 ? "%s: dim[%llu] = %lld is out of range for a %d-d self"
                                          : "%s: dim[%llu] = %lld repeats a dim (self has %d dims)",
                                    api, (unsigned long long)i, (long long)dims[i], (int)x->ndim);
        if (x->ndim)
            a->reduce[d] = 1;
    }
    *ond = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (n == 0)
            a->reduce[i] = 1;
        if (!a->reduce[i] || keepDims)
            oshape[(*ond)++] = a->reduce[i] ? 1 : x->dims[i];
    }
    return 0;
}

static int rs_validate(const char *api, const aclsim_tensor_desc *ds, const aclIntArray *dim,
                       bool keepDims, int32_t dtype, const aclsim_tensor_desc *dout, rs_attrs *a)
{
    const int32_t dts[] = {ds->dtype, dtype, dout->dtype};
    const char *nm[] = {"self", "dtype", "out"};
    for (int i = 0; i < 3; i++)
        if (!op_dtype_is_math(dts[i]))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s dtype %s is not supported (supported: FLOAT, FLOAT16, "
                                    "BF16, DOUBLE, INT32, INT64, INT16, INT8, UINT8, BOOL, "
                                    "COMPLEX64, COMPLEX128)",
                                    api, nm[i], aclsim_dtype_name(dts[i]));
    if (dout->dtype != dtype)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: out dtype %s must equal dtype %s",
                                api, aclsim_dtype_name(dout->dtype), aclsim_dtype_name(dtype));
    if (ds->ndim > OP_MAX_DIMS || dout->ndim > OP_MAX_DIMS)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: at most %d dims", api, OP_MAX_DIMS);
    int64_t *dims = NULL, oshape[OP_MAX_DIMS];
    uint64_t n = 0;
    int ond = 0, rc = aclsim_int_array_get(api, "dim", dim, &dims, &n);
    if (!rc)
        rc = rs_dims(api, ds, dims, n, keepDims, a, oshape, &ond);
    free(dims);
    if (!rc && !op_same_shape(oshape, ond, dout->dims, dout->ndim)) {
        char b1[256], b2[256];
        rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: out shape %s must be %s (keepDims %s)",
                              api, aclsim_shape_str(dout->dims, dout->ndim, b1, sizeof b1),
                              aclsim_shape_str(oshape, ond, b2, sizeof b2),
                              keepDims ? "true" : "false");
    }
    return rc;
}

ACLSIM_API aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self,
                                                      const aclIntArray *dim, bool keepDims,
                                                      aclDataType dtype, aclTensor *out,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor)
{
    const char *api = OP "GetWorkspaceSize";
    const void *ptrs[] = {self, dim, out, workspaceSize, executor};
    const char *names[] = {"self", "dim", "out", "workspaceSize", "executor"};
    for (int i = 0; i < 5; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, names[i]);
    aclsim_tensor_desc ds, dout;
    rs_attrs attrs;
    memset(&attrs, 0, sizeof attrs);
    attrs.dtype = dtype;
    attrs.plan_slot = -1;
    int rc;
    if ((rc = aclsim_tensor_get(api, "self", self, &ds)) ||
        (rc = aclsim_tensor_get(api, "out", out, &dout)) ||
        (rc = rs_validate(api, &ds, dim, keepDims, dtype, &dout, &attrs)))
        return rc;
    const int launch = aclsim_numel(&dout) != 0;
    if (aclsim_fault("thread-plan"))
        return rs_plan_publish(OP, rs_kernel, launch, &ds, &dout, &attrs, workspaceSize, executor);
    return op_publish_unary(OP, rs_kernel, launch, &ds, &dout, &attrs, sizeof attrs, workspaceSize,
                            executor);
}

ACLSIM_API aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
