/*
 * Test fixture written for aclnn-stress: the mHC pre-sinkhorn backward, documented the way the
 * transformer operator library documents it.
 * Traps: const outputs gradX..gradBias with no "Out" but tagged [out]; const *inputs* sumOut and
 * normOut whose names end in "Out" but which are tagged [in].
 */
#ifndef FIXTURE_MHC_BWD_H_
#define FIXTURE_MHC_BWD_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
/**
 * @brief Gradients of MhcPreSinkhorn.
 * @param [in] gradHin: incoming gradient of hin.
 * @param [in] gradHPost: incoming gradient of hPost.
 * @param [in] gradHRes: incoming gradient of hRes.
 * @param [in] x: forward input.
 * @param [in] phi: forward projection.
 * @param [in] alpha: forward scales.
 * @param [in] bias: forward bias.
 * @param [in] hPre: saved by the forward.
 * @param [in] hcBeforeNorm: saved by the forward.
 * @param [in] invRms: saved by the forward.
 * @param [in] sumOut: saved Sinkhorn sums (an input here).
 * @param [in] normOut: saved Sinkhorn norms (an input here).
 * @param [in] hcEps: epsilon.
 * @param [out] gradX: gradient w.r.t. x.
 * @param [out] gradPhi: gradient w.r.t. phi.
 * @param [out] gradAlpha: gradient w.r.t. alpha.
 * @param [out] gradBias: gradient w.r.t. bias.
 */
ACLNN_API aclnnStatus aclnnMhcPreSinkhornBackwardGetWorkspaceSize(
    const aclTensor *gradHin, const aclTensor *gradHPost, const aclTensor *gradHRes,
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    const aclTensor *hPre, const aclTensor *hcBeforeNorm, const aclTensor *invRms,
    const aclTensor *sumOut, const aclTensor *normOut, double hcEps, const aclTensor *gradX,
    const aclTensor *gradPhi, const aclTensor *gradAlpha, const aclTensor *gradBias,
    uint64_t *workspaceSize, aclOpExecutor **executor);
/**
 * @brief Phase two.
 * @param [in] workspace: device memory.
 */
ACLNN_API aclnnStatus aclnnMhcPreSinkhornBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
