/*
 * aclnnop/aclnn_rms_norm.h - aclnnRmsNorm, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-nn; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_RMS_NORM_H_
#define ACLSIM_ACLNN_RMS_NORM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnRmsNorm: rstd = 1 / sqrt(mean(x^2) + epsilon) over gamma's trailing
 * dims, yOut = x * rstd * gamma.  FLOAT16, FLOAT, BF16.
 * @domain aclnn_nn
 * @param [in] x: input.
 * @param [in] gamma: scale; its shape is x's last gamma.ndim dims.
 * @param [in] epsilon: added to the mean square (a C double).
 * @param [out] yOut: normalised output with x's shape (declared const, as in CANN).
 * @param [out] rstdOut: FLOAT reciprocal RMS per row: x's leading dims followed by ones
 * (declared const, as in CANN).
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma,
                                                   double epsilon, const aclTensor *yOut,
                                                   const aclTensor *rstdOut,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnRmsNorm: runs the executor built by aclnnRmsNormGetWorkspaceSize on
 * a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnRmsNorm(void *workspace, uint64_t workspaceSize,
                                   aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_RMS_NORM_H_ */
