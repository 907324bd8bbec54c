"""mlrt.highlevel: the Windows ML-style model API (LearningModel, LearningModelSession,
LearningModelBinding, ...), specified in shared/HIGHLEVEL.md.

Not built yet: this package holds no API until the high-level issue lands.  Use
mlrt.lowlevel (the onnxruntime-compatible API) meanwhile.
"""

__all__: list[str] = []
