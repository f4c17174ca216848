/*
 * rt_hostinfo.c - aclrtGetMemInfo, aclDataTypeSize, aclFloatToFloat16 / aclFloat16ToFloat.
 *
 * Memory: the simulator's device memory is host memory; the HBM kinds report the size
 * ACLSIM_DEVICE_MEMORY sets (rt_memlimit.c), else a nominal 64 GiB (Ascend 910B3), minus the
 * bytes live on all devices, and
 * the DDR kinds report the host's physical and available memory.  The fp16 helpers follow the
 * current acl_base_rt.h (hicann/runtime): saturating conversions, no NaN/Inf on either side.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "aclsim_dtype.h"
#include "rt_private.h"

static int is_hbm(int attr)
{
    return attr == ACL_HBM_MEM || attr == ACL_HBM_MEM_HUGE || attr == ACL_HBM_MEM_NORMAL ||
           attr == ACL_HBM_MEM_P2P_HUGE || attr == ACL_HBM_MEM_P2P_NORMAL;
}

ACLSIM_API aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
    const char *api = "aclrtGetMemInfo";
    if (!free || !total)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", api,
                                free ? "total" : "free");
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_HBM_MEM_P2P_NORMAL)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: attr %d is not an aclrtMemAttr (0..9)",
                                api, (int)attr);
    if (!aclsim_current_context())
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "%s: no current context in this thread (call aclrtSetDevice "
                                "first)", api);
    if (is_hbm((int)attr)) {
        int64_t count, bytes;
        rt_devmem_stats(&count, &bytes);
        uint64_t used = bytes > 0 ? (uint64_t)bytes : 0;
        uint64_t hbm = rt_devmem_total();
        *total = (size_t)hbm;
        *free = (size_t)(used < hbm ? hbm - used : 0);
        return ACL_SUCCESS;
    }
    long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES);
    long avail = sysconf(_SC_AVPHYS_PAGES);
    *total = page > 0 && phys > 0 ? (size_t)page * (size_t)phys : 0;
    *free = page > 0 && avail > 0 ? (size_t)page * (size_t)avail : 0;
    return ACL_SUCCESS;
}

/* Bytes per element; 0 for ACL_STRING, ACL_DT_UNDEFINED, unknown values and the sub-byte types
 * (INT4, UINT1, FLOAT4_*, FLOAT6_* have no whole-byte size). */
ACLSIM_API size_t aclDataTypeSize(aclDataType dataType)
{
    return (size_t)aclsim_dtype_size((int32_t)dataType);
}

ACLSIM_API aclFloat16 aclFloatToFloat16(float value)
{
    if (isnan(value) || value >= 65504.0f)
        return 0x7BFF; /* +65504 */
    if (value <= -65504.0f)
        return 0xFBFF; /* -65504 */
    uint16_t h = aclsim_f32_to_f16(value);
    if ((h & 0x7FFF) == 0x7C00) /* rounded up to infinity: saturate */
        return (uint16_t)((h & 0x8000) | 0x7BFF);
    return h;
}

ACLSIM_API float aclFloat16ToFloat(aclFloat16 value)
{
    if ((value & 0x7C00) == 0x7C00) {
        if (value & 0x03FF)
            return 98304.0f; /* NaN */
        return (value & 0x8000) ? -65536.0f : 65536.0f;
    }
    return aclsim_f16_to_f32(value);
}
