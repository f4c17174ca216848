/*
 * aclnnop/aclnn_mul.h - aclnnMul, aclnnInplaceMul, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-math; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_MUL_H_
#define ACLSIM_ACLNN_MUL_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnMul: out = self * other, with broadcasting and type promotion
 * over the same 12 dtypes as aclnnAdd (BOOL: logical and).
 * @domain aclnn_math
 * @param [in] self: first operand.
 * @param [in] other: second operand; broadcasts with self.
 * @param [out] out: result tensor with the broadcast shape.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                               aclTensor *out, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnMul: runs the executor built by aclnnMulGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream);

/**
 * @brief First phase of aclnnInplaceMul: selfRef = selfRef * other.
 * @domain aclnn_math
 * @param [in] selfRef: the tensor updated in place.
 * @param [in] other: second operand; broadcasts to selfRef's shape.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnInplaceMulGetWorkspaceSize(const aclTensor *selfRef,
                                                      const aclTensor *other,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnInplaceMul: runs the executor built by
 * aclnnInplaceMulGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_MUL_H_ */
