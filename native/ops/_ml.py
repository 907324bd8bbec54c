"""What the traditional-ML operators (domain ai.onnx.ml) share.

Three kinds of operator live in this domain:

* plain C kernels with a fixed parameter struct (Normalizer, Binarizer,
  ArrayFeatureExtractor, FeatureVectorizer): `_MlOp`;
* numeric operators whose C kernel also reads arrays made from the attributes
  (tree tables, coefficients, support vectors, per-feature offsets...): `_MlTableOp`.
  Python flattens the attributes once, when the session is made, into a few arrays
  ("tables") that the kernel receives after the node's own inputs (`Launch.extra`),
  so these are planned like any other op.  A classifier with string labels has its
  kernel write class indexes, which a plan names after its run (`label_strings`;
  node by node, run_host names them);
* lookups from strings (OneHotEncoder, LabelEncoder and CategoryMapper to numbers):
  C kernels (kernels/ml_string.c) on tables of sorted keys made here (`string_keys`),
  reading string tensors as UTF-32 (`Op.takes`), so a pipeline's per-row string
  preprocessing runs in its native plan; what they refuse (string outputs, other
  types) runs in their run_host;
* map- and sequence-shaped operators (ZipMap, DictVectorizer): `_MlHostOp`, pure Python.

Conventions shared with the C side (native/kernels/ml_*.h): post transforms, SVM
kernels, tree node modes and aggregates are the constants of those headers' enums
(Python maps the attribute strings to constant names); feature matrices are [N, F]
(a 1-D X is one row, N = 1); scores are float32.
Where onnx.reference and onnxruntime disagree, these ops follow the spec's text, and
onnxruntime where the spec leaves the case open (it is the runtime the scikit-learn,
XGBoost and LightGBM converters are checked against); each op's docstring says which.
"""

from __future__ import annotations

import numpy as np

from ..._errors import InvalidArgument
from .._lib import enum_value
from ._base import Info, Launch, Op
from ._host import _HostOp

ML_DOMAIN = "ai.onnx.ml"
# attribute strings -> the constants of kernels/ml_misc.h and ml_linear.h (the numbers live there)
TRANSFORMS = {"NONE": "MLRT_ML_TRANSFORM_NONE", "LOGISTIC": "MLRT_ML_TRANSFORM_LOGISTIC",
              "SOFTMAX": "MLRT_ML_TRANSFORM_SOFTMAX", "SOFTMAX_ZERO": "MLRT_ML_TRANSFORM_SOFTMAX_ZERO",
              "PROBIT": "MLRT_ML_TRANSFORM_PROBIT"}
SVM_KERNELS = {"LINEAR": "MLRT_ML_SVM_LINEAR", "POLY": "MLRT_ML_SVM_POLY", "RBF": "MLRT_ML_SVM_RBF",
               "SIGMOID": "MLRT_ML_SVM_SIGMOID"}
FEATURE_TYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


class _MlAttributes:
    """Attribute readers every ai.onnx.ml operator may use."""

    def transform(self) -> int:
        name = self.a.post_transform
        if name not in TRANSFORMS:
            raise self.fail(f"post_transform must be one of {', '.join(TRANSFORMS)}, got {name!r}")
        return enum_value(TRANSFORMS[name])

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


class _MlOp(_MlAttributes, Op):
    """An ai.onnx.ml operator with a C kernel."""

    domain = ML_DOMAIN
    tolerance = (1e-5, 1e-6)

    def features(self, inputs, index: int = 0, types=FEATURE_TYPES, ranks=None) -> Info:
        """Input `index`, checked against the element types and ranks the op takes."""
        x = self.need(inputs, index)
        if np.dtype(x.dtype) not in types:
            names = ", ".join(t.name for t in types)
            raise self.fail(f"input {index} must be one of {names}, got {np.dtype(x.dtype).name}")
        if ranks is not None and x.rank not in ranks:
            raise self.fail(f"input {index} must be [N, F] or [F], got shape {list(x.shape)}")
        return x


class _MlHostOp(_MlAttributes, _HostOp):
    """An ai.onnx.ml operator run in Python (strings, maps, sequences of maps)."""

    domain = ML_DOMAIN


def rows(x: Info) -> int:
    """N of an [N, F] or [F] feature input."""
    return 1 if x.rank == 1 else int(x.shape[0])


class _MlTableOp(_MlOp):
    """A numeric ai.onnx.ml operator whose C kernel reads X followed by constant tables.

    Subclasses build the tables once (`make_tables`, at load: a malformed model fails
    there), say what the kernel returns (`outputs_for`), with which parameters
    (`kernel_params`) and tables (`kernel_tables`, default all), and may turn the
    kernel's outputs into the op's (`finish`: class indexes -> string labels); an op
    that needs `finish` sets `self.host` and runs node by node."""

    tolerance = (1e-5, 1e-5)
    made_ahead = True
    ranks: tuple | None = (1, 2)  # X's accepted ranks (None: any)
    extra_types: tuple = ()  # X element types accepted besides FEATURE_TYPES

    def __init__(self, node, opset):
        super().__init__(node, opset)
        self.tables = [np.ascontiguousarray(t) for t in self.make_tables()]

    # -- to override ---------------------------------------------------------------
    def make_tables(self) -> list[np.ndarray]:
        raise NotImplementedError

    def outputs_for(self, x: Info) -> list[Info]:
        raise NotImplementedError

    def kernel_params(self, x: Info) -> dict | None:
        return None

    def kernel_tables(self, x: Info) -> list[np.ndarray]:
        return self.tables

    def finish(self, outputs: list) -> list:
        return outputs

    def label_strings(self) -> list | None:
        return getattr(self, "_strings", None)  # (the classifiers' string labels, by index)

    # -- the Op interface ------------------------------------------------------------
    def infer(self, inputs):
        return self.outputs_for(self.features(inputs, ranks=self.ranks))

    def launch(self, inputs, outputs):
        x = inputs[0]
        return Launch(self.op_type, self.kernel_params(x), extra=self.kernel_tables(x))

    def run_host(self, values, runtime):
        """The kernel run node by node, then `finish` (string labels); also the path for
        values a kernel cannot take (strings, sequences), which are refused here."""
        from ..plan.eager import run_eager  # the planner imports the ops, not the reverse

        x = values[0] if values else None
        if not isinstance(x, np.ndarray) or x.dtype not in FEATURE_TYPES + self.extra_types:
            got = x.dtype.name if isinstance(x, np.ndarray) else type(x).__name__
            raise InvalidArgument(f"{self.where}: X must be a numeric tensor, got {got}")
        pool = runtime.pool if runtime is not None else None
        return self.finish(run_eager(self, [x], pool))


# -- lookups of kernels/ml_string.c (OneHotEncoder, LabelEncoder, CategoryMapper) ------------

STRING_KINDS = "OUS"
LOOKUP_NUMBERS = (np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.float32), np.dtype(np.float64))


def is_strings(dtype) -> bool:
    return dtype is not None and np.dtype(dtype).kind in STRING_KINDS


def string_keys(strs) -> tuple[np.ndarray, np.ndarray] | None:
    """The keys of a string lookup (kernels/ml_string.h): each distinct string once, in
    code point order, as UTF-32 rows (uint32 [n, width]), and for each the index of its
    last occurrence in `strs` (a repeated key: the last wins).  None where a key ends in
    U+0000, which the rows cannot tell from its end (the table then stays on the host)."""
    strs = [str(v) for v in strs]
    if any(v.endswith("\0") for v in strs):
        return None
    if not strs:
        return np.zeros((0, 1), np.uint32), np.zeros(0, np.int64)
    u = np.array(strs, dtype=np.str_)
    order = np.argsort(u, kind="stable")
    ranked = u[order]
    last = np.append(ranked[1:] != ranked[:-1], True)  # the last of each run of equal keys
    keep = order[last]
    return np.ascontiguousarray(u[keep]).view(np.uint32).reshape(keep.size, -1), keep.astype(np.int64)


def int_keys(ints) -> tuple[np.ndarray, np.ndarray]:
    """int64 keys for the same lookups: distinct, ascending, each with the index of its
    last occurrence."""
    v = np.asarray(ints if ints is not None else [], dtype=np.int64).reshape(-1)
    order = np.argsort(v, kind="stable")
    ranked = v[order]
    last = np.append(ranked[1:] != ranked[:-1], True) if v.size else np.zeros(0, bool)
    return np.ascontiguousarray(ranked[last]), order[last].astype(np.int64)


def class_labels(op: Op, ints_name: str, strings_name: str) -> tuple[np.ndarray | None, list | None]:
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


def string_labels(indexes: np.ndarray, strs: list, op: Op) -> np.ndarray:
    """Class indexes -> an object array of the string labels."""
    table = np.empty(len(strs), dtype=object)
    table[:] = strs
    if indexes.size and (indexes.min() < 0 or indexes.max() >= len(strs)):
        raise InvalidArgument(f"{op.where}: a class index is outside the {len(strs)} class labels")
    return table[indexes]


def svm_kernel_fields(op: Op) -> dict:
    """kernel_type and kernel_params ([gamma, coef0, degree], zeros when absent) as struct fields."""
    kind = str(op.a.kernel_type).upper()
    if kind not in SVM_KERNELS:
        raise op.fail(f"kernel_type must be one of {', '.join(SVM_KERNELS)}, got {op.a.kernel_type!r}")
    kp = list(op.a.kernel_params or []) + [0.0, 0.0, 0.0]
    return {"kernel_type": enum_value(SVM_KERNELS[kind]), "gamma": float(kp[0]), "coef0": float(kp[1]),
            "degree": float(int(kp[2]))}


# -- tree ensembles ----------------------------------------------------------------------

# attribute strings (and TreeEnsemble's mode numbers) -> the constants of kernels/ml_tree.h
LEGACY_MODES = {"BRANCH_LEQ": "MLRT_ML_NODE_LEQ", "BRANCH_LT": "MLRT_ML_NODE_LT", "BRANCH_GTE": "MLRT_ML_NODE_GTE",
                "BRANCH_GT": "MLRT_ML_NODE_GT", "BRANCH_EQ": "MLRT_ML_NODE_EQ", "BRANCH_NEQ": "MLRT_ML_NODE_NEQ",
                "LEAF": "MLRT_ML_NODE_LEAF"}
V5_MODES = ("MLRT_ML_NODE_LEQ", "MLRT_ML_NODE_LT", "MLRT_ML_NODE_GTE", "MLRT_ML_NODE_GT", "MLRT_ML_NODE_EQ",
            "MLRT_ML_NODE_NEQ", "MLRT_ML_NODE_MEMBER")  # by nodes_modes number
AGGREGATES = {"SUM": "MLRT_ML_AGGREGATE_SUM", "AVERAGE": "MLRT_ML_AGGREGATE_AVERAGE", "MIN": "MLRT_ML_AGGREGATE_MIN",
              "MAX": "MLRT_ML_AGGREGATE_MAX"}


class TreeTables:
    """Trees flattened for the C walk (native/kernels/ml_tree.h): int32 node records
    [kind, feature, true child, false child] (a leaf: [LEAF, 0, first weight, count]),
    thresholds (a set-membership node: where its set starts in `members`), roots, the
    leaves' (target, weight) pairs, and the sets as [size, sorted members...]."""

    def __init__(self, op, nodes, thresholds, roots, targets, weights, members=None):
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1, 4)
        if nodes.shape[0] >= 2 ** 31 or len(weights) >= 2 ** 31 or (nodes.size and np.abs(nodes).max() >= 2 ** 31):
            raise op.fail("the trees have more than 2**31 nodes, weights or features")
        self.nodes = np.ascontiguousarray(nodes, dtype=np.int32)
        self.thresholds = np.ascontiguousarray(thresholds, dtype=np.float64)
        self.roots = np.ascontiguousarray(roots, dtype=np.int64)
        self.targets = np.ascontiguousarray(targets, dtype=np.int64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.members = np.ascontiguousarray(members if members is not None else [], dtype=np.float64)
        branches = nodes[nodes[:, 0] != enum_value("MLRT_ML_NODE_LEAF")]
        kinds = np.unique(branches[:, 0])
        # one comparison everywhere and no missing-value tracks: the kernel's faster walk
        self.same_mode = int(kinds[0]) if kinds.size == 1 and kinds[0] <= enum_value("MLRT_ML_NODE_NEQ") else -1
        # the kernel refuses a narrower X at once (else only a row reaching such a node would)
        self.features_read = int(branches[:, 1].max()) + 1 if branches.size else 0

    def arrays(self, base: np.ndarray, labels: np.ndarray) -> list[np.ndarray]:
        return [self.nodes, self.thresholds, self.roots, self.targets, self.weights, self.members,
                np.ascontiguousarray(base, dtype=np.float64), np.ascontiguousarray(labels, dtype=np.int64)]


def _ints(op, name: str) -> np.ndarray:
    value = getattr(op.a, name)
    return np.asarray(value if value is not None else [], dtype=np.int64).reshape(-1)


def _node_keys(op: Op, tree_ids, node_ids):
    """One int64 key per node, (tree id - lowest) * span + (node id - lowest), and a
    function from (tree, id) pairs to the key (-1 where an id is out of every tree's range)."""
    t0 = int(tree_ids.min()) if tree_ids.size else 0
    n0 = int(node_ids.min()) if node_ids.size else 0
    span = int(node_ids.max()) - n0 + 1 if node_ids.size else 1
    if tree_ids.size and int(tree_ids.max()) - t0 >= (1 << 62) // span:
        raise op.fail("nodes_treeids and nodes_nodeids span too wide a range")

    def key(trees, ids):
        ok = (ids >= n0) & (ids < n0 + span) & (trees >= t0)
        return np.where(ok, (trees - t0) * span + (ids - n0), -1)
    return key(tree_ids, node_ids), key


def legacy_trees(op: Op, prefix: str) -> TreeTables:
    """TreeEnsembleRegressor / TreeEnsembleClassifier (opsets 1, 3) attributes -> tables;
    `prefix` names the leaf weights ("target" or "class").  Nodes are found by
    (tree id, node id); a tree's root is its first node in the list; weights on nodes
    that are not leaves are ignored (old converters wrote some), as onnxruntime does."""
    tree_ids, node_ids = _ints(op, "nodes_treeids"), _ints(op, "nodes_nodeids")
    features = _ints(op, "nodes_featureids")
    true_ids, false_ids = _ints(op, "nodes_truenodeids"), _ints(op, "nodes_falsenodeids")
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
    codes = {md: LEGACY_MODES.get(md) for md in set(modes)}
    if None in codes.values():
        i = next(i for i, md in enumerate(modes) if codes[md] is None)
        raise op.fail(f"node {i}: unknown mode {modes[i]!r}")
    numbers = {md: enum_value(code) for md, code in codes.items()}
    kinds = np.fromiter(map(numbers.__getitem__, modes), np.int64, len(modes))
    # nodes by (tree id, node id): one int64 key each, looked up by binary search (a forest
    # holds thousands of nodes: no Python loop per node)
    keys, key_of = _node_keys(op, tree_ids, node_ids)
    by_key = np.argsort(keys, kind="stable")
    dup = np.flatnonzero(keys[by_key][1:] == keys[by_key][:-1])
    if dup.size:
        i = int(by_key[dup[0] + 1])
        raise op.fail(f"node {node_ids[i]} of tree {tree_ids[i]} appears twice")
    roots = np.unique(tree_ids, return_index=True)[1]
    roots.sort()  # each tree's first node, trees in order of first appearance

    def find(trees, ids):
        """Index of node (tree, id) for each pair, -1 where there is none."""
        want = key_of(trees, ids)
        if not m:
            return np.full(want.shape, -1, np.int64)
        at = np.minimum(np.searchsorted(keys, want, sorter=by_key), m - 1)
        return np.where((want >= 0) & (keys[by_key[at]] == want), by_key[at], -1)

    leaf, missing_true = enum_value("MLRT_ML_NODE_LEAF"), enum_value("MLRT_ML_NODE_MISSING_TRUE")
    nodes = np.zeros((m, 4), np.int64)
    nodes[:, 0] = kinds | np.where(missing == 1, missing_true, 0)
    nodes[:, 1] = features
    branch = np.flatnonzero(kinds != leaf)
    for col, ids in ((2, true_ids), (3, false_ids)):
        child = find(tree_ids[branch], ids[branch])
        bad = np.flatnonzero((child < 0) | (child == branch))
        if bad.size:
            i = int(branch[bad[0]])
            raise op.fail(f"node {node_ids[i]} of tree {tree_ids[i]}: child {ids[i]} is not another node of the tree")
        nodes[branch, col] = child
    w_ids, w_nodes, w_trees = _ints(op, f"{prefix}_ids"), _ints(op, f"{prefix}_nodeids"), _ints(op, f"{prefix}_treeids")
    w_values = op.numbers(f"{prefix}_weights")
    w_values = np.zeros(0) if w_values is None else w_values
    if not len(w_ids) == len(w_nodes) == len(w_trees) == len(w_values):
        raise op.fail(f"{prefix}_ids, {prefix}_nodeids, {prefix}_treeids and {prefix}_weights differ in length")
    found = find(w_trees, w_nodes)
    missing_node = np.flatnonzero(found < 0)
    if missing_node.size:
        k = int(missing_node[0])
        raise op.fail(f"{prefix} weight {k} names node {w_nodes[k]} of tree {w_trees[k]}, which does not exist")
    leaf_of = np.where(kinds[found] == leaf, found, -1) if found.size else found
    keep = np.flatnonzero(leaf_of >= 0)
    order = keep[np.argsort(leaf_of[keep], kind="stable")]
    sorted_leaves = leaf_of[order]
    leaves, first, count = np.unique(sorted_leaves, return_index=True, return_counts=True)
    nodes[kinds == leaf, 0] = leaf  # a leaf tracks no missing values
    nodes[kinds == leaf, 1:] = 0
    nodes[leaves, 2] = first
    nodes[leaves, 3] = count
    return TreeTables(op, nodes, values, roots.tolist(), w_ids[order], w_values[order])


def v5_trees(op: Op) -> TreeTables:
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
    if ((modes < 0) | (modes >= len(V5_MODES))).any():
        raise op.fail(f"nodes_modes must be 0..{len(V5_MODES) - 1}, got {sorted(set(modes.tolist()))}")
    modes = np.array([enum_value(c) for c in V5_MODES], np.int64)[modes]
    nodes = np.zeros((m + n_leaves, 4), np.int64)
    nodes[:m, 0] = modes | np.where(missing == 1, enum_value("MLRT_ML_NODE_MISSING_TRUE"), 0)
    nodes[:m, 1] = features
    for col, ids, leaf in ((2, t_ids, t_leaf), (3, f_ids, f_leaf)):
        bad = np.where(leaf != 0, (ids < 0) | (ids >= n_leaves), (ids < 0) | (ids >= m))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise op.fail(f"node {i}: child {ids[i]} is not a {'leaf' if leaf[i] else 'node'} index")
        nodes[:m, col] = np.where(leaf != 0, m + ids, ids)
    nodes[m:, 0] = enum_value("MLRT_ML_NODE_LEAF")
    nodes[m:, 2] = np.arange(n_leaves)
    nodes[m:, 3] = 1
    thresholds = np.concatenate([splits, np.zeros(n_leaves)])
    members = []
    member_nodes = np.flatnonzero(modes == enum_value("MLRT_ML_NODE_MEMBER"))
    if member_nodes.size:
        if op.a.membership_values is None:
            raise op.fail("set membership nodes need 'membership_values'")
        flat = np.asarray(op.a.membership_values, dtype=np.float64).reshape(-1)
        ends = np.flatnonzero(np.isnan(flat))
        if ends.size < member_nodes.size:
            raise op.fail(f"membership_values holds {ends.size} NaN-ended sets for "
                          f"{member_nodes.size} membership nodes")
        start = 0
        for node, end in zip(member_nodes.tolist(), ends.tolist()):
            group = np.unique(flat[start:end])
            thresholds[node] = len(members)
            members.extend([group.size, *group.tolist()])
            start = end + 1
    roots = _ints(op, "tree_roots")
    if ((roots < 0) | (roots >= max(m, 1))).any() or (m == 0 and roots.size):
        raise op.fail(f"tree_roots must be node indexes below {m}")
    return TreeTables(op, nodes, thresholds, roots, targets, weights, members)
