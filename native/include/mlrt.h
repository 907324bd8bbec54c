/* mlrt.h -- the whole C ABI of libmlrt_core.
 *
 * This header is read twice: by the C compiler when the core and its kernels are
 * built, and by cffi (ABI mode) when Python loads the library.  To stay readable by
 * cffi it uses only plain declarations; preprocessor lines other than
 * "#define NAME <integer>" are dropped before cffi sees the text.
 */
#ifndef MLRT_H
#define MLRT_H

#include <stddef.h>
#include <stdint.h>

/* 2: mlrt_plan_run_loop (Loop / Scan bodies in C), Conv's packed weights (kernels/conv.h)
 * Additions within ABI 2 (an older ABI-2 runtime lacks them; Python checks before use):
 * mlrt_plan_run_flagged, mlrt_loop.terminate, MLRT_ERR_TERMINATED, the custom operator
 * types (mlrt_custom_op_api ...: declarations only, nothing the library exports),
 * mlrt_threadpool_create_pinned, mlrt_conv_fvec_fits / _size / _pack (kernels/conv.h) and
 * mlrt_conv_params.winograd = 2, mlrt_strings (string tensors of the ai.onnx.ml lookups). */
#define MLRT_ABI_VERSION 2
#define MLRT_MAX_RANK 8

/* Element types: the numbers are ONNX TensorProto.DataType. */
enum mlrt_dtype {
    MLRT_UNDEFINED = 0,
    MLRT_FLOAT = 1,
    MLRT_UINT8 = 2,
    MLRT_INT8 = 3,
    MLRT_UINT16 = 4,
    MLRT_INT16 = 5,
    MLRT_INT32 = 6,
    MLRT_INT64 = 7,
    MLRT_STRING = 8,
    MLRT_BOOL = 9,
    MLRT_FLOAT16 = 10,
    MLRT_DOUBLE = 11,
    MLRT_UINT32 = 12,
    MLRT_UINT64 = 13,
    MLRT_BFLOAT16 = 16,
    /* low-precision types, one byte per element (as ml_dtypes stores them; 4- and
     * 2-bit integers hold their value in the low bits) */
    MLRT_FLOAT8E4M3FN = 17,
    MLRT_FLOAT8E4M3FNUZ = 18,
    MLRT_FLOAT8E5M2 = 19,
    MLRT_FLOAT8E5M2FNUZ = 20,
    MLRT_UINT4 = 21,
    MLRT_INT4 = 22,
    MLRT_FLOAT4E2M1 = 23,
    MLRT_FLOAT8E8M0 = 24,
    MLRT_UINT2 = 25,
    MLRT_INT2 = 26
};

/* How a float rounds to float8 E8M0 (a power of two): Cast's round_mode
 * (mlrt_cast_params, kernels/cast.h), mapped from the ONNX names by Python; declared
 * here because the core's conversion (mlrt_f32_to_e8m0) reads it too.  (Within ABI 2
 * it moved here from kernels/cast.h, with the same names and numbers.) */
enum mlrt_round_mode {
    MLRT_ROUND_UP = 0,
    MLRT_ROUND_DOWN = 1,
    MLRT_ROUND_NEAREST = 2
};

/* The activation a fused product ends with: FusedConv's and FusedGemm's (mlrt_conv_params
 * .activation, kernels/conv.h; the ONNX names map onto these in native/ops/fusedconv.py);
 * declared here because the core's epilogue (src/epilogue.c) applies it.  (Within ABI 2
 * it moved here from kernels/conv.h, with the same names and numbers.) */
enum mlrt_conv_activation {
    MLRT_CONV_ACT_NONE = 0,
    MLRT_CONV_ACT_RELU = 1,
    MLRT_CONV_ACT_LEAKY_RELU = 2,
    MLRT_CONV_ACT_CLIP = 3,
    MLRT_CONV_ACT_SIGMOID = 4,
    MLRT_CONV_ACT_TANH = 5,
    MLRT_CONV_ACT_HARD_SIGMOID = 6,
    MLRT_CONV_ACT_HARD_SWISH = 7, /* v * HardSigmoid(v; alpha, beta): HardSwish, or HardSigmoid * x */
    MLRT_CONV_ACT_SWISH = 8       /* v * Sigmoid(alpha * v): SiLU (alpha 1), or Sigmoid * x */
};

/* Status codes returned by every fallible call; details in mlrt_last_error(). */
enum mlrt_status {
    MLRT_OK = 0,
    MLRT_ERR_INVALID_ARGUMENT = 1,
    MLRT_ERR_NOT_IMPLEMENTED = 2,
    MLRT_ERR_OUT_OF_MEMORY = 3,
    MLRT_ERR_INTERNAL = 4,
    MLRT_ERR_TERMINATED = 5       /* a run stopped because its terminate flag was set */
};

/* A tensor as kernels see it.  Strides count elements (not bytes) and may be 0
 * (a broadcast view).  An absent optional input has dtype MLRT_UNDEFINED. */
typedef struct mlrt_tensor {
    int32_t dtype;
    int32_t rank;
    int64_t shape[8];
    int64_t strides[8];
    void *data;
} mlrt_tensor;

/* A string tensor (dtype MLRT_STRING) as kernels see it: its data points to an
 * mlrt_strings, the elements in UTF-32 as numpy's 'U' arrays hold them -- element i is
 * the code points chars[i * width, (i + 1) * width), zeros after its end (so none ends
 * in U+0000) -- contiguous in the tensor's shape.  (An addition within ABI 2.) */
typedef struct mlrt_strings {
    int64_t width;
    const uint32_t *chars;
} mlrt_strings;

typedef struct mlrt_threadpool mlrt_threadpool;

/* What a kernel receives besides its tensors. */
typedef struct mlrt_context {
    mlrt_threadpool *pool;
} mlrt_context;

typedef int (*mlrt_kernel_fn)(const mlrt_context *ctx,
                              const mlrt_tensor *inputs, int32_t n_inputs,
                              mlrt_tensor *outputs, int32_t n_outputs,
                              const void *params, size_t params_size);

/* One row of the kernel table.  type_mask has bit (1 << dtype) set for every
 * element type of the operator's first input that the kernel accepts. */
typedef struct mlrt_kernel_def {
    const char *op_type;
    const char *domain;
    int32_t since_version;
    int32_t until_version;
    uint64_t type_mask;
    mlrt_kernel_fn run;
} mlrt_kernel_def;

/* Where a plan finds a tensor's bytes: base -1 is an absent optional value, 0 the
 * run's arena, k >= 1 the (k-1)th external pointer passed to mlrt_plan_run. */
typedef struct mlrt_slot {
    int32_t base;
    int64_t offset;
} mlrt_slot;

/* One node of a plan.  The descriptors give dtype, shape and strides; their data
 * fields are ignored and filled from the slots at run time. */
typedef struct mlrt_node_record {
    int32_t kernel;
    int32_t n_inputs;
    int32_t n_outputs;
    const mlrt_tensor *inputs;
    const mlrt_slot *input_slots;
    mlrt_tensor *outputs;
    const mlrt_slot *output_slots;
    const void *params;
    size_t params_size;
    const char *name;
} mlrt_node_record;

typedef struct mlrt_plan mlrt_plan;

/* version and errors */
int32_t mlrt_abi_version(void);
const char *mlrt_version(void);
const char *mlrt_build_info(void);
/* the CPU: the instruction set the float32 kernels run on ("portable", "avx2", "avx512",
 * "neon"; MLRT_ISA forces one the CPU runs) and the features read at load, space-separated */
const char *mlrt_cpu_isa_name(void);
const char *mlrt_cpu_features(void);
const char *mlrt_last_error(void);
void mlrt_clear_error(void);

/* kernel table */
int32_t mlrt_kernel_count(void);
const mlrt_kernel_def *mlrt_kernel_get(int32_t index);
int32_t mlrt_kernel_find(const char *domain, const char *op_type, int32_t opset, int32_t dtype);
int mlrt_kernel_run(int32_t kernel, mlrt_threadpool *pool,
                    const mlrt_tensor *inputs, int32_t n_inputs,
                    mlrt_tensor *outputs, int32_t n_outputs,
                    const void *params, size_t params_size);

/* intra-op thread pool */
mlrt_threadpool *mlrt_threadpool_create(int32_t n_threads);
/* As mlrt_threadpool_create, with worker i (1 ... n_threads - 1) kept to the i-th
 * processor the calling thread may run on, where it may run on n_threads or more (else
 * the workers are not pinned); the calling thread stays as it is. */
mlrt_threadpool *mlrt_threadpool_create_pinned(int32_t n_threads);
void mlrt_threadpool_destroy(mlrt_threadpool *pool);
int32_t mlrt_threadpool_size(const mlrt_threadpool *pool);

/* plans: a whole partition run in one call */
mlrt_plan *mlrt_plan_create(const mlrt_node_record *nodes, int32_t n_nodes,
                            int32_t n_external, size_t arena_bytes);
int mlrt_plan_run(const mlrt_plan *plan, mlrt_threadpool *pool,
                  void *const *external, void *arena);
/* As mlrt_plan_run, and when times_ns is not NULL, it receives two numbers per node
 * (2 * n_nodes in all): when the node's kernel started and ended, in nanoseconds of
 * CLOCK_MONOTONIC (the clock of Python's time.monotonic_ns); a node not reached keeps
 * what was there.  For profiling. */
int mlrt_plan_run_timed(const mlrt_plan *plan, mlrt_threadpool *pool,
                        void *const *external, void *arena, int64_t *times_ns);
/* As mlrt_plan_run_timed (times_ns may be NULL), and when terminate is not NULL, *terminate
 * is read before each node: once it is non-zero the run stops there and returns
 * MLRT_ERR_TERMINATED (another thread sets it: RunOptions.terminate). */
int mlrt_plan_run_flagged(const mlrt_plan *plan, mlrt_threadpool *pool,
                          void *const *external, void *arena, int64_t *times_ns,
                          const volatile int32_t *terminate);
/* As mlrt_plan_run_flagged, and when paths is not NULL it receives per node the kernel path
 * the node ran ("conv/winograd/avx512", "sgemm/neon", "unary/avx2": family, path,
 * instruction set), or NULL where its kernel names none; the strings are static.  For
 * the profiler. */
int mlrt_plan_run_profiled(const mlrt_plan *plan, mlrt_threadpool *pool,
                           void *const *external, void *arena, int64_t *times_ns,
                           const char **paths, const volatile int32_t *terminate);
/* A Loop or Scan whose body is a plan, iterated in C.  Per iteration k: the iteration
 * number (int64) and a true condition (bool) are written to their inputs (index -1: the
 * body has none), each scan input is bound to scan_inputs_at[s] + k * scan_input_bytes[s]
 * and each scan output to scan_buffers[s] + k * scan_bytes[s], the plan runs, and each
 * loop-carried output pointer is swapped with its input's, so the next iteration reads
 * what this one wrote (the caller owns both buffers, of equal size).  Stops after
 * `iterations`, or when the condition output (index -1: none) is false (stopped = 1).
 * External indexes are 0-based; `external` is rewritten in place.  A set `terminate`
 * flag stops it with MLRT_ERR_TERMINATED. */
typedef struct mlrt_loop {
    int64_t iterations;
    int64_t first_index;          /* the iteration number of the first iteration */
    int32_t index_input;          /* external index of the iteration number, or -1 */
    int32_t cond_input;           /* external index of the condition input, or -1 */
    int32_t cond_output;          /* external index of the condition output, or -1 */
    int32_t n_carried;
    const int32_t *carried_inputs;
    const int32_t *carried_outputs;
    int32_t n_scan_inputs;
    const int32_t *scan_inputs;
    const size_t *scan_input_bytes;
    void *const *scan_inputs_at;  /* iterations * scan_input_bytes each */
    int32_t n_scan;
    const int32_t *scan_outputs;
    const size_t *scan_bytes;
    void *const *scan_buffers;    /* iterations * scan_bytes each */
    int64_t done;                 /* out: iterations run */
    int32_t stopped;              /* out: 1 when the condition output was false */
    /* read before each iteration and each node of the body: once non-zero the loop stops
     * with MLRT_ERR_TERMINATED (NULL: never).  Last, so a caller built from an older header
     * that lacks it is not affected by it. */
    const volatile int32_t *terminate;
} mlrt_loop;
int mlrt_plan_run_loop(const mlrt_plan *plan, mlrt_threadpool *pool, void **external, void *arena,
                       mlrt_loop *loop);
int32_t mlrt_plan_node_count(const mlrt_plan *plan);
size_t mlrt_plan_arena_bytes(const mlrt_plan *plan);
void mlrt_plan_destroy(mlrt_plan *plan);

/* Custom operators from a shared library (an addition within ABI 2).
 * SessionOptions.register_custom_ops_library(path) loads the library and calls the
 * function it exports under the name "mlrt_register_custom_ops", of type
 * mlrt_register_custom_ops_fn:
 *     int32_t mlrt_register_custom_ops(const mlrt_custom_op_api *api, void *registry);
 * which calls api->register_op(registry, &def) once per operator and returns MLRT_OK
 * (anything else refuses the library; api->set_error may say why).  The strings of a
 * def are copied; api stays valid while the process lives.  Nodes of (domain, op_type)
 * then run on the host: mlrt gives contiguous inputs (an absent optional input has
 * dtype MLRT_UNDEFINED and data NULL), asks `infer` for each output's dtype, rank and
 * shape, allocates the outputs (contiguous, strides filled) and calls `compute`.  Both
 * return MLRT_OK or another status, and may call api->set_error(message) first.
 * mlrt.h itself does not declare mlrt_register_custom_ops: libmlrt_core has no such
 * function; a library declares it (docs/custom_ops.md, samples/custom_op_c). */
#define MLRT_CUSTOM_OP_API_VERSION 1

typedef int (*mlrt_custom_infer_fn)(void *user_data, const mlrt_tensor *inputs, int32_t n_inputs,
                                    mlrt_tensor *outputs, int32_t n_outputs);
typedef int (*mlrt_custom_compute_fn)(void *user_data, const mlrt_tensor *inputs, int32_t n_inputs,
                                      mlrt_tensor *outputs, int32_t n_outputs);

typedef struct mlrt_custom_op_def {
    const char *domain;               /* not "" nor "ai.onnx": a domain of the library's own */
    const char *op_type;
    mlrt_custom_infer_fn infer;       /* NULL: each output has input 0's dtype and shape */
    mlrt_custom_compute_fn compute;
    void *user_data;                  /* handed to infer and compute as it is */
} mlrt_custom_op_def;

typedef struct mlrt_custom_op_api {
    int32_t version;                  /* MLRT_CUSTOM_OP_API_VERSION */
    int32_t abi_version;              /* MLRT_ABI_VERSION */
    int (*register_op)(void *registry, const mlrt_custom_op_def *def);
    void (*set_error)(const char *message);  /* the message of the failure being returned */
} mlrt_custom_op_api;

typedef int32_t (*mlrt_register_custom_ops_fn)(const mlrt_custom_op_api *api, void *registry);

#endif
