// aclnnAdd with asynchronous copies and an event between two streams, written the way the CANN
// runtime samples are: upload on a copy stream with aclrtMemcpyAsync, record an event there,
// make the compute stream wait for it, run the operator and the download on the compute stream,
// synchronize once.  Built by tests/test_fidelity.py with the documented line.
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(expr)                                                                 \
    do {                                                                            \
        auto _rc = (expr);                                                          \
        if (_rc != 0) {                                                             \
            std::printf("FAILED %s -> %d (%s)\n", #expr, (int)_rc, aclGetRecentErrMsg()); \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main()
{
    const int64_t n = 6;
    std::vector<int64_t> shape = {2, 3};
    std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60}, out(n, 0.0f);
    size_t bytes = n * sizeof(float);

    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream copyStream = nullptr, computeStream = nullptr;
    CHECK(aclrtCreateStream(&copyStream));
    CHECK(aclrtCreateStream(&computeStream));
    aclrtEvent uploaded = nullptr;
    CHECK(aclrtCreateEvent(&uploaded));

    void *da = nullptr, *db = nullptr, *dout = nullptr;
    CHECK(aclrtMalloc(&da, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dout, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemsetAsync(dout, bytes, 0, bytes, computeStream));
    CHECK(aclrtMemcpyAsync(da, bytes, a.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, copyStream));
    CHECK(aclrtMemcpyAsync(db, bytes, b.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, copyStream));
    CHECK(aclrtRecordEvent(uploaded, copyStream));
    CHECK(aclrtStreamWaitEvent(computeStream, uploaded));

    std::vector<int64_t> strides = {3, 1};
    aclTensor *ta = aclCreateTensor(shape.data(), 2, aclDataType::ACL_FLOAT, strides.data(), 0,
                                    aclFormat::ACL_FORMAT_ND, shape.data(), 2, da);
    aclTensor *tb = aclCreateTensor(shape.data(), 2, aclDataType::ACL_FLOAT, strides.data(), 0,
                                    aclFormat::ACL_FORMAT_ND, shape.data(), 2, db);
    aclTensor *tout = aclCreateTensor(shape.data(), 2, aclDataType::ACL_FLOAT, strides.data(), 0,
                                      aclFormat::ACL_FORMAT_ND, shape.data(), 2, dout);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, aclDataType::ACL_FLOAT);
    if (!ta || !tb || !tout || !alpha) {
        std::printf("FAILED creating tensors\n");
        return 1;
    }
    uint64_t wsSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddGetWorkspaceSize(ta, tb, alpha, tout, &wsSize, &executor));
    void *ws = nullptr;
    if (wsSize > 0) CHECK(aclrtMalloc(&ws, wsSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclnnAdd(ws, wsSize, executor, computeStream));
    CHECK(aclrtMemcpyAsync(out.data(), bytes, dout, bytes, ACL_MEMCPY_DEVICE_TO_HOST,
                           computeStream));
    CHECK(aclrtSynchronizeStream(computeStream));
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    CHECK(aclrtQueryEventStatus(uploaded, &status));
    std::printf("event complete: %d\n", status == ACL_EVENT_RECORDED_STATUS_COMPLETE ? 1 : 0);
    for (int64_t i = 0; i < n; i++) std::printf("result[%ld] is: %f\n", (long)i, out[i]);

    aclDestroyTensor(ta);
    aclDestroyTensor(tb);
    aclDestroyTensor(tout);
    aclDestroyScalar(alpha);
    if (ws) aclrtFree(ws);
    aclrtFree(da);
    aclrtFree(db);
    aclrtFree(dout);
    CHECK(aclrtDestroyEvent(uploaded));
    CHECK(aclrtSynchronizeStream(copyStream));
    CHECK(aclrtDestroyStream(copyStream));
    CHECK(aclrtDestroyStream(computeStream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
