import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # tests/oracle.py as `oracle`
sys.path.insert(0, str(HERE / "conformance"))  # node_cases
