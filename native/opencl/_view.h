/* mlrt_view: a strided view as kernels receive it (rank, shape and element strides).
 *
 * Declared once, here: the OpenCL programs read it (_common.cl includes it) and so does
 * the host, through cffi (native/opencl/_programs.py: struct_bytes), which fills it by
 * field name.  int64_t and int32_t are OpenCL's long and int (typedefs in _common.cl);
 * MLRT_MAX_RANK is native/_lib.py's MAX_RANK (a build option of every program, a
 * #define for cffi). */
typedef struct mlrt_view {
    int32_t rank;
    int32_t pad;
    int64_t shape[MLRT_MAX_RANK];
    int64_t strides[MLRT_MAX_RANK];
} mlrt_view;
