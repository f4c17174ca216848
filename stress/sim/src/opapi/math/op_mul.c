/*
 * op_mul.c - aclnnMul and aclnnInplaceMul (the real ops-math signatures; header aclnn_mul.h):
 *   out = self * other       selfRef *= other
 * with numpy broadcasting over the 12 math dtypes (BOOL: logical and).  Validation,
 * promotion and numerics: op_binary.c.
 */
#include "aclnn_mul.h"
#include "op_binary.h"

ACLSIM_API aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                aclTensor *out, uint64_t *workspaceSize,
                                                aclOpExecutor **executor)
{
    op_bin_call c = {"aclnnMul", "self", OP_BIN_MUL, 0, self, other, NULL, NULL, out};
    return op_binary_prepare(&c, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return aclsim_executor_run("aclnnMul", workspace, workspaceSize, executor, stream);
}

ACLSIM_API aclnnStatus aclnnInplaceMulGetWorkspaceSize(const aclTensor *selfRef,
                                                       const aclTensor *other,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor)
{
    op_bin_call c = {"aclnnInplaceMul", "selfRef", OP_BIN_MUL, 1, selfRef, other, NULL, NULL, selfRef};
    return op_binary_prepare(&c, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run("aclnnInplaceMul", workspace, workspaceSize, executor, stream);
}
