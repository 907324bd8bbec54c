/* Activations: y = f(x) elementwise, computed in float (Relu, LeakyRelu, Sigmoid, Tanh, ...).
 * One kernel per function; `n` elements, contiguous. */

__kernel void mlrt_relu(__global const T *x, __global T *y, long n)
{
    long i = get_global_id(0);
    if (i < n) { float v = LOAD(x, i); STORE(y, i, v > 0.0f ? v : (isnan(v) ? v : 0.0f)); }
}

__kernel void mlrt_leaky_relu(__global const T *x, __global T *y, long n, float alpha)
{
    long i = get_global_id(0);
    if (i < n) { float v = LOAD(x, i); STORE(y, i, v >= 0.0f ? v : v * alpha); }
}

__kernel void mlrt_sigmoid(__global const T *x, __global T *y, long n)
{
    long i = get_global_id(0);
    if (i < n) { float v = LOAD(x, i); STORE(y, i, 1.0f / (1.0f + exp(-v))); }
}

__kernel void mlrt_tanh(__global const T *x, __global T *y, long n)
{
    long i = get_global_id(0);
    if (i < n) STORE(y, i, tanh(LOAD(x, i)));
}
