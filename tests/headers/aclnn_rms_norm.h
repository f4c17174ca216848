/* Test fixture written for aclnn-stress: RmsNorm in the style of a generated header
 * (visibility attribute instead of ACLNN_API, acl_meta.h include, no doc tags).
 * Trap: both outputs are declared `const aclTensor *` and carry no @param tags. */
#ifndef FIXTURE_ACLNN_RMS_NORM_H_
#define FIXTURE_ACLNN_RMS_NORM_H_
#include "aclnn/acl_meta.h"
#ifdef __cplusplus
extern "C" {
#endif
__attribute__((visibility("default")))
aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma,
    double epsilon, const aclTensor *yOut, const aclTensor *rstdOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default")))
aclnnStatus aclnnRmsNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    const aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
