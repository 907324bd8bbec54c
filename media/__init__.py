"""mlrt.media: VideoFrame, pixel formats, image and video sources, tensorization
(specified in shared/HIGHLEVEL.md).

Not built yet: this package holds no API until the high-level issue lands.
"""

__all__: list[str] = []
