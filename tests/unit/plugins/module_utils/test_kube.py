"""The one Kubernetes API layer (clients/kube.py) against a fake transport: KINDS, paths, lists, writes with dryRun, 404s."""

import json
import urllib.parse

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import k8s as _k8s
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from test_k8s import TOKEN, client_with, status_body  # pylint: disable=wrong-import-order

NOT_FOUND = (404, '404 page not found', {'content-type': 'text/plain'})


def _query(request):
    return urllib.parse.parse_qs(urllib.parse.urlsplit(request['url']).query)


def test_custom_resource_not_served_gets_the_kinds_message():
    k8s = client_with(NOT_FOUND, NOT_FOUND)[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.EGRESSIPS)
    assert failure.value.msg.startswith('EgressIP API (k8s.ovn.org/v1) not found on https://api.cluster-a.example.com:6443: ')
    assert 'network plugin is not OVN-Kubernetes' in failure.value.msg
    assert failure.value.details['reason'] == 'api_not_found' and failure.value.details['status'] == 404
    with pytest.raises(ModuleFailure) as failure:  # a kind without a message of its own: the API's message
        kube.list_objects(k8s, kube.PROFILES, namespace='ns')
    expected = ('list profiles.tuned.openshift.io (GET https://api.cluster-a.example.com:6443/apis/tuned.openshift.io/v1/namespaces/ns/profiles'
                '?limit=500) failed: HTTP 404')
    assert expected in failure.value.msg


def test_absent_kind_is_what_the_caller_says():
    k8s = client_with(NOT_FOUND, NOT_FOUND)[0]
    assert kube.list_objects(k8s, kube.MACHINESETS, namespace=kube.MACHINE_API_NAMESPACE, absent=None) is None
    assert kube.list_objects(k8s, kube.NNS, absent=[]) == []


def test_other_errors_are_raised_whatever_absent_says():
    k8s = client_with((403, status_body(403, 'Forbidden', 'forbidden')))[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NNS, absent=None)
    assert failure.value.details['status'] == 403


def test_list_nodes_is_one_plain_json_request_per_page():
    node = {'metadata': {'name': 'w0', 'annotations': {'a': '1'}, 'creationTimestamp': '2026-11-30T01:02:03Z'},
            'spec': {'providerID': 'vsphere://x'}, 'status': {'unknownField': True}}
    k8s, pool = client_with((200, json.dumps({'kind': 'NodeList', 'items': [node]})))
    assert kube.list_objects(k8s, kube.NODES, label_selector='node-role.kubernetes.io/worker') == [node]  # as the API sent it
    [request] = pool.requests
    assert request['method'] == 'GET' and request['body'] is None
    url = urllib.parse.urlsplit(request['url'])
    assert (url.netloc, url.path) == ('api.cluster-a.example.com:6443', '/api/v1/nodes')
    assert urllib.parse.parse_qs(url.query) == {'labelSelector': ['node-role.kubernetes.io/worker'], 'limit': ['500']}
    assert request['headers']['Authorization'] == 'Bearer %s' % TOKEN
    assert request['headers']['Accept'] == 'application/json'
    assert (request['timeout'].connect_timeout, request['timeout'].read_timeout) == _k8s.REQUEST_TIMEOUT
    assert request['redirect'] is False


def test_list_follows_continue_tokens():
    first = {'metadata': {'continue': 'tok'}, 'items': [{'metadata': {'name': 'a'}}]}
    k8s, pool = client_with((200, json.dumps(first)), (200, json.dumps({'items': [{'metadata': {'name': 'b'}}]})))
    assert [item['metadata']['name'] for item in kube.list_objects(k8s, kube.EVENTS, namespace='ns', field_selector='type=Warning')] == ['a', 'b']
    assert [_query(request) for request in pool.requests] == [{'fieldSelector': ['type=Warning'], 'limit': ['500']},
                                                              {'fieldSelector': ['type=Warning'], 'limit': ['500'], 'continue': ['tok']}]
    assert pool.requests[0]['url'].split('?')[0].endswith('/api/v1/namespaces/ns/events')


def test_paths_of_core_custom_namespaced_and_subresources():
    assert kube.path(kube.EGRESSIPS) == '/apis/k8s.ovn.org/v1/egressips'
    assert kube.path(kube.EGRESSIPS, 'e1') == '/apis/k8s.ovn.org/v1/egressips/e1'
    assert kube.path(kube.MACHINES, 'm0', 'openshift-machine-api') == '/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machines/m0'
    assert kube.path(kube.NODES, 'w0') == '/api/v1/nodes/w0'
    assert kube.path(kube.PODS, 'p', 'ns', 'log') == '/api/v1/namespaces/ns/pods/p/log'
    assert kube.path(kube.LEASES, namespace='ns') == '/apis/coordination.k8s.io/v1/namespaces/ns/leases'
    assert kube.api_version(kube.NODES) == 'v1' and kube.api_version(kube.LEASES) == 'coordination.k8s.io/v1'
    assert kube.resource(kube.TUNEDS, 't', 'ns') == 'tuneds.tuned.openshift.io ns/t' and kube.resource(kube.NODES, 'w0') == 'nodes w0'


def test_kinds_table_has_one_key_per_kind():
    assert all(key == kind.key for key, kind in kube.KINDS.items())
    assert len(set((kind.group, kind.plural) for kind in kube.KINDS.values())) == len(kube.KINDS)
    assert kube.KINDS['nns'] is kube.NNS and kube.KINDS['infrastructure'].name == 'cluster'


def test_list_of_custom_objects_returns_plain_dicts():
    k8s, pool = client_with((200, json.dumps({'items': [{'metadata': {'name': 'e'}, 'status': {'items': []}}]})))
    assert kube.list_objects(k8s, kube.EGRESSIPS) == [{'metadata': {'name': 'e'}, 'status': {'items': []}}]
    assert pool.requests[0]['url'] == 'https://api.cluster-a.example.com:6443/apis/k8s.ovn.org/v1/egressips?limit=500'


@pytest.mark.parametrize('check_mode, suffix', [(True, '?dryRun=All'), (False, '')])
def test_writes_send_dry_run_in_check_mode_only(check_mode, suffix):
    k8s, pool = client_with(*[(200, '{}')] * 3)
    kube.create(k8s, kube.TUNEDS, {'metadata': {'name': 't'}}, check_mode, namespace='ns')
    kube.patch(k8s, kube.NODES, 'w0', {'metadata': {'labels': {'a': None}}}, check_mode)
    kube.delete(k8s, kube.NNCPS, 'p', check_mode)
    create, patch, delete = pool.requests
    assert (create['method'], create['url']) == ('POST', 'https://api.cluster-a.example.com:6443/apis/tuned.openshift.io/v1/namespaces/ns/tuneds' + suffix)
    assert (patch['method'], patch['url']) == ('PATCH', 'https://api.cluster-a.example.com:6443/api/v1/nodes/w0' + suffix)
    assert patch['headers']['Content-Type'] == kube.MERGE_PATCH and json.loads(patch['body']) == {'metadata': {'labels': {'a': None}}}
    assert (delete['method'], delete['url']) == (
        'DELETE', 'https://api.cluster-a.example.com:6443/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/p' + suffix)


def test_write_failures_name_the_object():
    k8s = client_with((409, status_body(409, 'AlreadyExists', 'exists')))[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.create(k8s, kube.TUNEDS, {'metadata': {'name': 't'}}, False, namespace='ns')
    assert failure.value.msg.startswith('create tuneds.tuned.openshift.io ns/t (POST ') and failure.value.details['status'] == 409


def test_get_object_none_or_the_kinds_message_on_404():
    k8s, pool = client_with((200, '{"metadata": {"name": "cluster"}}'), NOT_FOUND, NOT_FOUND)
    assert kube.get_object(k8s, kube.NETWORK_OPERATOR) == {'metadata': {'name': 'cluster'}}  # the singleton by default
    assert pool.requests[0]['url'].endswith('/apis/operator.openshift.io/v1/networks/cluster')
    assert kube.get_object(k8s, kube.NETWORK_OPERATOR, 'cluster') is None
    with pytest.raises(ModuleFailure) as failure:
        kube.get_object(k8s, kube.NETWORK_OPERATOR, 'cluster', absent=kube.FAIL)
    assert failure.value.msg == ('Network operator API (operator.openshift.io/v1 networks) not found on https://api.cluster-a.example.com:6443: '
                                 'is this OpenShift?')
    assert failure.value.details['reason'] == 'not_found'
