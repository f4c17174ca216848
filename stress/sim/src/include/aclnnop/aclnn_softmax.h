/*
 * aclnn_softmax.h - aclnnSoftmax (ops-nn operator API) as the aclnn-stress CANN simulator implements it.
 * Written for the simulator from the documented signatures; installed as <root>/include/aclnnop/.
 * Compile with -I<root>/include -I<root>/include/aclnnop.
 */
#ifndef OP_API_INC_SOFTMAX_H_
#define OP_API_INC_SOFTMAX_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First stage of aclnnSoftmax: out = exp(self) / sum(exp(self)) along dim.
 * FLOAT, FLOAT16, BF16, DOUBLE.
 * @param [in] self: input.
 * @param [in] dim: the dim to normalise, in [-ndim, ndim).
 * @param [out] out: result with self's shape.
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                   aclTensor *out, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnSoftmax: runs the executor built by aclnnSoftmaxGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_SOFTMAX_H_ */
