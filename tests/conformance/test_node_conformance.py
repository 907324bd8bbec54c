"""All ONNX node conformance cases through mlrt.backend; the pass count may not
drop below the recorded floor (raise FLOOR as coverage grows)."""

from pathlib import Path

from node_cases import run_all

FLOOR = int((Path(__file__).parent / "floor.txt").read_text().split()[0])


def test_node_conformance_floor(capsys):
    passed, total, failures = run_all()
    with capsys.disabled():
        print(f"\nnode conformance: {passed}/{total} cases pass (floor {FLOOR})")
    assert total >= 1800, f"only {total} cases collected"
    assert passed >= FLOOR, f"{passed} passed, below the floor of {FLOOR}; newly failing examples: " + \
        ", ".join(sorted(failures)[:20])
