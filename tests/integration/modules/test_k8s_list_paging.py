"""The collection's lists against the twin's API server: limit/continue pages, remainingItemCount, a 410 restart.

The emulator runs with --no-controllers (no vCenter needed); the collection's K8sClient reads its kubeconfig.
"""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import k8s as _k8s
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from twin.kube.testing import Emulator

NODES = ['node-%d' % i for i in range(5)]


@pytest.fixture(scope='module')
def emu(tmp_path_factory):
    emulator = Emulator(tmp_path_factory.mktemp('kube'), '--no-controllers')
    for name in NODES:
        status, _headers, _body = emulator.raw('POST', '/api/v1/nodes', {'metadata': {'name': name, 'labels': {'role': 'w'}}})
        assert status == 201
    yield emulator
    emulator.stop()


@pytest.fixture
def k8s(emu):
    params = dict((name, None) for name in _k8s.k8s_argument_spec())
    params['kubeconfig'] = emu.kubeconfig
    emu.twin('DELETE', '/_twin/requests')
    return _k8s.K8sClient.from_params(params)


def lists(emu):
    return [r for r in emu.twin('GET', '/_twin/requests')[1]['requests'] if r['verb'] == 'list']


def test_a_page_size_of_two_reads_five_nodes_in_three_requests(emu, k8s):
    nodes = k8s.list_items('nodes', '/api/v1/nodes', query={'labelSelector': 'role=w'}, page_size=2)
    assert [n['metadata']['name'] for n in nodes] == NODES
    assert len(lists(emu)) == 3


def test_the_default_page_is_one_request_up_to_500_items(emu, k8s):
    assert [n['metadata']['name'] for n in kube.list_objects(k8s, kube.NODES)] == NODES
    assert len(lists(emu)) == 1


def test_an_expired_continue_token_restarts_with_one_full_list(emu, k8s, monkeypatch):
    request = k8s.request

    def compact_after_the_first_page(verb, resource, path, query=None, **kwargs):
        answer = request(verb, resource, path, query=query, **kwargs)
        if not (query or {}).get('continue') and (answer.get('metadata') or {}).get('continue'):
            assert answer['metadata']['remainingItemCount'] == 3 or query.get('labelSelector')
            # a write, then etcd's compaction, between two pages: the first page's revision is gone
            assert emu.raw('POST', '/api/v1/nodes', {'metadata': {'name': 'node-9'}})[0] == 201
            emu.twin('POST', '/_twin/compact')
        return answer

    monkeypatch.setattr(k8s, 'request', compact_after_the_first_page)
    nodes = k8s.list_items('nodes', '/api/v1/nodes', page_size=2)
    assert [n['metadata']['name'] for n in nodes] == NODES + ['node-9']  # the restarted list, at the latest revision
    assert [r['code'] for r in lists(emu)] == [200, 410, 200]
