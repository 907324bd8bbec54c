"""A network's first conv (its activation fused: FusedConv, or a plain Conv) and the
MaxPool after it -> one com.microsoft FusedConvMaxPool (ops/ms_fusedconvmaxpool.py).

The conv over the image (4 input channels or fewer, one group, 2-D) writes the largest
tensor of networks like SqueezeNet only for the MaxPool to read it back; fused, the C
kernel pools each band of rows while they are in cache.  Only kernels of 9 taps or fewer
(3 x 3), whose output costs more to write than to compute, and an output of 2 MB or
more (a core's L2 here): SqueezeNet's stem (3 x 3 / 2, 64 filters to 111 x 111, 3.2 MB,
then a 3 x 3 / 2 pool) took 861 -> 678 us on one thread and 621 -> 477 on two, the model
2-4% faster; the 7 x 7 stems of ResNet-50 and Inception v2 saved as much in the pair but
the models ran 1% slower (their convs after it slower by as much, with the activations
laid out differently in the arena); the CRNN's first conv (one channel to 32 at
32 x 320, 1.3 MB, which stays in cache anyway) 2% slower.  Applies when
the conv has no Z, its output feeds only the MaxPool and is not a graph output, and the
MaxPool is 2-D with unit dilations, no Indices read, and pads given (NOTSET) or none
(VALID).  Only in a session on the CPU alone: the OpenCL provider has no such node."""

from onnx import helper

from ._util import attrs, constant, lookups

LEVEL = 2
ORDER = 55
# the most input channels of a conv fused with its MaxPool (an image's), and its most taps
MAX_CHANNELS = 4
MAX_TAPS = 9
MIN_OUTPUT_BYTES = 1 << 21  # the conv's output, one image's


def apply(graph, context) -> int:
    if set(context.providers) != {"CPUExecutionProvider"}:
        return 0
    if not any(n.op_type == "MaxPool" and n.domain == "" for n in graph.nodes):
        return 0
    variable, outputs, producer, readers = lookups(graph)
    fused = 0
    for pool in list(graph.nodes):
        if pool.op_type != "MaxPool" or pool.domain != "":
            continue
        conv = producer.get(pool.input[0])
        if conv is None or (conv.op_type, conv.domain) not in (("Conv", ""), ("FusedConv", "com.microsoft")):
            continue
        out = conv.output[0]
        if out in outputs or len(readers.get(out, ())) != 1 or (len(conv.input) > 3 and conv.input[3]):
            continue
        if any(o and (o in outputs or readers.get(o)) for o in pool.output[1:]):
            continue
        w = constant(graph, conv.input[1], variable) if len(conv.input) > 1 else None
        ca, pa = attrs(conv), attrs(pool)
        if (w is None or w.ndim != 4 or ca.get("group", 1) != 1 or w.shape[1] > MAX_CHANNELS
                or w.shape[2] * w.shape[3] > MAX_TAPS):
            continue
        t = graph.type_of(out)
        dims = t.shape if t is not None and t.shape is not None else None
        if not dims or len(dims) != 4 or not all(isinstance(d, int) for d in dims[1:]) or \
                dims[1] * dims[2] * dims[3] * 4 < MIN_OUTPUT_BYTES:
            continue
        pad_mode = pa.get("auto_pad", b"NOTSET")
        pad_mode = pad_mode.decode() if isinstance(pad_mode, bytes) else pad_mode
        kernel = list(pa.get("kernel_shape", []))
        if len(kernel) != 2 or any(d != 1 for d in pa.get("dilations", [1, 1])) or pad_mode not in ("NOTSET", "VALID"):
            continue
        pads = list(pa.get("pads", [0, 0, 0, 0])) if pad_mode == "NOTSET" else [0, 0, 0, 0]
        if len(pads) != 4 or any(p < 0 for p in pads) or pads[0] >= kernel[0] or pads[1] >= kernel[1]:
            continue
        fields = dict(pool_kernel_shape=kernel, pool_strides=list(pa.get("strides", [1, 1])), pool_pads=pads,
                      pool_ceil_mode=int(pa.get("ceil_mode", 0)))
        node = helper.make_node("FusedConvMaxPool", list(conv.input), [pool.output[0]],
                                name=conv.name or f"FusedConvMaxPool_{pool.output[0]}", domain="com.microsoft",
                                **fields)
        node.attribute.extend(a for a in conv.attribute if a.name not in fields)
        graph.nodes[:] = [node if n is conv else n for n in graph.nodes if n is not pool]
        fused += 1
    if fused:
        graph.reorder()
    return fused
