/*
 * aclsim.h - the aclnn-stress CANN simulator's own extras (nothing here exists in CANN).
 *
 * Programs written for CANN include CANN's headers (acl/acl.h, aclnnop/aclnn_<op>.h), which the
 * simulator root installs under <root>/include; this header adds
 *   - introspection and test hooks exported by libascendcl.so (aclsim*), and
 *   - the kernel API exported by libnnopbase.so (aclsim_*), with which a user writes a CPU model
 *     of an operator of their own (docs/simulator.md, "Custom operators"), built into a
 *     libcust_opapi.so that the binding finds in a custom operator package.
 *
 * Writing an operator with the kernel API:
 *
 * An operator is one file op_<name>.c compiled into libopapi.  It implements the two CANN entry
 * points with this API:
 *
 *   aclnnStatus aclnnFooGetWorkspaceSize(const aclTensor *x, ..., aclTensor *out,
 *                                        uint64_t *workspaceSize, aclOpExecutor **executor)
 *   {
 *       // 1. NULL checks (161001), then read the handles into descriptor copies:
 *       aclsim_tensor_desc dx;
 *       int rc = aclsim_tensor_get("aclnnFoo", "x", x, &dx);        // 161001 / 161002 + message
 *       // 2. validate dtypes/shapes/attributes (161002 + aclsim_set_error message)
 *       // 3. build the executor: it copies descriptors and attributes
 *       aclsim_executor *ex = aclsim_executor_create("aclnnFoo", foo_kernel, workspace_bytes);
 *       aclsim_executor_add_input(ex, "x", &dx);
 *       aclsim_executor_add_output(ex, "out", &dout);
 *       aclsim_executor_set_attrs(ex, &attrs, sizeof attrs);
 *       return aclsim_executor_publish(ex, workspaceSize, executor);
 *   }
 *   aclnnStatus aclnnFoo(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
 *                        aclrtStream stream)
 *   {
 *       return aclsim_executor_run("aclnnFoo", workspace, workspaceSize, executor, stream);
 *   }
 *
 * The kernel runs later on the stream's worker thread with a snapshot of the descriptors.  Before
 * it runs, every non-empty tensor's byte extent (and the workspace) is checked to lie inside one
 * live device allocation, and pinned; after it runs, the guard bytes of the allocations holding
 * the outputs and the workspace are checked.  Failures become the stream's sticky error 507015.
 */
#ifndef ACLSIM_H
#define ACLSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLSIM_API
#define ACLSIM_API __attribute__((visibility("default")))
#endif
#ifndef ACLSIM_PRINTF
#define ACLSIM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif

/* aclsimLiveObjects kinds */
typedef enum {
    ACLSIM_LIVE_DEVICE_ALLOCATIONS = 0,
    ACLSIM_LIVE_DEVICE_BYTES = 1,
    ACLSIM_LIVE_TENSORS = 2,
    ACLSIM_LIVE_SCALARS = 3,
    ACLSIM_LIVE_EXECUTORS = 4,
    ACLSIM_LIVE_STREAMS = 5,
    ACLSIM_LIVE_CONTEXTS = 6,
    ACLSIM_LIVE_ARRAYS = 7,
    ACLSIM_LIVE_LISTS = 8, /* tensor lists + scalar lists */
    ACLSIM_LIVE_EVENTS = 9
} aclsimLiveKind;

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

/* ---- errors and faults, for kernels (libascendcl.so) ---- */
/* Store "<message> [code]" as the calling thread's recent error (aclGetRecentErrMsg); returns
 * code, so `return aclsim_set_error(161002, "...")` reports and fails in one step. */
ACLSIM_API int aclsim_set_error(int code, const char *fmt, ...) ACLSIM_PRINTF(2, 3);
/* Whether fault `name` is switched on in ACLSIM_FAULTS (read at aclInit). */
ACLSIM_API int aclsim_fault(const char *name);

/* ---- the kernel API (libnnopbase.so) ---- */

/* Descriptors hold up to 25 dims (gert::Shape's limit).  aclCreateTensor accepts more, as CANN
 * does; aclsim_tensor_get refuses such a tensor (161002), as CANN's operators do (most accept 8). */
#define ACLSIM_MAX_DIMS 25

/* A tensor descriptor: a copy of what aclCreateTensor was given.  Strides and offset are in
 * elements; data is the device address of element 0 of the storage (the view starts at
 * data + offset * element size). */
typedef struct {
    int32_t dtype;  /* aclDataType */
    int32_t format; /* aclFormat   */
    int32_t ndim;
    int32_t storage_ndim;
    int64_t dims[ACLSIM_MAX_DIMS];
    int64_t strides[ACLSIM_MAX_DIMS];
    int64_t storage_dims[ACLSIM_MAX_DIMS];
    int64_t offset;
    void *data;
    const aclTensor *handle; /* the tensor it was read from (aclSet*TensorAddr finds it by this) */
} aclsim_tensor_desc;

/* A scalar's value, read once at aclCreateScalar.  `f` holds it as a double (exact for every
 * supported type except large 64-bit integers), `i`/`u` as integers (floating values truncated,
 * 0 for NaN/out of range), `bits` the raw little-endian bytes. */
typedef struct {
    int32_t dtype;
    int is_float;    /* FLOAT, FLOAT16, BF16, DOUBLE */
    double f;
    int64_t i;
    uint64_t u;
    uint8_t bits[8];
} aclsim_scalar_value;

/* ---- reading user handles (all return 0, or 161001 for NULL / 161002 for a handle that is not
 * live, with a message "<api>: <arg> ..."). ---- */
ACLSIM_API int aclsim_tensor_get(const char *api, const char *arg, const aclTensor *t,
                                      aclsim_tensor_desc *out);
ACLSIM_API int aclsim_scalar_get(const char *api, const char *arg, const aclScalar *s,
                                      aclsim_scalar_value *out);
/* Arrays: *values is malloc'ed (caller frees; NULL when *n == 0). */
ACLSIM_API int aclsim_int_array_get(const char *api, const char *arg, const aclIntArray *a,
                                         int64_t **values, uint64_t *n);
ACLSIM_API int aclsim_float_array_get(const char *api, const char *arg, const aclFloatArray *a,
                                           float **values, uint64_t *n);
ACLSIM_API int aclsim_bool_array_get(const char *api, const char *arg, const aclBoolArray *a,
                                          bool **values, uint64_t *n);

/* Lists: every member read as above (a NULL or dead member fails, named "<arg>[i]"); *descs /
 * *values are malloc'ed (caller frees; NULL when *n == 0). */
ACLSIM_API int aclsim_tensor_list_get(const char *api, const char *arg, const aclTensorList *list,
                                      aclsim_tensor_desc **descs, uint64_t *n);
ACLSIM_API int aclsim_scalar_list_get(const char *api, const char *arg, const aclScalarList *list,
                                      aclsim_scalar_value **values, uint64_t *n);

/* ---- descriptor helpers ---- */
/* Number of elements of the view (1 for 0-d), or -1 on int64 overflow. */
ACLSIM_API int64_t aclsim_numel(const aclsim_tensor_desc *d);
/* Byte range [*first, *first + *nbytes) relative to d->data touched by the view; 0 if ok, -1 on
 * overflow or an unknown dtype.  Empty tensors give nbytes 0. */
ACLSIM_API int aclsim_extent(const aclsim_tensor_desc *d, uint64_t *first, uint64_t *nbytes);
/* Numpy broadcasting of two shapes (right-aligned, 1 stretches).  0 ok, -1 incompatible or
 * more than ACLSIM_MAX_DIMS dims. */
ACLSIM_API int aclsim_broadcast_shape(const int64_t *a, int na, const int64_t *b, int nb,
                                           int64_t *out, int *nout);
/* "[2, 3, 4]" into buf (for messages); returns buf. */
ACLSIM_API const char *aclsim_shape_str(const int64_t *dims, int n, char *buf, size_t cap);

/* ---- element access, for kernels (slow and simple: for CPU models of custom operators) ----
 * `index` is the row-major index of an element of the view (0 .. numel-1); strides and offset
 * are applied.  aclsim_tensor_element returns its address (NULL when out of range or for a
 * sub-byte / unknown dtype); read / write convert from / to double for FLOAT, DOUBLE, FLOAT16,
 * BF16, the integer types and BOOL (writes round to nearest even for the half types and
 * truncate toward zero for integers) and return 0, or -1 (out of range, unsupported dtype). */
ACLSIM_API void *aclsim_tensor_element(const aclsim_tensor_desc *d, int64_t index);
ACLSIM_API int aclsim_tensor_read(const aclsim_tensor_desc *d, int64_t index, double *value);
ACLSIM_API int aclsim_tensor_write(const aclsim_tensor_desc *d, int64_t index, double value);

/* ---- executors ---- */
typedef struct aclsim_executor aclsim_executor;

/* Values an operator's launch hook may pass from phase 2 to its kernel. */
#define ACLSIM_LAUNCH_ARGS 4

/* What a kernel sees.  inputs/outputs are snapshots taken at launch (addresses updated by
 * aclSetInput/OutputTensorAddr apply to later launches). */
typedef struct {
    const char *op;
    int n_inputs;
    const aclsim_tensor_desc *inputs;
    int n_outputs;
    const aclsim_tensor_desc *outputs;
    const void *attrs;
    size_t attrs_size;
    void *workspace;
    uint64_t workspace_size;
    int deterministic; /* aclsim_deterministic() captured in phase 1 */
    uint64_t launch_id; /* process-wide launch counter (varies between runs of one executor) */
    int64_t launch_args[ACLSIM_LAUNCH_ARGS]; /* filled at phase 2 by the launch hook, if any */
    char *msg;          /* error text; use aclsim_kernel_fail */
    size_t msg_cap;
    void *stream; /* the handle of the stream the kernel runs on (the launch's) */
} aclsim_kernel_ctx;

/* Returns 0, or an error code after aclsim_kernel_fail (becomes the stream's sticky error). */
typedef int (*aclsim_kernel_fn)(aclsim_kernel_ctx *k);

ACLSIM_API int aclsim_kernel_fail(aclsim_kernel_ctx *k, int code, const char *fmt, ...)
    ACLSIM_PRINTF(3, 4);

/* Phase 1.  kernel may be NULL: the run then validates and does nothing (empty tensors).
 * create returns NULL on out-of-memory (message set, code 561101). */
ACLSIM_API aclsim_executor *aclsim_executor_create(const char *op, aclsim_kernel_fn kernel,
                                                        uint64_t workspace_size);
/* Append a tensor (copied); name is used in messages.  0 or 561101 (message set). */
ACLSIM_API int aclsim_executor_add_input(aclsim_executor *ex, const char *name,
                                              const aclsim_tensor_desc *d);
ACLSIM_API int aclsim_executor_add_output(aclsim_executor *ex, const char *name,
                                               const aclsim_tensor_desc *d);
/* Copy an attribute blob (plain data, no pointers to user memory).  0 or 561101. */
ACLSIM_API int aclsim_executor_set_attrs(aclsim_executor *ex, const void *attrs, size_t size);
/* Optional: called by phase 2 on the launching thread, just before the enqueue, with the
 * executor's attrs; it fills the launch's args (zeroed first), which the kernel sees as
 * k->launch_args.  This is where real CANN copies host-side tiling data into the launch: state
 * read here is read on the host at launch, not later on the device. */
typedef void (*aclsim_launch_hook)(const void *attrs, int64_t *launch_args);
ACLSIM_API void aclsim_executor_set_launch_hook(aclsim_executor *ex, aclsim_launch_hook hook);
/* Optional: the executor cannot be made repeatable, as CANN marks one whose host side used L0
 * copy APIs (CopyToNpu, ...): aclSetAclOpExecutorRepeatable then fails with 561000
 * (ACLNN_ERR_INNER, nnopbase's OpExecutorImpl::SetRepeatable) and it stays single-use. */
ACLSIM_API void aclsim_executor_set_unrepeatable(aclsim_executor *ex);
/* Register the executor, write *workspaceSize and *executor.  Consumes ex on every path. */
ACLSIM_API aclnnStatus aclsim_executor_publish(aclsim_executor *ex, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor);
/* Free an executor that was never published (phase 1 failed after create). */
ACLSIM_API void aclsim_executor_discard(aclsim_executor *ex);
/* Phase 2 for any operator: see docs/simulator.md for the checks and codes. */
ACLSIM_API aclnnStatus aclsim_executor_run(const char *op, void *workspace,
                                                uint64_t workspaceSize, aclOpExecutor *executor,
                                                aclrtStream stream);

/* ---- state that must exist once per process / per thread (nb_state.c) ----
 * Operator objects are linked into two libraries (libopapi_<domain>.so and libopapi.so), so an
 * operator file must not keep mutable `static` data (tests/test_sim_build.py checks): it asks
 * for a named block here instead.  The block is zeroed, created on first use (init, if not
 * NULL, runs once, before any caller sees it) and lives until exit; a second caller with the
 * same name gets the same block, from either library.  NULL on out-of-memory or when the size
 * differs from the block's (message set). */
ACLSIM_API void *aclsim_shared_state(const char *name, size_t size, void (*init)(void *state));
/* The same, one block per calling thread (freed when the thread exits; no init). */
ACLSIM_API void *aclsim_thread_state(const char *name, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_H */
