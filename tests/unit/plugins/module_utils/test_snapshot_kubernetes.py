"""The one Kubernetes snapshot reader (snapshot/kubernetes.py) against a fake transport: one key per kind, one list
request per kind, singletons picked from their list, and what a 404 / 403 means."""

import json
import threading
import urllib.parse

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import cluster
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from test_k8s import client_with, status_body  # pylint: disable=wrong-import-order

NOT_FOUND = (404, '404 page not found', {'content-type': 'text/plain'})
FORBIDDEN = (403, status_body(403, 'Forbidden', 'forbidden'))


def items(*names):
    return (200, json.dumps({'items': [{'metadata': {'name': name}} for name in names]}))


def paths(pool):
    return [urllib.parse.urlsplit(request['url']).path for request in pool.requests]


def test_one_key_per_kind_and_one_request_each_in_the_callers_order():
    k8s, pool = client_with(items('w0', 'w1'), items('w0-nns'), items('e1'))
    snapshot = kubernetes.read(k8s, ('nodes', 'nns', 'egressips'))
    assert sorted(snapshot) == ['egressips', 'nns', 'nodes', 'unreadable'] and snapshot['unreadable'] == {}
    assert [item['metadata']['name'] for item in snapshot['nodes']] == ['w0', 'w1']
    assert paths(pool) == ['/api/v1/nodes', '/apis/nmstate.io/v1beta1/nodenetworkstates', '/apis/k8s.ovn.org/v1/egressips']


def test_singletons_are_picked_from_their_list_and_namespaces_narrow_a_list():
    k8s, pool = client_with(items('other', 'cluster'), items('version'), items('t'))
    snapshot = kubernetes.read(k8s, ('infrastructure', 'cluster_version', 'tuneds'), namespaces={'tuneds': 'ns'})
    assert snapshot['infrastructure'] == {'metadata': {'name': 'cluster'}} and snapshot['cluster_version'] == {'metadata': {'name': 'version'}}
    assert paths(pool)[2] == '/apis/tuned.openshift.io/v1/namespaces/ns/tuneds'


def test_a_required_kind_not_served_fails_with_its_message():
    k8s = client_with(NOT_FOUND)[0]
    with pytest.raises(ModuleFailure) as failure:
        kubernetes.read(k8s, ('nncps',))
    assert 'install the Kubernetes NMState Operator' in failure.value.msg and failure.value.details['reason'] == 'api_not_found'


def test_optional_kinds_not_served_are_none_and_forbidden_ones_are_named():
    k8s = client_with(NOT_FOUND, FORBIDDEN)[0]
    snapshot = kubernetes.read(k8s, ('machinesets', 'nns'), optional=('machinesets', 'nns'), forbidden_ok=('nns',))
    assert snapshot['machinesets'] is None and 'nns' not in snapshot
    assert snapshot['unreadable'] == {'nodenetworkstates.nmstate.io': 'HTTP 403: the credentials may not list nodenetworkstates.nmstate.io'}


@pytest.mark.parametrize('answer, option', [(FORBIDDEN, 'optional'), (NOT_FOUND, 'forbidden_ok'), ((500, status_body(500, 'Oops', 'x')), 'both')])
def test_what_the_caller_did_not_allow_fails(answer, option):
    k8s = client_with(answer)[0]
    allowed = {'optional': {'optional': ('nns',)}, 'forbidden_ok': {'forbidden_ok': ('nns',)},
               'both': {'optional': ('nns',), 'forbidden_ok': ('nns',)}}[option]
    with pytest.raises(ModuleFailure):
        kubernetes.read(k8s, ('nns',), **allowed)


def test_preflight_reads_every_kind_once_and_only_the_nodes_are_required():
    kinds = [key for key in cluster.PREFLIGHT_KINDS if key != 'pods']
    answers = [items('w0')] + [FORBIDDEN if key == 'namespaces' else NOT_FOUND if key == 'nmstates' else items('cluster', 'version')
                               for key in kinds[1:]]
    k8s, pool = client_with(*answers)
    snapshot = cluster.read_cluster(k8s, skip=('pods',))
    assert len(pool.requests) == len(kinds)
    assert snapshot['nmstates'] is None and 'namespaces' not in snapshot
    assert snapshot['unreadable'] == {'namespaces': 'HTTP 403: the credentials may not list namespaces'}
    assert snapshot['infrastructure'] == {'metadata': {'name': 'cluster'}}
    k8s = client_with(FORBIDDEN)[0]
    with pytest.raises(ModuleFailure):
        cluster.read_cluster(k8s)


@pytest.mark.parametrize('answer, expected', [(NOT_FOUND, None), (FORBIDDEN, None), (items('worker'), [{'metadata': {'name': 'worker'}}])])
def test_upgrade_check_reads_the_pools_through_the_one_reader(answer, expected):
    from ansible_collections.ocp.egressip.plugins.modules import egressip_upgrade_check  # pylint: disable=import-outside-toplevel
    k8s, pool = client_with(answer)
    assert egressip_upgrade_check.read_pools(k8s) == expected
    assert paths(pool) == ['/apis/machineconfiguration.openshift.io/v1/machineconfigpools']


class _Module(object):
    """What read_snapshot takes from a module: its options, the Kubernetes client and the vCenter session."""

    def __init__(self, k8s, **params):
        self.k8s = k8s
        self.params = dict({'read_pods': True, 'objects': [], 'datacenter': 'DC1', 'cluster': 'Cluster1', 'failure_domains': [],
                            'acknowledge_unsupported': True, 'portgroup': None, 'accept_untested_nsx': False, 'network': None,
                            'nodes': None}, **params)

    def vcenter(self, reason=None):  # pylint: disable=unused-argument
        return 'session'


def test_preflight_reads_vcenter_beside_the_kinds_it_does_not_need():
    """Nodes and Infrastructure are listed first (the vCenter read needs them); the other kinds are listed while the
    vCenter read runs, and both parts land in one snapshot."""
    kinds = [key for key in cluster.PREFLIGHT_KINDS if key != 'pods']
    others = [key for key in kinds if key not in ('nodes', 'infrastructure')]
    answers = [items('w0'), items('cluster')] + [FORBIDDEN if key == 'namespaces' else items('x') for key in others]
    k8s, pool = client_with(*answers)
    seen = {}

    def read_vcenter(client, datacenter, vsphere_cluster, nodes, privileges):
        seen.update(client=client, where=(datacenter, vsphere_cluster), nodes=nodes, listed=paths(pool)[:2])
        for _wait in range(500):  # the other kinds are listed meanwhile (the test fails here if they wait for this read)
            if len(pool.requests) == len(kinds):
                break
            threading.Event().wait(0.01)
        seen['listed_meanwhile'] = len(pool.requests) - 2
        return {'vms': []}

    original, cluster.read_vcenter = cluster.read_vcenter, read_vcenter
    try:
        snapshot = cluster.read_snapshot(_Module(k8s), privileges=None)
    finally:
        cluster.read_vcenter = original
    assert seen['listed'] == ['/api/v1/nodes', '/apis/config.openshift.io/v1/infrastructures']
    assert seen['client'] == 'session' and seen['where'] == ('DC1', 'Cluster1') and seen['nodes'] == snapshot['nodes']
    assert seen['listed_meanwhile'] == len(kinds) - 2
    assert snapshot['vsphere'] == {'vms': []} and snapshot['infrastructure'] == {'metadata': {'name': 'cluster'}}
    assert snapshot['unreadable'] == {'namespaces': 'HTTP 403: the credentials may not list namespaces'}
    assert sorted(key for key in snapshot if key in kinds) == sorted(key for key in kinds if key != 'namespaces')


def test_without_vcenter_preflight_lists_in_one_go():
    k8s, pool = client_with(*([items('w0')] * len(cluster.PREFLIGHT_KINDS)))
    snapshot = cluster.read_snapshot(_Module(k8s, datacenter=None, cluster=None))
    assert snapshot['vsphere'] is None and len(pool.requests) == len(cluster.PREFLIGHT_KINDS) - 1  # no pods without objects
