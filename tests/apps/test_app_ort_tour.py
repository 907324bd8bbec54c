"""App 6: onnxruntime's documented Python API, walked through by ort_api_tour.py, gives
the same printed lines and arrays on onnxruntime and on mlrt."""


def test_ort_api_tour(run_app, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    ort, ours = run_app("ort_api_tour.py", models)
    assert any(line.startswith("optimized model files") for line in ort.lines)
    ours.assert_matches(ort)
