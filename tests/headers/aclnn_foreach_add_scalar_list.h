/* Test fixture written for aclnn-stress: a foreach operator over tensor lists.
 * Trap: the output list is declared `const aclTensorList *out`, untagged. */
#ifndef FIXTURE_FOREACH_H_
#define FIXTURE_FOREACH_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
ACLNN_API aclnnStatus aclnnForeachAddScalarListGetWorkspaceSize(const aclTensorList *x,
    const aclScalarList *scalars, const aclTensorList *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachAddScalarList(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
