"""The helpers onnxruntime keeps in onnxruntime.capi.onnxruntime_inference_collection for
the providers argument and device names: check_and_normalize_provider_args (which
InferenceSession and set_providers use too), get_ort_device_type and
get_vendor_id_for_device_type."""

from __future__ import annotations

import collections.abc
import warnings

from .._errors import InvalidArgument
from ._device import OrtDeviceVendorId

# onnxruntime's device names -> OrtDevice's device type numbers, as onnxruntime's OrtDevice.cpu(),
# .cuda(), ... give them (DirectML has a type of its own).  A table, since these are onnxruntime's
# devices; mlrt's device providers add their kinds (_device_types).
_DEVICE_TYPES = {"cpu": 0, "gpu": 1, "cuda": 1, "webgpu": 1, "npu": 3, "cann": 3, "dml": 4}
_VENDORS = {"cuda": OrtDeviceVendorId.NVIDIA, "dml": OrtDeviceVendorId.MICROSOFT, "cann": OrtDeviceVendorId.HUAWEI,
            "webgpu": OrtDeviceVendorId.NONE}


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """(names, options) from InferenceSession's `providers` and `provider_options`:
    providers are names or (name, options dict) tuples, or names with a list of
    `provider_options` of the same length; options become dicts of str -> str.  A name
    not in `available_provider_names` is kept with a warning; a name given twice keeps
    its first options, with a warning.  None gives ([], []).  A str is one provider's
    name (onnxruntime iterates over its letters).  InvalidArgument (a ValueError, as
    onnxruntime raises) for anything else, with onnxruntime's sentence."""
    if providers is None:
        return [], []
    if isinstance(providers, str):
        providers = [providers]
    if not isinstance(providers, collections.abc.Sequence):
        raise InvalidArgument(f"providers must be a list of names or (name, options) tuples, got "
                              f"{type(providers).__name__}. 'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence) or isinstance(provider_options, str):
            raise InvalidArgument(f"provider_options must be a list of dicts, got {type(provider_options).__name__}. "
                                  "'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise InvalidArgument(f"{len(providers)} provider(s) but {len(provider_options)} provider_options. "
                                  "'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise InvalidArgument("with provider_options, providers must be names only (options go in one place or "
                                  "the other). Only string values for 'providers' are supported if "
                                  "'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise InvalidArgument("each of provider_options must be a dict. 'provider_options' values must be dicts.")
        pairs = list(zip(providers, provider_options))
    else:
        pairs = []
        for i, p in enumerate(providers):
            if isinstance(p, str):
                pairs.append((p, {}))
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                pairs.append(p)
            else:
                raise InvalidArgument(f"providers: entry {i} is {p!r}, not a provider name or a (name, options) "
                                      "tuple. 'providers' values must be either strings or (string, dict) tuples.")
    normalized: dict[str, dict[str, str]] = {}
    for name, options in pairs:
        if name not in available_provider_names:
            warnings.warn(f"Specified provider '{name}' is not in available provider names.Available providers: "
                          f"'{', '.join(available_provider_names)}'", UserWarning, stacklevel=3)
        if name in normalized:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.", UserWarning, stacklevel=3)
            continue
        normalized[name] = {str(k): str(v) for k, v in options.items()}
    return list(normalized), list(normalized.values())


def _device_types() -> dict[str, int]:
    """onnxruntime's names, then each device provider's kind (1, a GPU; 3, an NPU)."""
    from ..native.providers import device_classes
    return {**_DEVICE_TYPES, **{kind: 1 if cls.gpu else 3 for kind, cls in device_classes().items()}}


def get_ort_device_type(device_type: str) -> int:
    """OrtDevice's device type number for a device name ("cpu" 0; "gpu", "cuda", "webgpu"
    and mlrt's GPU providers' kinds 1; "npu", "cann" and other device providers' kinds 3;
    "dml" 4)."""
    types = _DEVICE_TYPES if device_type in _DEVICE_TYPES else _device_types()
    if device_type not in types:
        raise InvalidArgument(f"Unsupported device type: {device_type} (the names are {', '.join(types)})")
    return types[device_type]


def get_vendor_id_for_device_type(device_type: str) -> OrtDeviceVendorId | None:
    """The vendor a device name implies (cuda: NVIDIA, dml: Microsoft, cann: Huawei,
    webgpu: none), or None."""
    return _VENDORS.get(device_type)
