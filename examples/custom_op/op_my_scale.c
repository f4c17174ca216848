/*
 * op_my_scale.c - a CPU model of a custom operator, aclnnMyScale (out = self * scale), written
 * with the simulator's kernel API (aclsim.h) and built into a custom operator package's
 * libcust_opapi.so by build.py.  The framework stresses it like a built-in operator.
 *
 * Phase 1 (GetWorkspaceSize) reads the handles into descriptors, validates, and builds an
 * executor that copies the descriptors and the attributes; phase 2 (aclnnMyScale) hands the
 * executor to the simulator, which checks the device memory, queues the kernel on the stream and
 * runs it on the stream's worker thread.
 */
#include "aclnn_my_scale.h"
#include "aclsim.h"

#define OP "aclnnMyScale"
#define API OP "GetWorkspaceSize"

typedef struct {
    double scale;
} my_scale_attrs;

/* Runs on the stream worker: one element at a time through the accessors. */
static int my_scale_kernel(aclsim_kernel_ctx *k)
{
    const my_scale_attrs *a = k->attrs;
    const aclsim_tensor_desc *x = &k->inputs[0], *y = &k->outputs[0];
    int64_t n = aclsim_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (aclsim_tensor_read(x, i, &v) != 0 || aclsim_tensor_write(y, i, v * a->scale) != 0)
            return aclsim_kernel_fail(k, ACL_ERROR_RT_AICORE_EXCEPTION,
                                      "kernel %s: element %lld is not accessible", k->op,
                                      (long long)i);
    }
    return 0;
}

static int same_shape(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

aclnnStatus aclnnMyScaleGetWorkspaceSize(const aclTensor *self, double scale, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclsim_tensor_desc dx, dy;
    int rc;
    if (!workspaceSize || !executor)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", API,
                                workspaceSize ? "executor" : "workspaceSize");
    if ((rc = aclsim_tensor_get(API, "self", self, &dx)) ||
        (rc = aclsim_tensor_get(API, "out", out, &dy)))
        return rc;
    if (dx.dtype != ACL_FLOAT && dx.dtype != ACL_FLOAT16 && dx.dtype != ACL_BF16)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: self: dtype must be FLOAT, "
                                "FLOAT16 or BF16, got %d", API, (int)dx.dtype);
    if (dy.dtype != dx.dtype || !same_shape(&dx, &dy))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: out must have self's shape and "
                                "dtype", API);
    my_scale_attrs attrs = {scale};
    /* no kernel for an empty tensor: the run then only checks and succeeds */
    aclsim_executor *ex = aclsim_executor_create(OP, aclsim_numel(&dx) ? my_scale_kernel : NULL, 0);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if ((rc = aclsim_executor_add_input(ex, "self", &dx)) ||
        (rc = aclsim_executor_add_output(ex, "out", &dy)) ||
        (rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

aclnnStatus aclnnMyScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                         aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
