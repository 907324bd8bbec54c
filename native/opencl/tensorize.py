"""The OpenCL program of media's tensorization kernels (tensorize.cl).  Its kernels are
dispatched by media/_gpu.py (native/ never imports the layers above it); this module
only gives the program its build options: the pixel-format numbers, as
kernels/tensorize.h numbers them."""

C_CONSTANTS = ("MLRT_PIXEL_BGRA8", "MLRT_PIXEL_RGBA8", "MLRT_PIXEL_BGR8", "MLRT_PIXEL_RGB8", "MLRT_PIXEL_GRAY8")
