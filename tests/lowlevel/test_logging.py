"""Logging through Python's `logging` ("mlrt" logger): onnxruntime's severities, the
default logger's (set_default_logger_severity), a session's and a run's."""

import logging

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt.lowlevel as ml

LOG = logging.getLogger("mlrt")


@pytest.fixture(autouse=True)
def logger_level(caplog):
    """The handler takes everything; the "mlrt" logger starts at WARNING and is put back."""
    before = LOG.level
    caplog.set_level(logging.DEBUG)  # (the root logger and caplog's handler)
    LOG.setLevel(logging.WARNING)
    yield
    LOG.setLevel(before)


def model():
    """y = Shout(x) + x, Shout a custom operator logging one message of each severity."""
    nodes = [helper.make_node("Shout", ["x"], ["s"], domain="com.example", name="shout"),
             helper.make_node("Add", ["s", "x"], ["y"], name="add")]
    g = helper.make_graph(nodes, "logging", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                               helper.make_opsetid("com.example", 1)]).SerializeToString()


def shout(x):
    for level in (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL):
        LOG.log(level, "shout at %s", logging.getLevelName(level))
    return x


def session(severity=None):
    so = ml.SessionOptions()
    if severity is not None:
        so.log_severity_level = severity
    so.register_custom_op("com.example", "Shout", shout)
    return ml.InferenceSession(model(), so)


def shouted(caplog) -> list[str]:
    return [r.levelname for r in caplog.records if r.getMessage().startswith("shout at")]


def run(sess, caplog, run_severity=None):
    caplog.clear()
    ro = None
    if run_severity is not None:
        ro = ml.RunOptions()
        ro.log_severity_level = run_severity
    sess.run(None, {"x": np.ones(2, np.float32)}, ro)
    return shouted(caplog)


ALL = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def test_defaults_are_onnxruntimes():
    assert ml.SessionOptions().log_severity_level == -1
    assert ml.RunOptions().log_severity_level == -1


def test_default_severity_follows_the_logger(caplog):
    sess = session()
    assert run(sess, caplog) == ALL[2:]
    ml.set_default_logger_severity(3)
    assert LOG.level == logging.ERROR
    assert run(sess, caplog) == ALL[3:]
    ml.set_default_logger_severity(0)
    assert run(sess, caplog) == ALL


@pytest.mark.parametrize("severity", [0, 1, 2, 3, 4])
def test_session_severity_filters_its_messages(caplog, severity):
    sess = session(severity)
    assert run(sess, caplog) == ALL[severity:]  # (verbose and info too: the session's level rules)


def test_run_severity_overrides_the_sessions(caplog):
    sess = session(4)
    assert run(sess, caplog, 0) == ALL
    assert run(sess, caplog, 3) == ALL[3:]
    assert run(sess, caplog, -1) == ALL[4:]  # -1: the session's
    assert run(sess, caplog) == ALL[4:]


def test_severity_holds_only_inside_the_session(caplog):
    session(0)
    caplog.clear()
    LOG.info("outside")
    LOG.warning("outside warning")
    assert [r.getMessage() for r in caplog.records if r.name == "mlrt"] == ["outside warning"]


def test_session_messages(caplog):
    so = ml.SessionOptions()
    so.log_severity_level = 0
    so.logid = "tagged"
    so.register_custom_op("com.example", "Shout", lambda x: x)
    caplog.clear()
    sess = ml.InferenceSession(model(), so)
    messages = [r.getMessage() for r in caplog.records if r.name == "mlrt"]
    assert any(m.startswith("[tagged] session ready: 2 node(s) on CPUExecutionProvider; custom operators "
                            "com.example::Shout") for m in messages), messages
    assert "[tagged] node 'shout' (Shout) runs on CPUExecutionProvider" in messages
    ro = ml.RunOptions()
    ro.run_tag = "first"
    caplog.clear()
    sess.run(None, {"x": np.ones(2, np.float32)}, ro)
    messages = [r.getMessage() for r in caplog.records if r.name == "mlrt"]
    assert "[tagged] run 'first': 1 input(s), output(s) y" in messages, messages


def test_quiet_session_creation(caplog):
    session(3)
    assert not [r for r in caplog.records if r.name == "mlrt" and r.levelno < logging.ERROR]


@pytest.mark.parametrize("value", [5, -2, "2", 1.5])
def test_bad_severity_is_refused(value):
    with pytest.raises(ml.InvalidArgument, match="log_severity_level"):
        ml.SessionOptions().log_severity_level = value
    with pytest.raises(ml.InvalidArgument, match="log_severity_level"):
        ml.RunOptions().log_severity_level = value
    with pytest.raises(ml.InvalidArgument):
        ml.set_default_logger_severity(value)


def test_logging_disable_still_wins(caplog):
    sess = session(0)
    logging.disable(logging.CRITICAL)
    try:
        assert run(sess, caplog) == []
    finally:
        logging.disable(logging.NOTSET)
