// Test fixture written for aclnn-stress: backward operators whose headers carry no @param tags,
// as some shipped ones do. Traps: the const upstream gradients gradOut / gradOutput /
// grad_output end in "Out"/"Output" yet are inputs (rule 4, torch's convention); an untagged
// const saved tensor named saveOut is still an output by its name (rule 5); a non-const gradOut
// is an output (rule 1: const-ness wins), as is a const gradOutOptional tagged nowhere but
// named as the upstream gradient (an input that may be NULL).
#ifndef FIXTURE_UNTAGGED_BACKWARD_H
#define FIXTURE_UNTAGGED_BACKWARD_H
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
ACLNN_API aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor *gradOut,
    const aclTensor *input, const aclTensor *weight, const aclTensor *saveMean,
    const aclTensor *saveInvstd, bool training, double eps, const aclBoolArray *outputMask,
    aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBatchNormBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *self, const aclTensor *saveOut, aclTensor *gradInput,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGeluBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnTanhBackwardGetWorkspaceSize(const aclTensor *grad_output,
    const aclTensor *gradOutOptional, const aclTensor *output, aclTensor *gradOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnTanhBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
