"""egress_nodes with a selector that matches no node (issue 13): refused with the same finding and zero writes on a
fresh cluster and on one whose nodes already carry the egress-assignable label (where it used to remove them)."""

from twin.fixture import kube_writes

import _prepare as prepare

NO_SUCH = {'node-role.kubernetes.io/egres': ''}
CIDR = '10.20.0.0/24'


def _labelled(twin):
    return sorted(node.metadata.name for node in twin.core_v1().list_node().items
                  if prepare.LABEL in (node.metadata.labels or {}))


def _refused(twin, run_module, check=False):
    twin.reset_kube_requests()
    result = run_module('egress_nodes', {'selector': NO_SUCH, 'cidr': CIDR, 'wait_sleep': 1}, check=check)
    assert result.get('failed'), result
    assert [item['id'] for item in result['findings']] == ['egress_nodes_none_selected'], result
    assert 'matches none of the 6 nodes' in result['msg'] and 'node-role.kubernetes.io/egres' in result['msg']
    assert kube_writes(twin) == 0
    return result


def test_fresh_cluster_refuses_a_selector_matching_no_node(twin, run_module):
    _refused(twin, run_module)
    _refused(twin, run_module, check=True)


def test_enabled_cluster_refuses_it_the_same_way_and_keeps_the_labels(twin, run_module):
    twin.core_v1().patch_node('ocp1-worker-0', {'metadata': {'labels': {prepare.LABEL: ''}}})
    _refused(twin, run_module)
    assert _labelled(twin) == ['ocp1-worker-0']
