// aclnnAdd the way the CANN documentation's aclnn samples are written: C++, acl/acl.h and the
// operator's header, aclDataType::/aclFormat:: qualified enums, the two-phase call, a stream
// synchronize, results printed one per line.  Built by tests/test_fidelity.py with the
// documented line:
//   g++ add_sample.cpp -I $R/include -I $R/include/aclnn -L $R/lib64 -lopapi_math -lascendcl -lnnopbase
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(cond, what)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::printf("FAILED %s (line %d)\n", what, __LINE__);      \
            return 1;                                                  \
        }                                                              \
    } while (0)

static int64_t Numel(const std::vector<int64_t> &shape)
{
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

template <typename T>
static int MakeTensor(const std::vector<T> &host, const std::vector<int64_t> &shape, void **dev,
                      aclDataType dtype, aclTensor **tensor)
{
    size_t bytes = static_cast<size_t>(Numel(shape)) * sizeof(T);
    auto ret = aclrtMalloc(dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK(ret == ACL_SUCCESS, "aclrtMalloc");
    ret = aclrtMemcpy(*dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK(ret == ACL_SUCCESS, "aclrtMemcpy");
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--)
        strides[i] = shape[i + 1] * strides[i + 1];
    *tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0,
                              aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), *dev);
    CHECK(*tensor != nullptr, "aclCreateTensor");
    return 0;
}

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    CHECK(aclInit(nullptr) == ACL_SUCCESS, "aclInit");
    CHECK(aclrtSetDevice(deviceId) == ACL_SUCCESS, "aclrtSetDevice");
    CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream");

    std::vector<int64_t> selfShape = {4, 2}, otherShape = {1, 2}, outShape = {4, 2};
    std::vector<float> selfHost = {0, 1, 2, 3, 4, 5, 6, 7};
    std::vector<float> otherHost = {10, 100};  // broadcast over the rows
    std::vector<float> outHost(8, 0);
    void *selfDev = nullptr, *otherDev = nullptr, *outDev = nullptr;
    aclTensor *self = nullptr, *other = nullptr, *out = nullptr;
    CHECK(MakeTensor(selfHost, selfShape, &selfDev, aclDataType::ACL_FLOAT, &self) == 0, "self");
    CHECK(MakeTensor(otherHost, otherShape, &otherDev, aclDataType::ACL_FLOAT, &other) == 0,
          "other");
    CHECK(MakeTensor(outHost, outShape, &outDev, aclDataType::ACL_FLOAT, &out) == 0, "out");
    float alphaValue = 1.5f;
    aclScalar *alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
    CHECK(alpha != nullptr, "aclCreateScalar");

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    auto ret = aclnnAddGetWorkspaceSize(self, other, alpha, out, &workspaceSize, &executor);
    CHECK(ret == ACL_SUCCESS, "aclnnAddGetWorkspaceSize");
    void *workspace = nullptr;
    if (workspaceSize > 0)
        CHECK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS,
              "workspace");
    CHECK(aclnnAdd(workspace, workspaceSize, executor, stream) == ACL_SUCCESS, "aclnnAdd");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream");

    std::vector<float> result(static_cast<size_t>(Numel(outShape)), 0);
    ret = aclrtMemcpy(result.data(), result.size() * sizeof(float), outDev,
                      result.size() * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK(ret == ACL_SUCCESS, "aclrtMemcpy back");
    for (size_t i = 0; i < result.size(); i++) std::printf("result[%zu] is: %f\n", i, result[i]);

    aclDestroyTensor(self);
    aclDestroyTensor(other);
    aclDestroyScalar(alpha);
    aclDestroyTensor(out);
    aclrtFree(selfDev);
    aclrtFree(otherDev);
    aclrtFree(outDev);
    if (workspaceSize > 0) aclrtFree(workspace);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
