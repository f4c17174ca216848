/*
 * aclnn_mhc_pre_sinkhorn_backward.h - aclnnMhcPreSinkhornBackward (gradients of
 * aclnnMhcPreSinkhorn w.r.t. x, phi, alpha, bias) as the aclnn-stress CANN simulator implements
 * it.  Installed as <root>/include/aclnnop/; compile with -I<root>/include (for aclsim.h).
 *
 * Same declaration as ops-transformer's mhc/mhc_pre_sinkhorn_backward/op_host/op_api/ (hcEps is
 * a C double, cast to float internally).
 *
 * Inputs: gradHin (B, S, C) BF16/FLOAT16; gradHPost (B, S, N); gradHRes (B, S, N, N) or
 * (B, S, N*N); x (B, S, N, C) BF16/FLOAT16 with N == 4, 0 < C < 100000, C % 128 == 0; phi, alpha,
 * bias as in the forward; hPre, hcBeforeNorm, invRms, sumOut (40, B, S, N), normOut
 * (40, B, S, N, N) as saved by the forward with needBackward (20 Sinkhorn iterations).
 * Outputs: gradX (B, S, N, C) in gradHin's dtype; gradPhi (N*N+2N, N*C), gradAlpha (3),
 * gradBias (N*N+2N) FLOAT.  Non-deterministic unless ACL_OPT_DETERMINISTIC is set.
 */
#ifndef ACLNN_MHC_PRE_SINKHORN_BACKWARD_H_
#define ACLNN_MHC_PRE_SINKHORN_BACKWARD_H_

#include "aclsim.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLSIM_API aclnnStatus aclnnMhcPreSinkhornBackwardGetWorkspaceSize(
    const aclTensor *gradHin, const aclTensor *gradHPost, const aclTensor *gradHRes,
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    const aclTensor *hPre, const aclTensor *hcBeforeNorm, const aclTensor *invRms,
    const aclTensor *sumOut, const aclTensor *normOut, double hcEps, const aclTensor *gradX,
    const aclTensor *gradPhi, const aclTensor *gradAlpha, const aclTensor *gradBias,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLSIM_API aclnnStatus aclnnMhcPreSinkhornBackward(void *workspace, uint64_t workspaceSize,
                                                   aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLNN_MHC_PRE_SINKHORN_BACKWARD_H_ */
