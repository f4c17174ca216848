/*
 * aclnn_reduce_sum.h - aclnnReduceSum (ops-math operator API) as the aclnn-stress CANN simulator implements it.
 * Written for the simulator from the documented signatures; installed as <root>/include/aclnnop/.
 * Compile with -I<root>/include -I<root>/include/aclnnop.
 */
#ifndef OP_API_INC_REDUCE_SUM_H_
#define OP_API_INC_REDUCE_SUM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First stage of aclnnReduceSum: the sum of self over the dims listed in dim.
 * @param [in] self: input (any of the 12 math dtypes).
 * @param [in] dim: the dims to sum over (each in [-ndim, ndim), no repeats; empty: all).
 * @param [in] keepDims: keep the summed dims as size 1.
 * @param [in] dtype: the dtype the sum is computed in and returned as (out's dtype).
 * @param [out] out: the sums.
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self,
                                                     const aclIntArray *dim, bool keepDims,
                                                     aclDataType dtype, aclTensor *out,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnReduceSum: runs the executor built by aclnnReduceSumGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_REDUCE_SUM_H_ */
