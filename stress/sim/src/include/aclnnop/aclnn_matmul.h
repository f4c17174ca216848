/*
 * aclnn_matmul.h - aclnnMatmul (ops-nn operator API) as the aclnn-stress CANN simulator implements it.
 * Written for the simulator from the documented signatures; installed as <root>/include/aclnnop/.
 * Compile with -I<root>/include -I<root>/include/aclnnop.
 */
#ifndef OP_API_INC_MATMUL_H_
#define OP_API_INC_MATMUL_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First stage of aclnnMatmul: out = self @ mat2 with torch.matmul's rules for 1-D and
 * batched (broadcast) operands; FLOAT, FLOAT16, BF16.
 * @param [in] self: left operand, 1 to 8 dims.
 * @param [in] mat2: right operand, 1 to 8 dims.
 * @param [out] out: the product.
 * @param [in] cubeMathType: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32.
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
                                                  aclTensor *out, int8_t cubeMathType,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnMatmul: runs the executor built by aclnnMatmulGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_MATMUL_H_ */
