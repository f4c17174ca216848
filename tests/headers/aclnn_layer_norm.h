/* Test fixture written for aclnn-stress: two LayerNorm operators in one header.
 * Traps: Optional inputs and outputs (may be NULL), an aclIntArray attribute, an int32_t
 * implMode attribute, comments between the declarations. */
#pragma once
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"
#ifdef __cplusplus
extern "C" {
#endif
/**
 * @brief LayerNorm, phase one.
 * @param [in] input: the tensor to normalise.
 * @param [in] normalizedShape: the trailing dims normalised over.
 * @param [in] weightOptional: scale, may be NULL.
 * @param [in] biasOptional: shift, may be NULL.
 * @param [in] eps: added to the variance.
 * @param [out] out: the result.
 * @param [out] meanOutOptional: saved mean, may be NULL.
 * @param [out] rstdOutOptional: saved 1/std, may be NULL.
 */
ACLNN_API aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor *input,
    const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* The same with an implementation mode; no doc tags this time. */
ACLNN_API aclnnStatus aclnnLayerNormWithImplModeGetWorkspaceSize(const aclTensor *input,
    const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, int32_t implMode, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnLayerNormWithImplMode(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
