"""A two-node Ray cluster on loopback (a head node and a worker node, one CPU each,
each its own raylet, every server on 127.0.0.1) runs the image job with an actor on
each node; the results equal a plain loop over the low-level API.

The nodes are started with ray.cluster_utils.Cluster rather than two `ray start`
commands: Ray 2.x rewrites a node address of 127.0.0.1 to the machine's address (its
servers then listen on every interface) unless it runs in local-only mode, and in
that mode `ray start --address` refuses to add a node.  Cluster starts the same
processes (GCS, raylets, workers) a `ray start` does, at 127.0.0.1."""

import sys

import numpy as np
import pytest

import batch_data
from batch_data import image_job, loop_reference, ray_listeners, share_with_workers
from mlrt.highlevel import batch as B

ray = pytest.importorskip("ray", reason="Ray is the 'ray' extra (pip install 'mlrt[ray]'); CI installs it")
pa = pytest.importorskip("pyarrow", reason="pyarrow comes with ray[data]")


@pytest.fixture(scope="module")
def two_nodes():
    if ray.is_initialized():
        ray.shutdown()
    B.local_only()
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                            "object_store_memory": 100 << 20})
    cluster.add_node(num_cpus=1, object_store_memory=100 << 20)
    B.ray_init(cluster.address, log_to_driver=False)
    share_with_workers(ray, sys.modules[__name__])
    yield cluster
    ray.shutdown()
    cluster.shutdown()


class WhereRun(B.ImagePredictor):
    """Adds the node each batch ran on."""

    def __call__(self, batch):
        out = super().__call__(batch)  # (a pyarrow.Table in mlrt's output schema)
        return out.append_column("node", pa.array([ray.get_runtime_context().get_node_id()] * out.num_rows))


def test_two_node_cluster_on_loopback(two_nodes, tmp_path_factory, tmp_path):
    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) == 2 and {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
    model, paths = image_job(tmp_path_factory)
    dataset = B.ray_dataset(paths, 10).map_batches(WhereRun, fn_constructor_kwargs={"model": str(model)},
                                  compute=ray.data.ActorPoolStrategy(size=2), batch_size=10, num_cpus=1,
                                  batch_format="numpy")
    dataset.write_parquet(str(tmp_path / "out"))
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(200))
    assert set(got["node"]) == {n["NodeID"] for n in nodes}  # an actor on each node
    np.testing.assert_array_equal(got["prob"], loop_reference(model, paths, 10))
    beyond = [item for item in ray_listeners() if not batch_data.LOOPBACK.match(item[2][0])]
    assert not beyond, beyond
