/*
 * rt_live.c - aclsimLiveObjects: what is alive now, for tests and leak checks: device
 * allocations and their bytes (rt_devmem.c) and each kind of runtime / nnopbase object
 * (rt_objects.c's counters).  It sits above both, so neither needs the other.
 */
#include "rt_private.h"

ACLSIM_API int64_t aclsimLiveObjects(int32_t kind)
{
    int64_t count, bytes;
    switch (kind) {
    case ACLSIM_LIVE_DEVICE_ALLOCATIONS:
        rt_devmem_stats(&count, &bytes);
        return count;
    case ACLSIM_LIVE_DEVICE_BYTES:
        rt_devmem_stats(&count, &bytes);
        return bytes;
    case ACLSIM_LIVE_TENSORS:
        return aclsim_obj_live(ACLSIM_KIND_TENSOR);
    case ACLSIM_LIVE_SCALARS:
        return aclsim_obj_live(ACLSIM_KIND_SCALAR);
    case ACLSIM_LIVE_EXECUTORS:
        return aclsim_obj_live(ACLSIM_KIND_EXECUTOR);
    case ACLSIM_LIVE_STREAMS:
        return aclsim_obj_live(ACLSIM_KIND_STREAM);
    case ACLSIM_LIVE_CONTEXTS:
        return aclsim_obj_live(ACLSIM_KIND_CONTEXT);
    case ACLSIM_LIVE_ARRAYS:
        return aclsim_obj_live(ACLSIM_KIND_INT_ARRAY) + aclsim_obj_live(ACLSIM_KIND_FLOAT_ARRAY) +
               aclsim_obj_live(ACLSIM_KIND_BOOL_ARRAY);
    case ACLSIM_LIVE_LISTS:
        return aclsim_obj_live(ACLSIM_KIND_TENSOR_LIST) + aclsim_obj_live(ACLSIM_KIND_SCALAR_LIST);
    case ACLSIM_LIVE_EVENTS:
        return aclsim_obj_live(ACLSIM_KIND_EVENT);
    default:
        return -1;
    }
}
