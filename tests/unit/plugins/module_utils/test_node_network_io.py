"""The NodeNetworkState wait of the node steps (clients/node_network_io.py) against a fake transport."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.clients import node_network_io
from test_k8s import client_with  # pylint: disable=wrong-import-order


def test_states_are_read_again_into_nns_until_nothing_is_pending():
    states = (200, json.dumps({'items': [{'metadata': {'name': 'w0'}}]}))
    k8s, pool = client_with(states, states)
    seen = []

    def replan(snapshot):
        seen.append([item['metadata']['name'] for item in snapshot['nns']])
        return {'pending': [] if len(seen) == 2 else ['w0']}

    snapshot = {'nns': []}
    plan = node_network_io.wait_for_states(k8s, snapshot, {'pending': ['w0']}, replan, timeout=30, sleep=0)
    assert plan == {'pending': []} and seen == [['w0'], ['w0']] and len(pool.requests) == 2
    assert all(request['url'].split('?')[0].endswith('/apis/nmstate.io/v1beta1/nodenetworkstates') for request in pool.requests)


def test_nothing_pending_reads_nothing_and_a_timeout_returns_the_last_plan():
    k8s, pool = client_with()
    assert node_network_io.wait_for_states(k8s, {}, {'pending': []}, None, timeout=30, sleep=0) == {'pending': []}
    assert node_network_io.wait_for_states(k8s, {}, {'pending': ['w0']}, None, timeout=0, sleep=0) == {'pending': ['w0']}
    assert pool.requests == []
