/*
 * op_add.c - aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds (the real ops-math
 * signatures; header aclnn_add.h):
 *   out = self + alpha * other        (other a tensor, numpy-broadcast, or a scalar)
 *   selfRef += alpha * other          (the in-place forms: the broadcast shape must be selfRef's)
 * over FLOAT, FLOAT16, BF16, DOUBLE, INT32, INT64, INT16, INT8, UINT8, BOOL, COMPLEX64,
 * COMPLEX128.  Validation, promotion, numerics and the `add-race` fault: op_binary.c.
 */
#include "aclnn_add.h"
#include "op_binary.h"

static aclnnStatus run(const char *op, void *workspace, uint64_t workspaceSize,
                       aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(op, workspace, workspaceSize, executor, stream);
}

ACLSIM_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                const aclScalar *alpha, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor)
{
    op_bin_call c = {"aclnnAdd", "self", OP_BIN_ADD, 0, self, other, NULL, alpha, out};
    return op_binary_prepare(&c, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return run("aclnnAdd", workspace, workspaceSize, executor, stream);
}

ACLSIM_API aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                 const aclScalar *alpha, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor)
{
    op_bin_call c = {"aclnnAdds", "self", OP_BIN_ADD, 0, self, NULL, other, alpha, out};
    return op_binary_prepare(&c, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream)
{
    return run("aclnnAdds", workspace, workspaceSize, executor, stream);
}

ACLSIM_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef,
                                                       const aclTensor *other,
                                                       const aclScalar *alpha,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor)
{
    op_bin_call c = {"aclnnInplaceAdd", "selfRef", OP_BIN_ADD, 1, selfRef, other, NULL, alpha, selfRef};
    return op_binary_prepare(&c, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream)
{
    return run("aclnnInplaceAdd", workspace, workspaceSize, executor, stream);
}

ACLSIM_API aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef,
                                                        const aclScalar *other,
                                                        const aclScalar *alpha,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor)
{
    op_bin_call c = {"aclnnInplaceAdds", "selfRef", OP_BIN_ADD, 1, selfRef, NULL, other, alpha, selfRef};
    return op_binary_prepare(&c, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream)
{
    return run("aclnnInplaceAdds", workspace, workspaceSize, executor, stream);
}
