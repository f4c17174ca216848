/* Test fixture written for aclnn-stress: one operator per remaining parameter trap.
 *  - InplaceMul: a non-const selfRef (in-out);
 *  - Matmul: int8_t cubeMathType;
 *  - Cast: aclDataType dtype;
 *  - Resize: const char *mode, aclFloatArray scales, int64_t/uint64_t/float attributes;
 *  - Conv: by-value attributes declared const (const int64_t groups) and a phase two whose
 *    size is `const uint64_t`, as some shipped headers write them. */
#include "aclnn/aclnn_base.h"
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
ACLNN_API aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
    aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, aclDataType dtype,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
ACLNN_API aclnnStatus aclnnResizeGetWorkspaceSize(const aclTensor *self,
    const aclFloatArray *scales, const char *mode, int64_t alignCorners, uint64_t seedOffset,
    float cubicCoeff, const aclIntArray *outputSizeOptional, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnResize(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnConvGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
    const aclIntArray *stride, const int64_t groups, aclTensor *output, const int8_t cubeMathType,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnConv(void *workspace, const uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
