"""VideoSource over OpenCV's VideoCapture, and evaluate_stream over it: a video
written here with OpenCV's VideoWriter is read back frame by frame with timestamps,
and a session evaluates every frame, in order, with decoding overlapped."""

import cv2
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

import mlrt
from mlrt.highlevel import LearningModel, LearningModelSession
from mlrt.media import BitmapPixelFormat, VideoFrame, VideoSource

FRAMES, W, H, FPS = 24, 64, 48, 12.0


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    path = tmp_path_factory.mktemp("video") / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (W, H))
    assert writer.isOpened(), "OpenCV cannot write MJPG AVI here"
    for i in range(FRAMES):
        frame = np.full((H, W, 3), 0, np.uint8)
        frame[:, :, 1] = i * 10  # frame i is green level 10 i: identifies it after decoding
        writer.write(frame)
    writer.release()
    return path


def test_video_source_reads_every_frame_with_timestamps(video):
    with VideoSource(video) as source:
        assert (source.width, source.height, source.frame_count) == (W, H, FRAMES)
        assert source.fps == pytest.approx(FPS)
        frames = list(source)
    assert len(frames) == FRAMES
    for i, f in enumerate(frames):
        assert f.pixel_format is BitmapPixelFormat.BGR8 and (f.width, f.height) == (W, H)
        assert abs(int(np.median(f.to_numpy()[:, :, 1])) - i * 10) <= 3
        assert f.timestamp == pytest.approx(i / FPS, abs=1e-3)
    assert len(list(VideoSource(video, max_frames=5))) == 5


def test_video_source_errors(tmp_path):
    with pytest.raises(mlrt.InvalidArgument, match="does not exist"):
        VideoSource(tmp_path / "none.mp4")
    (tmp_path / "bad.avi").write_bytes(b"not a video")
    with pytest.raises(mlrt.InvalidArgument, match="cannot open"):
        VideoSource(tmp_path / "bad.avi")
    with pytest.raises(mlrt.InvalidArgument, match="expected a path"):
        VideoSource(1.5)


def mean_model() -> bytes:
    """The mean green level of a 1x3x32x32 image (BGR, 0..255)."""
    x = helper.make_tensor_value_info("frame", TP.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("green", TP.FLOAT, [1])
    nodes = [helper.make_node("Slice", ["frame", "s", "e", "a"], ["g"]),
             helper.make_node("ReduceMean", ["g"], ["m"], keepdims=0),
             helper.make_node("Reshape", ["m", "one"], ["green"])]
    inits = [helper.make_tensor("s", TP.INT64, [1], [1]), helper.make_tensor("e", TP.INT64, [1], [2]),
             helper.make_tensor("a", TP.INT64, [1], [1]), helper.make_tensor("one", TP.INT64, [1], [1])]
    m = helper.make_model(helper.make_graph(nodes, "mean", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)])
    return m.SerializeToString()


@pytest.mark.parametrize("depth", [1, 3])
def test_evaluate_stream_in_order(video, depth):
    session = LearningModelSession(LearningModel.load(mean_model()))
    seen = []
    for frame, result in session.evaluate_stream(VideoSource(video), "FRAME", depth=depth):
        seen.append((frame.timestamp, float(result.outputs["green"][0])))
    assert len(seen) == FRAMES
    assert [t for t, _ in seen] == sorted(t for t, _ in seen)
    for i, (_, green) in enumerate(seen):
        assert abs(green - i * 10) <= 3


def test_evaluate_stream_stops_early_and_reports_errors(video):
    session = LearningModelSession(LearningModel.load(mean_model()))
    stream = session.evaluate_stream(VideoSource(video), "frame")
    first = [next(stream) for _ in range(3)]
    stream.close()  # the decoding thread stops
    assert len(first) == 3
    frames = [VideoFrame.empty(40, 40, BitmapPixelFormat.BGR8), "not a frame"]
    with pytest.raises(mlrt.InvalidArgument):
        list(session.evaluate_stream(frames, "frame"))
    with pytest.raises(mlrt.InvalidArgument, match="not an input or output"):
        list(session.evaluate_stream(frames, "nope"))
