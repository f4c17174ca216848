// Test fixture written for aclnn-stress: BatchNormBackward.
// Traps: non-const outputs gradInput/gradWeight/gradBias without "Out" in their names, a bool
// and a double attribute, an aclBoolArray outputMask; the const input gradOut ends in "Out" and
// is an input only because the header documents it [in].
#ifndef FIXTURE_BN_BACKWARD_H
#define FIXTURE_BN_BACKWARD_H
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
/**
 * @param [in] gradOut: incoming gradient (an input despite its name).
 * @param [in] input: forward input.
 * @param [in] outputMask: which of the three gradients to compute.
 * @param [out] gradInput: gradient w.r.t. input.
 */
ACLNN_API aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor *gradOut,
    const aclTensor *input, const aclTensor *weight, const aclTensor *runningMean,
    const aclTensor *runningVar, const aclTensor *saveMean, const aclTensor *saveInvstd,
    bool training, double eps, const aclBoolArray *outputMask, aclTensor *gradInput,
    aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBatchNormBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
