/*
 * aclnnop/aclnn_reduce_sum.h - aclnnReduceSum, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-math; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_REDUCE_SUM_H_
#define ACLSIM_ACLNN_REDUCE_SUM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnReduceSum: the sum of self over the dims listed in dim.
 * @domain aclnn_math
 * @param [in] self: input (any of the 12 math dtypes).
 * @param [in] dim: the dims to sum over (each in [-ndim, ndim), no repeats; empty: all).
 * @param [in] keepDims: keep the summed dims as size 1.
 * @param [in] dtype: the dtype the sum is computed in and returned as (out's dtype).
 * @param [out] out: the sums.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self,
                                                     const aclIntArray *dim, bool keepDims,
                                                     aclDataType dtype, aclTensor *out,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnReduceSum: runs the executor built by aclnnReduceSumGetWorkspaceSize
 * on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_REDUCE_SUM_H_ */
