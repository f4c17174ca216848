// aclnnCat with an aclTensorList, written the way the CANN docs' aclnn samples are: C++,
// acl/acl.h + aclnnop/aclnn_cat.h, two-phase call, synchronize, print.  Destroying the list
// destroys its member tensors (as real nnopbase does), so the members are not destroyed again.
// Built by tests/test_fidelity.py with the documented line (-lopapi_math -lascendcl -lnnopbase).
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_cat.h"

#define CHECK(cond, what)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::printf("FAILED %s (line %d)\n", what, __LINE__);      \
            return 1;                                                  \
        }                                                              \
    } while (0)

static int Upload(const std::vector<float> &host, void **dev)
{
    size_t bytes = host.size() * sizeof(float);
    CHECK(aclrtMalloc(dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    CHECK(aclrtMemcpy(*dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS,
          "aclrtMemcpy");
    return 0;
}

static aclTensor *Tensor2d(int64_t rows, int64_t cols, void *dev)
{
    std::vector<int64_t> shape = {rows, cols};
    std::vector<int64_t> strides = {cols, 1};
    return aclCreateTensor(shape.data(), shape.size(), aclDataType::ACL_FLOAT, strides.data(), 0,
                           aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), dev);
}

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    CHECK(aclInit(nullptr) == ACL_SUCCESS, "aclInit");
    CHECK(aclrtSetDevice(deviceId) == ACL_SUCCESS, "aclrtSetDevice");
    CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream");

    // (2,3) ++ (1,3) ++ (3,3) along dim 0 -> (6,3)
    std::vector<std::vector<float>> parts = {
        {0, 1, 2, 3, 4, 5}, {10, 11, 12}, {20, 21, 22, 23, 24, 25, 26, 27, 28}};
    std::vector<int64_t> rows = {2, 1, 3};
    std::vector<void *> devs(parts.size(), nullptr);
    std::vector<aclTensor *> members(parts.size(), nullptr);
    for (size_t i = 0; i < parts.size(); i++) {
        CHECK(Upload(parts[i], &devs[i]) == 0, "upload");
        members[i] = Tensor2d(rows[i], 3, devs[i]);
        CHECK(members[i] != nullptr, "aclCreateTensor");
    }
    aclTensorList *tensors = aclCreateTensorList(members.data(), members.size());
    CHECK(tensors != nullptr, "aclCreateTensorList");

    std::vector<float> outHost(18, 0);
    void *outDev = nullptr;
    CHECK(Upload(outHost, &outDev) == 0, "out");
    aclTensor *out = Tensor2d(6, 3, outDev);
    CHECK(out != nullptr, "aclCreateTensor out");

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    auto ret = aclnnCatGetWorkspaceSize(tensors, 0, out, &workspaceSize, &executor);
    CHECK(ret == ACL_SUCCESS, "aclnnCatGetWorkspaceSize");
    void *workspace = nullptr;
    if (workspaceSize > 0)
        CHECK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS,
              "workspace");
    CHECK(aclnnCat(workspace, workspaceSize, executor, stream) == ACL_SUCCESS, "aclnnCat");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream");

    std::vector<float> result(18, 0);
    ret = aclrtMemcpy(result.data(), result.size() * sizeof(float), outDev,
                      result.size() * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK(ret == ACL_SUCCESS, "aclrtMemcpy back");
    for (size_t i = 0; i < result.size(); i++) std::printf("result[%zu] is: %f\n", i, result[i]);

    aclDestroyTensorList(tensors);  // destroys the three members too
    aclDestroyTensor(out);
    for (void *dev : devs) aclrtFree(dev);
    aclrtFree(outDev);
    if (workspaceSize > 0) aclrtFree(workspace);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
