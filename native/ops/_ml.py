"""What the traditional-ML operators (domain ai.onnx.ml) share.

Three kinds of operator live in this domain:

* plain C kernels with a fixed parameter struct (Normalizer, Binarizer,
  ArrayFeatureExtractor, FeatureVectorizer): `_MlOp`, planned like any other op;
* numeric operators whose C kernel also needs arrays made from the attributes
  (tree tables, coefficients, support vectors, per-feature offsets...): `_MlTableOp`.
  Python flattens the attributes once into a few arrays ("tables") and calls the C
  kernel with them appended after the node's own inputs.  The framework has no way
  yet to hand a planned kernel constant inputs that are not graph values, so these
  run on the host (`run_host`, node by node) and call their kernel through
  `executor.run_eager`.  The kernels already take the layout a planned op would
  get: when an `Op.constants()` hook exists (arrays appended to the kernel inputs,
  held by the plan like initializers), dropping `host = True` is all it takes;
* string- and map-shaped operators (LabelEncoder, CategoryMapper, ZipMap,
  DictVectorizer, string OneHotEncoder): `_MlHostOp`, pure Python.

Conventions shared with the C side (native/kernels/ml_*.h): post transforms are
numbered NONE 0, LOGISTIC 1, SOFTMAX 2, SOFTMAX_ZERO 3, PROBIT 4; feature matrices
are [N, F] (a 1-D X is one row, N = 1); scores are float32.
Where onnx.reference and onnxruntime disagree, these ops follow onnxruntime (the
runtime converted models are validated against) and say so in their docstring.
"""

from __future__ import annotations

import numpy as np

from ..._errors import InvalidArgument
from ._base import Info, Launch, Op
from ._host import _HostOp

ML_DOMAIN = "ai.onnx.ml"
TRANSFORMS = {"NONE": 0, "LOGISTIC": 1, "SOFTMAX": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}
SVM_KERNELS = {"LINEAR": 0, "POLY": 1, "RBF": 2, "SIGMOID": 3}
FEATURE_TYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


class _MlOp(Op):
    """An ai.onnx.ml operator with an ordinary (planned) C kernel."""

    domain = ML_DOMAIN
    tolerance = (1e-5, 1e-6)

    def features(self, inputs, index: int = 0, types=FEATURE_TYPES) -> Info:
        x = self.need(inputs, index)
        if np.dtype(x.dtype) not in types:
            raise self.fail(f"input {index} must be one of {', '.join(t.name for t in types)}, got {np.dtype(x.dtype).name}")
        return x


class _MlHostOp(_HostOp):
    """An ai.onnx.ml operator run in Python (strings, maps, sequences of maps)."""

    domain = ML_DOMAIN

    def transform(self) -> int:
        name = self.a.post_transform
        if name not in TRANSFORMS:
            raise self.fail(f"post_transform must be one of {', '.join(TRANSFORMS)}, got {name!r}")
        return TRANSFORMS[name]

    def numbers(self, name: str, dtype=np.float64) -> np.ndarray | None:
        """A list attribute (or its `<name>_as_tensor` twin) as a 1-D array; None if absent."""
        tensor = getattr(self.a, name + "_as_tensor", None)
        value = getattr(self.a, name)
        if tensor is not None and value is not None and len(value):
            raise self.fail(f"'{name}' and '{name}_as_tensor' are both set")
        if tensor is not None:
            return np.asarray(tensor).reshape(-1).astype(dtype)
        if value is None:
            return None
        return np.asarray(value, dtype=dtype).reshape(-1)

    def matrix(self, values, index: int = 0, types=FEATURE_TYPES) -> np.ndarray:
        """The feature input as an [N, F] array (a 1-D input is one row)."""
        x = self.tensor(values, index, "X")
        if x.dtype not in types:
            raise self.bad(f"X must be one of {', '.join(t.name for t in types)}, got {x.dtype.name}")
        if x.ndim == 1:
            return x.reshape(1, -1)
        if x.ndim != 2:
            raise self.bad(f"X must be [N, F] or [F], got shape {list(x.shape)}")
        return x


class _KernelCall:
    """One call of an op's C kernel on explicit arrays, in the form run_eager takes."""

    def __init__(self, op: Op, kernel: str, struct: str | None, params: dict | None, outputs: list[Info]):
        self.where, self.domain, self.opset, self.name = op.where, op.domain, op.opset, op.name
        self.kernel, self.params = kernel, struct
        self._params, self._outputs = params, outputs

    def infer(self, inputs):
        return self._outputs

    def launch(self, inputs, outputs):
        return Launch(self.kernel, self._params)


class _MlTableOp(_MlHostOp):
    """A numeric ai.onnx.ml operator whose C kernel reads X plus constant tables.

    Subclasses build the tables once (`make_tables`), say what the kernel returns
    for a given X (`kernel_outputs`) and with which parameters (`kernel_params`), and
    may post-process the kernel's outputs (`finish`, e.g. class indices -> strings)."""

    kernel = None  # run_host calls the C kernel named `kernel_name` (default: the op type)
    kernel_name: str | None = None
    tolerance = (1e-5, 1e-5)

    def __init__(self, node, opset):
        super().__init__(node, opset)
        # built once, when the session is made: a malformed model fails at load time
        self.tables = [np.ascontiguousarray(t) for t in self.make_tables()]

    # -- to override ---------------------------------------------------------------
    def make_tables(self) -> list[np.ndarray]:
        raise NotImplementedError

    def kernel_outputs(self, x: np.ndarray) -> list[Info]:
        raise NotImplementedError

    def kernel_params(self, x: np.ndarray) -> dict | None:
        return None

    def finish(self, outputs: list, x: np.ndarray) -> list:
        return outputs

    # -- running ---------------------------------------------------------------------
    def run_kernel(self, x: np.ndarray, runtime, tables: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """The C kernel's outputs for X followed by `tables` (default: all of self.tables)."""
        from ..executor import run_eager  # the executor imports the ops, not the reverse

        tables = self.tables if tables is None else tables
        call = _KernelCall(self, self.kernel_name or self.op_type, self.params, self.kernel_params(x),
                           self.kernel_outputs(x))
        pool = getattr(getattr(runtime, "program", None), "pool", None)
        return run_eager(call, [x, *tables], pool)

    def run_host(self, values, runtime):
        x = self.matrix(values)
        return self.finish(self.run_kernel(x, runtime), x)


def class_labels(op: _MlHostOp, ints_name: str, strings_name: str) -> tuple[np.ndarray | None, list | None]:
    """(int64 labels, None) or (None, string labels) from a classifier's attributes."""
    ints, strs = getattr(op.a, ints_name), getattr(op.a, strings_name)
    if ints is not None and len(ints) and strs is not None and len(strs):
        raise op.fail(f"only one of '{ints_name}' and '{strings_name}' may be set")
    if strs is not None and len(strs):
        return None, list(strs)
    if ints is not None and len(ints):
        return np.asarray(ints, dtype=np.int64), None
    raise op.fail(f"one of '{ints_name}' and '{strings_name}' is required")


def label_table(ints: np.ndarray | None, strs: list | None) -> np.ndarray:
    """What the C kernels write as labels: the int64 labels, or class indexes for strings."""
    return ints if ints is not None else np.arange(len(strs), dtype=np.int64)


def string_labels(indexes: np.ndarray, strs: list, op: _MlHostOp) -> np.ndarray:
    """Class indexes -> an object array of the string labels."""
    table = np.empty(len(strs), dtype=object)
    table[:] = strs
    if indexes.size and (indexes.min() < 0 or indexes.max() >= len(strs)):
        raise InvalidArgument(f"{op.where}: a class index is outside the {len(strs)} class labels")
    return table[indexes]


def svm_kernel_fields(op: _MlHostOp) -> dict:
    """kernel_type and kernel_params ([gamma, coef0, degree], zeros when absent) as struct fields."""
    kind = str(op.a.kernel_type).upper()
    if kind not in SVM_KERNELS:
        raise op.fail(f"kernel_type must be one of {', '.join(SVM_KERNELS)}, got {op.a.kernel_type!r}")
    kp = list(op.a.kernel_params or []) + [0.0, 0.0, 0.0]
    return {"kernel_type": SVM_KERNELS[kind], "gamma": float(kp[0]), "coef0": float(kp[1]),
            "degree": float(int(kp[2]))}


# -- tree ensembles ----------------------------------------------------------------------

LEGACY_MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5,
                "LEAF": 7}
AGGREGATES = {"SUM": 0, "AVERAGE": 1, "MIN": 2, "MAX": 3}
_MEMBER, _LEAF, _MISSING_TRUE = 6, 7, 16


class TreeTables:
    """Trees flattened for the C walk (native/kernels/ml_tree.h): node records
    [kind, feature, true child, false child, a, b], thresholds, roots, the leaves'
    (target, weight) pairs and the sorted members of set-membership nodes."""

    def __init__(self, nodes, thresholds, roots, targets, weights, members=None):
        self.nodes = np.ascontiguousarray(nodes, dtype=np.int64).reshape(-1, 6)
        self.thresholds = np.ascontiguousarray(thresholds, dtype=np.float64)
        self.roots = np.ascontiguousarray(roots, dtype=np.int64)
        self.targets = np.ascontiguousarray(targets, dtype=np.int64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.members = np.ascontiguousarray(members if members is not None else [], dtype=np.float64)

    def arrays(self, base: np.ndarray, labels: np.ndarray) -> list[np.ndarray]:
        return [self.nodes, self.thresholds, self.roots, self.targets, self.weights, self.members,
                np.ascontiguousarray(base, dtype=np.float64), np.ascontiguousarray(labels, dtype=np.int64)]


def _ints(op, name: str) -> np.ndarray:
    value = getattr(op.a, name)
    return np.asarray(value if value is not None else [], dtype=np.int64).reshape(-1)


def legacy_trees(op: _MlHostOp, prefix: str) -> TreeTables:
    """TreeEnsembleRegressor / TreeEnsembleClassifier (opsets 1, 3) attributes -> tables;
    `prefix` names the leaf weights ("target" or "class").  Nodes are found by
    (tree id, node id); a tree's root is its first node in the list; weights on nodes
    that are not leaves are ignored (old converters wrote some), as onnxruntime does."""
    tree_ids, node_ids = _ints(op, "nodes_treeids"), _ints(op, "nodes_nodeids")
    features, true_ids, false_ids = _ints(op, "nodes_featureids"), _ints(op, "nodes_truenodeids"), _ints(op, "nodes_falsenodeids")
    modes = list(op.a.nodes_modes or [])
    m = len(tree_ids)
    for name, arr in (("nodes_nodeids", node_ids), ("nodes_featureids", features), ("nodes_modes", modes),
                      ("nodes_truenodeids", true_ids), ("nodes_falsenodeids", false_ids)):
        if len(arr) != m:
            raise op.fail(f"{name} has {len(arr)} values for {m} nodes")
    values = op.numbers("nodes_values")
    if values is None or (values.size == 0 and all(md == "LEAF" for md in modes)):
        values = np.zeros(m)
    if values.size != m:
        raise op.fail(f"nodes_values has {values.size} values for {m} nodes")
    missing = _ints(op, "nodes_missing_value_tracks_true")
    if missing.size > m:
        raise op.fail(f"nodes_missing_value_tracks_true has {missing.size} values for {m} nodes")
    missing = np.concatenate([missing, np.zeros(m - missing.size, np.int64)])
    kinds = np.empty(m, np.int64)
    for i, md in enumerate(modes):
        if md not in LEGACY_MODES:
            raise op.fail(f"node {i}: unknown mode {md!r}")
        kinds[i] = LEGACY_MODES[md]
    index: dict = {}
    roots: dict = {}
    for i, key in enumerate(zip(tree_ids.tolist(), node_ids.tolist())):
        if key in index:
            raise op.fail(f"node {key[1]} of tree {key[0]} appears twice")
        index[key] = i
        roots.setdefault(key[0], i)
    nodes = np.zeros((m, 6), np.int64)
    nodes[:, 0] = kinds | np.where(missing == 1, _MISSING_TRUE, 0)
    nodes[:, 1] = features
    for i in np.flatnonzero(kinds != _LEAF).tolist():
        tid = int(tree_ids[i])
        for col, ids in ((2, true_ids), (3, false_ids)):
            child = index.get((tid, int(ids[i])))
            if child is None or child == i:
                raise op.fail(f"node {node_ids[i]} of tree {tid}: child {ids[i]} is not another node of the tree")
            nodes[i, col] = child
    w_ids, w_nodes, w_trees = _ints(op, f"{prefix}_ids"), _ints(op, f"{prefix}_nodeids"), _ints(op, f"{prefix}_treeids")
    w_values = op.numbers(f"{prefix}_weights")
    w_values = np.zeros(0) if w_values is None else w_values
    if not len(w_ids) == len(w_nodes) == len(w_trees) == len(w_values):
        raise op.fail(f"{prefix}_ids, {prefix}_nodeids, {prefix}_treeids and {prefix}_weights differ in length")
    leaf_of = np.empty(len(w_ids), np.int64)
    for k, key in enumerate(zip(w_trees.tolist(), w_nodes.tolist())):
        node = index.get(key)
        if node is None:
            raise op.fail(f"{prefix} weight {k} names node {key[1]} of tree {key[0]}, which does not exist")
        leaf_of[k] = node if kinds[node] == _LEAF else -1
    keep = np.flatnonzero(leaf_of >= 0)
    order = keep[np.argsort(leaf_of[keep], kind="stable")]
    sorted_leaves = leaf_of[order]
    leaves, first, count = np.unique(sorted_leaves, return_index=True, return_counts=True)
    nodes[leaves, 4] = first
    nodes[leaves, 5] = count
    return TreeTables(nodes, values, list(roots.values()), w_ids[order], w_values[order])


def v5_trees(op: _MlHostOp) -> TreeTables:
    """TreeEnsemble (opset 5) attributes -> tables: its leaves become node records after
    the M branch nodes; set members are read in node order, each set ended by a NaN."""
    features = _ints(op, "nodes_featureids")
    m = features.size
    modes = np.asarray(op.a.nodes_modes if op.a.nodes_modes is not None else [], dtype=np.int64).reshape(-1)
    splits = np.asarray(op.a.nodes_splits if op.a.nodes_splits is not None else [], dtype=np.float64).reshape(-1)
    t_ids, f_ids = _ints(op, "nodes_truenodeids"), _ints(op, "nodes_falsenodeids")
    t_leaf, f_leaf = _ints(op, "nodes_trueleafs"), _ints(op, "nodes_falseleafs")
    missing = _ints(op, "nodes_missing_value_tracks_true")
    missing = missing if missing.size else np.zeros(m, np.int64)
    for name, arr in (("nodes_modes", modes), ("nodes_splits", splits), ("nodes_truenodeids", t_ids),
                      ("nodes_falsenodeids", f_ids), ("nodes_trueleafs", t_leaf), ("nodes_falseleafs", f_leaf),
                      ("nodes_missing_value_tracks_true", missing)):
        if arr.size != m:
            raise op.fail(f"{name} has {arr.size} values for {m} nodes")
    targets = _ints(op, "leaf_targetids")
    weights = np.asarray(op.a.leaf_weights if op.a.leaf_weights is not None else [], dtype=np.float64).reshape(-1)
    n_leaves = weights.size
    if targets.size != n_leaves:
        raise op.fail(f"leaf_targetids has {targets.size} values for {n_leaves} leaf weights")
    if ((modes < 0) | (modes > _MEMBER)).any():
        raise op.fail(f"nodes_modes must be 0..6, got {sorted(set(modes.tolist()))}")
    nodes = np.zeros((m + n_leaves, 6), np.int64)
    nodes[:m, 0] = modes | np.where(missing == 1, _MISSING_TRUE, 0)
    nodes[:m, 1] = features
    for col, ids, leaf in ((2, t_ids, t_leaf), (3, f_ids, f_leaf)):
        bad = np.where(leaf != 0, (ids < 0) | (ids >= n_leaves), (ids < 0) | (ids >= m))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise op.fail(f"node {i}: child {ids[i]} is not a {'leaf' if leaf[i] else 'node'} index")
        nodes[:m, col] = np.where(leaf != 0, m + ids, ids)
    nodes[m:, 0] = _LEAF
    nodes[m:, 4] = np.arange(n_leaves)
    nodes[m:, 5] = 1
    members = []
    member_nodes = np.flatnonzero(modes == _MEMBER)
    if member_nodes.size:
        if op.a.membership_values is None:
            raise op.fail("set membership nodes need 'membership_values'")
        flat = np.asarray(op.a.membership_values, dtype=np.float64).reshape(-1)
        ends = np.flatnonzero(np.isnan(flat))
        if ends.size < member_nodes.size:
            raise op.fail(f"membership_values holds {ends.size} NaN-ended sets for {member_nodes.size} membership nodes")
        start = 0
        for node, end in zip(member_nodes.tolist(), ends.tolist()):
            group = np.unique(flat[start:end])
            nodes[node, 4], nodes[node, 5] = len(members), group.size
            members.extend(group.tolist())
            start = end + 1
    roots = _ints(op, "tree_roots")
    if ((roots < 0) | (roots >= max(m, 1))).any() or (m == 0 and roots.size):
        raise op.fail(f"tree_roots must be node indexes below {m}")
    thresholds = np.concatenate([splits, np.zeros(n_leaves)])
    return TreeTables(nodes, thresholds, roots, targets, weights, members)
