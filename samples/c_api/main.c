/* main.c -- call the mlrt runtime through its C ABI: find the Add kernel in the
 * kernel table and run it on two small float tensors.
 *
 * Build against a system-installed runtime (`mlrt runtime install --prefix P`):
 *
 *     PKG_CONFIG_PATH=P/lib/pkgconfig \
 *         cc main.c $(pkg-config --cflags --libs mlrt) -o add && ./add
 *
 * (mlrt-<version> instead of mlrt picks one of several installed versions.)  The
 * pkg-config file adds an rpath, so ./add finds libmlrt_core.so, and that library
 * finds its BLAS beside itself.
 */
#include <stdio.h>
#include <string.h>

#include <mlrt.h>

static void describe(mlrt_tensor *t, float *data, int64_t n) {
    memset(t, 0, sizeof *t);
    t->dtype = MLRT_FLOAT;
    t->rank = 1;
    t->shape[0] = n;
    t->strides[0] = 1;
    t->data = data;
}

int main(void) {
    if (mlrt_abi_version() != MLRT_ABI_VERSION) {   /* the header and the library must agree */
        fprintf(stderr, "ABI mismatch: library %d, header %d\n", mlrt_abi_version(), MLRT_ABI_VERSION);
        return 1;
    }
    printf("mlrt %s (ABI %d), %d kernels\n", mlrt_version(), mlrt_abi_version(), mlrt_kernel_count());

    int32_t add = mlrt_kernel_find("", "Add", 14, MLRT_FLOAT);
    if (add < 0) {
        fprintf(stderr, "no Add kernel: %s\n", mlrt_last_error());
        return 1;
    }
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4] = {0};
    mlrt_tensor in[2], out[1];
    describe(&in[0], a, 4);
    describe(&in[1], b, 4);
    describe(&out[0], y, 4);

    mlrt_threadpool *pool = mlrt_threadpool_create(1);
    int status = mlrt_kernel_run(add, pool, in, 2, out, 1, NULL, 0);
    mlrt_threadpool_destroy(pool);
    if (status != MLRT_OK) {
        fprintf(stderr, "Add failed (%d): %s\n", status, mlrt_last_error());
        return 1;
    }
    printf("Add: %g %g %g %g\n", y[0], y[1], y[2], y[3]);
    return (y[0] == 11 && y[1] == 22 && y[2] == 33 && y[3] == 44) ? 0 : 1;
}
