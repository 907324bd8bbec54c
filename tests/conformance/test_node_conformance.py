"""All ONNX node conformance cases through mlrt.backend on the CPU provider: the cases
that fail must be exactly those listed in cpu.skip, each with its reason."""

from node_cases import disagreements, read_skips, read_random, read_undefined, run_all


def test_node_conformance_cpu(capsys):
    passed, total, failures = run_all(providers=["CPUExecutionProvider"], undefined=read_undefined("cpu"),
                                      random=read_random("cpu"))
    with capsys.disabled():
        print(f"\nnode conformance on the CPU: {passed}/{total} cases pass; cpu.skip lists {len(read_skips('cpu'))}")
    assert total >= 1800, f"only {total} cases collected"
    problems = disagreements("cpu", failures)
    assert not problems, "\n".join(problems)
