/*
 * aclnnop/aclnn_layer_norm.h - aclnnLayerNorm, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-nn; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_LAYER_NORM_H_
#define ACLSIM_ACLNN_LAYER_NORM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnLayerNorm: out = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias
 * over the trailing normalizedShape dims.  FLOAT, FLOAT16, BF16.
 * @domain aclnn_nn
 * @param [in] input: input.
 * @param [in] normalizedShape: the trailing dims normalised over.
 * @param [in] weightOptional: scale with normalizedShape's shape, or NULL.
 * @param [in] biasOptional: shift with normalizedShape's shape, or NULL.
 * @param [in] eps: added to the variance (a C double).
 * @param [out] out: result with input's shape.
 * @param [out] meanOutOptional: the per-row mean (input's leading dims then ones), or NULL.
 * @param [out] rstdOutOptional: the per-row 1 / sqrt(Var + eps), or NULL.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor *input,
                                                     const aclIntArray *normalizedShape,
                                                     const aclTensor *weightOptional,
                                                     const aclTensor *biasOptional, double eps,
                                                     aclTensor *out, aclTensor *meanOutOptional,
                                                     aclTensor *rstdOutOptional,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnLayerNorm: runs the executor built by aclnnLayerNormGetWorkspaceSize
 * on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_LAYER_NORM_H_ */
