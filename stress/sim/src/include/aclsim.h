/*
 * aclsim.h - public C interface of the aclnn-stress CANN simulator.
 *
 * Declares every function the three simulator libraries export, with the CANN signatures
 * (types from acl_base_rt.h / acl_rt.h / acl_meta.h / aclnn_add.h), plus the simulator's own
 * `aclsim*` extras.  It is installed as <root>/include/aclsim.h so that C programs can be built
 * against the simulator; programs written for CANN should keep using CANN's own headers.
 *
 * Library placement (as in CANN):
 *   libascendcl.so  acl*, aclrt*, aclsys*, aclGetRecentErrMsg, aclsim* extras
 *   libnnopbase.so  aclCreate..., aclDestroy... (tensors, scalars, arrays), executors, aclnnInit
 *   libopapi.so     aclnn<Op>GetWorkspaceSize / aclnn<Op>
 */
#ifndef ACLSIM_H
#define ACLSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLSIM_API
#define ACLSIM_API __attribute__((visibility("default")))
#endif

/* ---- scalar and handle types ---------------------------------------------------------- */
typedef int aclError;
typedef int32_t aclnnStatus;
typedef uint16_t aclFloat16;
typedef void *aclrtStream;
typedef void *aclrtContext;

typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclOpExecutor aclOpExecutor;

/* ---- status codes (the subset the simulator returns) ------------------------------------ */
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_REPEAT_FINALIZE 100037
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_INTERNAL_ERROR 507000
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046

#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_RUNTIME_ERROR 361001
#define ACLNN_ERR_INNER 561000
#define ACLNN_ERR_INNER_CREATE_EXECUTOR 561101

#define ACL_PKG_VERSION_MAX_SIZE 128

/* ---- enums ------------------------------------------------------------------------------ */
typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41
} aclDataType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54
} aclFormat;

typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;

typedef enum {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

typedef enum {
    ACL_OPT_DETERMINISTIC = 0,
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
    ACL_OPT_STRONG_CONSISTENCY = 2,
    ACL_OPT_ENABLE_KERNEL_EARLY_START = 3
} aclSysParamOpt;

/* aclsimLiveObjects kinds */
typedef enum {
    ACLSIM_LIVE_DEVICE_ALLOCATIONS = 0,
    ACLSIM_LIVE_DEVICE_BYTES = 1,
    ACLSIM_LIVE_TENSORS = 2,
    ACLSIM_LIVE_SCALARS = 3,
    ACLSIM_LIVE_EXECUTORS = 4,
    ACLSIM_LIVE_STREAMS = 5,
    ACLSIM_LIVE_CONTEXTS = 6,
    ACLSIM_LIVE_ARRAYS = 7
} aclsimLiveKind;

/* ---- libascendcl.so ------------------------------------------------------------------------ */
ACLSIM_API aclError aclInit(const char *configPath);
ACLSIM_API aclError aclFinalize(void);
ACLSIM_API aclError aclrtSetDevice(int32_t deviceId);
ACLSIM_API aclError aclrtResetDevice(int32_t deviceId);
ACLSIM_API aclError aclrtGetDevice(int32_t *deviceId);
ACLSIM_API aclError aclrtGetDeviceCount(uint32_t *count);
ACLSIM_API aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
ACLSIM_API aclError aclrtDestroyContext(aclrtContext context);
ACLSIM_API aclError aclrtSetCurrentContext(aclrtContext context);
ACLSIM_API aclError aclrtGetCurrentContext(aclrtContext *context);
ACLSIM_API aclError aclrtCreateStream(aclrtStream *stream);
ACLSIM_API aclError aclrtDestroyStream(aclrtStream stream);
ACLSIM_API aclError aclrtSynchronizeStream(aclrtStream stream);
ACLSIM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
ACLSIM_API aclError aclrtSynchronizeDevice(void);
ACLSIM_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACLSIM_API aclError aclrtFree(void *devPtr);
ACLSIM_API aclError aclrtMallocHost(void **hostPtr, size_t size);
ACLSIM_API aclError aclrtFreeHost(void *hostPtr);
ACLSIM_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                aclrtMemcpyKind kind);
ACLSIM_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
ACLSIM_API const char *aclrtGetSocName(void);
ACLSIM_API aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
ACLSIM_API aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACLSIM_API aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACLSIM_API aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACLSIM_API aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACLSIM_API const char *aclGetRecentErrMsg(void);

/* Simulator extras (not in CANN). */
/* Number of live objects of one kind (aclsimLiveKind); -1 for an unknown kind. */
ACLSIM_API int64_t aclsimLiveObjects(int32_t kind);
/* "<version>+<source key>", e.g. "0.1.0+3f2a9c0d1e2b4a5f". */
ACLSIM_API const char *aclsimVersion(void);
/* Test hook: enqueue a task that sleeps `ms` milliseconds on `stream` (NULL: the current
 * context's default stream). */
ACLSIM_API aclError aclsimStreamDelay(aclrtStream stream, int32_t ms);
/* Comma-separated names accepted in ACLSIM_FAULTS ("" when there are none). */
ACLSIM_API const char *aclsimKnownFaults(void);
/* One line on a fault's mechanism and where it lives; NULL for an unknown name. */
ACLSIM_API const char *aclsimFaultDescription(const char *name);

/* ---- libnnopbase.so ------------------------------------------------------------------------ */
ACLSIM_API aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                      aclDataType dataType, const int64_t *stride, int64_t offset,
                                      aclFormat format, const int64_t *storageDims,
                                      uint64_t storageDimsNum, void *tensorData);
ACLSIM_API aclnnStatus aclDestroyTensor(const aclTensor *tensor);
ACLSIM_API aclScalar *aclCreateScalar(void *value, aclDataType dataType);
ACLSIM_API aclnnStatus aclDestroyScalar(const aclScalar *scalar);
ACLSIM_API aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACLSIM_API aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACLSIM_API aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACLSIM_API aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACLSIM_API aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
ACLSIM_API aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACLSIM_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACLSIM_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
ACLSIM_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, size_t index,
                                             aclTensor *tensor, void *addr);
ACLSIM_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, size_t index,
                                              aclTensor *tensor, void *addr);
ACLSIM_API aclnnStatus aclnnInit(const char *configPath);
ACLSIM_API aclnnStatus aclnnFinalize(void);

/* ---- libopapi.so --------------------------------------------------------------------------- */
ACLSIM_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                const aclScalar *alpha, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLSIM_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_H */
