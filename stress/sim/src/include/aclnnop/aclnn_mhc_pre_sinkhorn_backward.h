/*
 * aclnn_mhc_pre_sinkhorn_backward.h - aclnnMhcPreSinkhornBackward (gradients of
 * aclnnMhcPreSinkhorn w.r.t. x, phi, alpha, bias) as the aclnn-stress CANN simulator implements
 * it.  Installed as <root>/include/aclnnop/; compile with -I<root>/include.
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

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnMhcPreSinkhornBackward: check, size the workspace, build the
 * executor.  As in CANN, the outputs are declared const and the forward's saved tensors sumOut
 * and normOut keep their "Out" names although they are inputs here.
 * @domain aclnn_transformer
 * @param [in] gradHin: device tensor (B, S, C), BF16 or FLOAT16.
 * @param [in] gradHPost: device tensor (B, S, N), FLOAT.
 * @param [in] gradHRes: device tensor (B, S, N, N) or (B, S, N*N), FLOAT.
 * @param [in] x: the forward's input, (B, S, N, C).
 * @param [in] phi: the forward's phi, (N*N+2N, N*C), FLOAT.
 * @param [in] alpha: the forward's alpha, (3), FLOAT.
 * @param [in] bias: the forward's bias, (N*N+2N), FLOAT.
 * @param [in] hPre: saved by the forward, (B, S, N), FLOAT.
 * @param [in] hcBeforeNorm: saved by the forward, (B, S, N*N+2N), FLOAT.
 * @param [in] invRms: saved by the forward, (B, S, 1), FLOAT.
 * @param [in] sumOut: saved by the forward, (2*numIters, B, S, N), FLOAT.
 * @param [in] normOut: saved by the forward, (2*numIters, B, S, N, N), FLOAT.
 * @param [in] hcEps: the forward's hcEps.
 * @param [out] gradX: device tensor (B, S, N, C) in gradHin's dtype.
 * @param [out] gradPhi: device tensor (N*N+2N, N*C), FLOAT.
 * @param [out] gradAlpha: device tensor (3), FLOAT.
 * @param [out] gradBias: device tensor (N*N+2N), FLOAT.
 * @param [out] workspaceSize: the device workspace the second phase needs, in bytes.
 * @param [out] executor: the executor to pass to aclnnMhcPreSinkhornBackward.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnMhcPreSinkhornBackwardGetWorkspaceSize(
    const aclTensor *gradHin, const aclTensor *gradHPost, const aclTensor *gradHRes,
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    const aclTensor *hPre, const aclTensor *hcBeforeNorm, const aclTensor *invRms,
    const aclTensor *sumOut, const aclTensor *normOut, double hcEps, const aclTensor *gradX,
    const aclTensor *gradPhi, const aclTensor *gradAlpha, const aclTensor *gradBias,
    uint64_t *workspaceSize, aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnMhcPreSinkhornBackward: queue the computation on a stream.
 * @param [in] workspace: device workspace of at least workspaceSize bytes.
 * @param [in] workspaceSize: the size the first phase returned.
 * @param [in] executor: the executor the first phase returned.
 * @param [in] stream: the stream to run on.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnMhcPreSinkhornBackward(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLNN_MHC_PRE_SINKHORN_BACKWARD_H_ */
