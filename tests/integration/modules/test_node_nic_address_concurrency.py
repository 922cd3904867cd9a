"""Three node_nic_address runs at once, none of them holding the cluster lock (issue 13: "three simultaneous
node_nic_address runs gave two nodes the same address").

Each run allocates from the same snapshot, so without care two runs give two nodes one address. New policies are
created parked (matching no node), checked against the policies of the other writers, re-allocated when another
claimed the address first, and activated only then.
"""

import json
import os
import subprocess
import sys

import _prepare as prepare

from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn

# tests/conftest.py's COLLECTIONS_DIR, not imported: `conftest` may name another directory's conftest module here
COLLECTIONS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), '.build')

TWIN_OPTIONS = {'workers': 9}
W = ['ocp1-worker-%d' % i for i in range(6)]
SOLO = ['ocp1-worker-%d' % i for i in range(6, 9)]   # one writer each, last test
NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'}
RUNS = [W[0:4], W[2:6], [W[0], W[3], W[5], W[1]]]


def start_module(twin, tmp_path, index, args):
    path = tmp_path / ('run-%d.json' % index)
    path.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': dict(args, _ansible_check_mode=False, _ansible_diff=False)}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_DIR, PYTHONPATH=COLLECTIONS_DIR, **twin.env)
    env.pop('KUBECONFIG', None)
    env.update(twin.env)
    return subprocess.Popen([sys.executable, '-m', 'ansible_collections.ocp.egressip.plugins.modules.node_nic_address', str(path)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_writers(twin, tmp_path, macs, writers):
    """The writers (lists of nodes) at once, each with a lock of its own: the cluster lock would serialise them, and this is
    about writers that ignore it."""
    return finished([start_module(twin, tmp_path, index, dict(NETWORK, nodes=[{'node': node, 'mac': macs[node]} for node in nodes],
                                                              wait_timeout=120, wait_sleep=1, lock_name='writer-%d' % index))
                     for index, nodes in enumerate(writers)])


def finished(runs):
    """[(rc, result, stderr)] of the module processes, each successful; every result whole on the output when one failed
    (pytest shortens a long assertion message)."""
    results = []
    for proc in runs:
        stdout, stderr = proc.communicate(timeout=600)
        assert stdout, stderr
        results.append((proc.returncode, json.loads(stdout), stderr))
    if any(returncode for returncode, _result, _stderr in results):
        print(json.dumps([{'writer': index, 'rc': returncode, 'msg': result.get('msg'), 'findings': result.get('findings'),
                           'warnings': result.get('warnings'), 'allocations': result.get('allocations'), 'stderr': stderr}
                          for index, (returncode, result, stderr) in enumerate(results)], indent=1))
    for returncode, result, stderr in results:
        assert returncode == 0, (result.get('msg'), stderr)
    return results


def test_three_writers_at_once_never_give_two_nodes_one_address(twin, tmp_path, run_module):
    macs = dict((node, prepare.add_nic(twin, node)) for node in W)
    results = run_writers(twin, tmp_path, macs, RUNS)
    policies = [item for item in twin.custom_objects().list_cluster_custom_object(**prepare.NNCP)['items']
                if item['metadata']['name'].startswith('egressip-')]
    assert sorted(item['metadata']['name'] for item in policies) == sorted('egressip-' + node for node in W)
    addresses = [item['metadata']['annotations']['egressip.ocp/addresses'] for item in policies]
    assert len(set(addresses)) == len(W), addresses
    # every policy is active (no parking key left) and every node holds exactly its own address
    assert all(set(item['spec']['nodeSelector']) == {'kubernetes.io/hostname'} for item in policies)
    by_node = dict((item['metadata']['annotations']['egressip.ocp/node'], item['metadata']['annotations']['egressip.ocp/addresses'])
                   for item in policies)
    for node in W:
        twin.wait_for(lambda node=node: [c for c in prepare.host_cidrs(twin, node) if c.startswith('10.20.0.')] == [by_node[node]],
                      timeout=30, what='%s holding exactly %s' % (node, by_node[node]))
    # what each run reported is what the cluster holds
    for _returncode, result, _stderr in results:
        for item in result['allocations']:
            assert item['address'] == by_node[item['node']], (item, by_node)
    again = run_module('node_nic_address', dict(NETWORK, nodes=[{'node': node, 'mac': macs[node]} for node in W]))
    assert again['_rc'] == 0 and again['changed'] is False, again


def test_a_parked_policy_left_by_a_killed_run_is_activated_by_the_next_run(twin, run_module):
    policy = twin.custom_objects().get_cluster_custom_object(name='egressip-' + W[0], **prepare.NNCP)
    twin.custom_objects().patch_cluster_custom_object(name='egressip-' + W[0], body={
        'spec': {'nodeSelector': {'egressip.ocp/address-claim': 'pending'}}}, **prepare.NNCP)
    mac = policy['spec']['desiredState']['interfaces'][0]['mac-address']
    result = run_module('node_nic_address', dict(NETWORK, nodes=[{'node': W[0], 'mac': mac}], wait_sleep=1), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert result['updated'] == ['egressip-' + W[0]]
    after = twin.custom_objects().get_cluster_custom_object(name='egressip-' + W[0], **prepare.NNCP)
    assert after['spec']['nodeSelector'] == {'kubernetes.io/hostname': W[0]}
    assert after['metadata']['annotations'] == policy['metadata']['annotations']  # the allocation stayed


def test_a_parked_policy_that_lost_its_claim_and_was_left_behind_is_re_allocated(twin, run_module):
    """A writer was killed after its claim lost: its parked policy holds the address of an older, active policy.

    The next run covering both nodes must not refuse with node_address_in_use (a parked policy configures no node):
    it waits briefly for the writer, then re-allocates the parked policy and activates it; the older one never moves.
    """
    api = twin.custom_objects()
    older = api.get_cluster_custom_object(name='egressip-' + W[4], **prepare.NNCP)
    left = api.get_cluster_custom_object(name='egressip-' + W[5], **prepare.NNCP)
    taken_ip = older['metadata']['annotations']['egressip.ocp/addresses'].split('/')[0]
    own_ip = left['metadata']['annotations']['egressip.ocp/addresses'].split('/')[0]
    api.delete_cluster_custom_object(name='egressip-' + W[5], **prepare.NNCP)
    body = json.loads(json.dumps({'apiVersion': left['apiVersion'], 'kind': left['kind'], 'spec': left['spec'],
                                  'metadata': {'name': left['metadata']['name'], 'labels': left['metadata']['labels'],
                                               'annotations': left['metadata']['annotations']}}).replace(own_ip + '/', taken_ip + '/'))
    body['spec']['nodeSelector']['egressip.ocp/address-claim'] = 'pending'
    api.create_cluster_custom_object(body=body, **prepare.NNCP)
    macs = dict((node, api.get_cluster_custom_object(name='egressip-' + node, **prepare.NNCP)['spec']['desiredState']['interfaces'][0]['mac-address'])
                for node in W[4:6])
    nodes = [{'node': node, 'mac': macs[node]} for node in W[4:6]]
    result = run_module('node_nic_address', dict(NETWORK, nodes=nodes, wait_timeout=20, wait_sleep=1))
    assert result['_rc'] == 0 and result['changed'] is True, result
    by_node = dict((item['node'], item['address'].split('/')[0]) for item in result['allocations'])
    assert by_node[W[4]] == taken_ip
    assert by_node[W[5]] != taken_ip
    after = api.get_cluster_custom_object(name='egressip-' + W[5], **prepare.NNCP)
    assert after['spec']['nodeSelector'] == {'kubernetes.io/hostname': W[5]}
    assert after['metadata']['annotations']['egressip.ocp/addresses'].split('/')[0] == by_node[W[5]]
    assert api.get_cluster_custom_object(name='egressip-' + W[4], **prepare.NNCP)['metadata']['annotations'] == older['metadata']['annotations']


def claims_in_one_second(twin, macs, address):
    """Parked policies of the collection claiming `address` for the SOLO nodes, created in one second (as writers planning
    from one list make them): every one of them loses its claim."""
    api = twin.custom_objects()
    for _attempt in range(5):
        for node in SOLO:
            body = nn.parked(nn.desired_policy(node, node, macs[node], {4: address}, {4: NETWORK['gateway']}, 200, 'egressip0',
                                               prepare.kernel_name(twin, node, macs[node])))
            api.create_cluster_custom_object(body=body, **prepare.NNCP)
        stamps = set(api.get_cluster_custom_object(name='egressip-' + node, **prepare.NNCP)['metadata']['creationTimestamp']
                     for node in SOLO)
        if len(stamps) == 1:
            return
        for node in SOLO:
            api.delete_cluster_custom_object(name='egressip-' + node, **prepare.NNCP)
    raise AssertionError('three creates in one second failed five times')


def test_a_claim_that_lost_with_two_others_is_re_allocated_away_from_their_address(twin, run_module):
    """Three writers claimed one address in the same second, so all three lost; the writers of two of them are gone.

    The run re-allocating the third must avoid the address the two others still hold although they lose to each other:
    taken as free (as a run's plan takes a parked loser's address), it re-planned to that address, lost again, and so on
    until it gave up with node_address_claim_conflict; with three live writers all three did so (CI under load).
    """
    macs = dict((node, prepare.add_nic(twin, node)) for node in SOLO)
    taken = sorted(item['metadata']['annotations']['egressip.ocp/addresses']
                   for item in twin.custom_objects().list_cluster_custom_object(**prepare.NNCP)['items'])
    lowest_free = next('10.20.0.%d/24' % host for host in range(10, 100) if '10.20.0.%d/24' % host not in taken)
    claims_in_one_second(twin, macs, lowest_free)
    result = run_module('node_nic_address', dict(NETWORK, nodes=[{'node': SOLO[0], 'mac': macs[SOLO[0]]}], wait_timeout=5, wait_sleep=1))
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert result['updated'] == ['egressip-' + SOLO[0]] and result['created'] == []
    ours = twin.custom_objects().get_cluster_custom_object(name='egressip-' + SOLO[0], **prepare.NNCP)
    address = ours['metadata']['annotations']['egressip.ocp/addresses']
    assert address not in taken + [lowest_free] and result['allocations'][0]['address'] == address
    assert set(ours['spec']['nodeSelector']) == {'kubernetes.io/hostname'}
    assert 're-allocated' in json.dumps(result.get('warnings')), result.get('warnings')
    for node in SOLO[1:]:   # the left-behind claims stay parked, holding the address they lost (they configure no node)
        left = twin.custom_objects().get_cluster_custom_object(name='egressip-' + node, **prepare.NNCP)
        assert nn.is_parked(left) and left['metadata']['annotations']['egressip.ocp/addresses'] == lowest_free
