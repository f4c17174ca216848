/*
 * aclnnop/aclnn_softmax_backward.h - aclnnSoftmaxBackward, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-nn; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_SOFTMAX_BACKWARD_H_
#define ACLSIM_ACLNN_SOFTMAX_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnSoftmaxBackward, the gradient of aclnnSoftmax:
 * out = output * (gradOutput - sum(gradOutput * output)) along dim.
 * FLOAT, FLOAT16, BF16, DOUBLE; gradOutput, output and out share one shape.
 * @domain aclnn_nn
 * @param [in] gradOutput: the gradient of the loss with respect to softmax's output.
 * @param [in] output: softmax's forward output.
 * @param [in] dim: the dim softmax normalised, in [-ndim, ndim).
 * @param [out] out: the gradient with respect to softmax's input.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                           const aclTensor *output, int64_t dim,
                                                           aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnSoftmaxBackward: runs the executor built by
 * aclnnSoftmaxBackwardGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_SOFTMAX_BACKWARD_H_ */
