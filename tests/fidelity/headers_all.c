/* Every header the simulator installs, included together: no clashes, usable from C and C++
 * (tests/test_fidelity.py compiles this file as C99, C11, C++11 and C++17 with -Werror). */
#include "acl/acl.h"
#include "acl/acl_base.h"
#include "acl/acl_base_rt.h"
#include "acl/acl_rt.h"
#include "acl/error_codes/rt_error_codes.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mhc_pre_sinkhorn.h"
#include "aclnnop/aclnn_mhc_pre_sinkhorn_backward.h"
#include "aclnnop/aclnn_util.h"
#include "aclsim.h"

int main(void)
{
    /* tagged where CANN tags them: usable as "enum aclrtMemcpyKind" in C */
    enum aclrtMemcpyKind kind = ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
    enum aclrtMemAttr attr = ACL_HBM_MEM;
    enum aclrtEventRecordedStatus ev = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    aclrtMemMallocPolicy policy = ACL_MEM_MALLOC_HUGE_FIRST;
    aclDataType dt = ACL_BF16;
    aclFormat fmt = ACL_FORMAT_ND;
    aclnnStatus st = ACLNN_ERR_INNER_NULLPTR;
    aclError err = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
    /* the numeric values the simulator's binding relies on */
    return (kind == 7 && attr == 1 && ev == 1 && policy == 0 && dt == 27 && fmt == 2 && st == 561103 && err == 507046 &&
            ACL_ERROR_INVALID_PARAM == 100000 && ACL_SUCCESS == 0)
               ? 0
               : 1;
}
