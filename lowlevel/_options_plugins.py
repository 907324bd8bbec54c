"""SessionOptions' plugin execution-provider calls (add_provider, selection policies,
EPContext read functions): mlrt's providers are built in, so they are refused with
NotImplemented saying why, or answered as onnxruntime answers for none.  SessionOptions
(_options.py) takes them from PluginProviderOptions."""

from __future__ import annotations

from .._errors import NotImplemented

_PLUGIN_EPS = ("mlrt's execution providers are built in (CPU, OpenCL) and chosen with the providers "
               "argument of InferenceSession; it has no plugin execution providers or OrtEpDevice selection")


class PluginProviderOptions:
    """SessionOptions' plugin-provider calls: mixed into SessionOptions."""

    def has_providers(self) -> bool:
        """False: providers are never set on mlrt's SessionOptions (add_provider and the
        selection policies are not supported); InferenceSession's providers argument
        names them."""
        return False

    def add_provider(self, provider_name: str, provider_options: dict) -> None:
        raise NotImplemented(f"SessionOptions.add_provider('{provider_name}'): pass providers=[...] to "
                             f"InferenceSession instead ({_PLUGIN_EPS})")

    def add_provider_for_devices(self, ep_devices, provider_options: dict) -> None:
        raise NotImplemented(f"SessionOptions.add_provider_for_devices: {_PLUGIN_EPS}")

    def set_provider_selection_policy(self, policy) -> None:
        raise NotImplemented(f"SessionOptions.set_provider_selection_policy: {_PLUGIN_EPS}")

    def set_provider_selection_policy_delegate(self, delegate) -> None:
        raise NotImplemented(f"SessionOptions.set_provider_selection_policy_delegate: {_PLUGIN_EPS}")

    def set_ep_context_data_read_func(self, read_func, max_data_size: int) -> None:
        raise NotImplemented("SessionOptions.set_ep_context_data_read_func: mlrt does not load EPContext "
                             "(precompiled) models")

    def clear_ep_context_data_read_func(self) -> None:
        """Nothing to clear: mlrt takes no EPContext read function."""


__all__ = ["PluginProviderOptions"]
