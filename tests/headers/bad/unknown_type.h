/* Test fixture: a parameter type the framework cannot pass (an int pointer). */
#include "aclnn/aclnn_base.h"
ACLNN_API aclnnStatus aclnnOddGetWorkspaceSize(const aclTensor *self,
    int *counts,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnOdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
