"""playbooks/disable.yml end to end on the twin: enable first, then the orderly removal.

The tests of this module run in order on one twin (enable takes about 30 s): refusals, check mode, the stop at the
Machine API check, the manual MachineSet/Machine edit it asks for, completion, and a rerun that changes nothing.
"""

import pytest

from twin.fixture import kube_writes, vcsim_writes

pytestmark = pytest.mark.slow

VARIABLES = '@examples/twin-cluster.yml'
PORTGROUP = 'ocp-egress-120'
WORKERS = ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
SECONDARY = '10.20.0.'
MACHINE_API = ('machine.openshift.io', 'v1beta1', 'openshift-machine-api')
DEVICE_PATHS = {'machinesets': ('spec', 'template', 'spec', 'providerSpec', 'value', 'network', 'devices'),
                'machines': ('spec', 'providerSpec', 'value', 'network', 'devices')}


def state(twin):
    """What enable puts in place, read straight from the twin."""
    objects = twin.custom_objects()
    inventory = twin.inventory()
    nodes = twin.core_v1().list_node().items
    tuneds = objects.list_namespaced_custom_object('tuned.openshift.io', 'v1', 'openshift-cluster-node-tuning-operator', 'tuneds')
    return {
        'egressips': sorted(item['metadata']['name'] for item in objects.list_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips')['items']),
        'policies': sorted(item['metadata']['name'] for item in
                           objects.list_cluster_custom_object('nmstate.io', 'v1', 'nodenetworkconfigurationpolicies')['items']),
        'tuned': sorted(item['metadata']['name'] for item in tuneds['items'] if item['metadata']['name'] != 'default'),
        'labelled': sorted(node.metadata.name for node in nodes if 'k8s.ovn.org/egress-assignable' in (node.metadata.labels or {})),
        'secondary_addresses': sorted(node.metadata.name for node in nodes
                                      if SECONDARY in (node.metadata.annotations or {}).get('k8s.ovn.org/host-cidrs', '')),
        'nics': sorted(vm['name'] for vm in inventory['vms'] for nic in vm['nics'] if nic['network'] == PORTGROUP),
        'portgroup_hosts': sorted(host['name'] for host in inventory['hosts'] if any(pg['name'] == PORTGROUP for pg in host['portgroups'])),
        'machine_api': sorted('%s/%s' % (plural, obj['metadata']['name']) for plural, obj in machine_api_objects(twin)
                              if any(device.get('networkName') == PORTGROUP for device in devices(plural, obj))),
    }


def machine_api_objects(twin):
    objects = twin.custom_objects()
    for plural in DEVICE_PATHS:
        for obj in objects.list_namespaced_custom_object(*MACHINE_API, plural)['items']:
            yield plural, obj


def devices(plural, obj):
    for key in DEVICE_PATHS[plural]:
        obj = obj[key]
    return obj


def unlist_portgroup(twin):
    """The manual edit the Machine API check asks for: the port group out of MachineSet templates and Machines."""
    objects = twin.custom_objects()
    for plural, obj in list(machine_api_objects(twin)):
        kept = [device for device in devices(plural, obj) if device.get('networkName') != PORTGROUP]
        if kept != devices(plural, obj):
            objects.patch_namespaced_custom_object(*MACHINE_API, plural, obj['metadata']['name'],
                                                   [{'op': 'replace', 'path': '/' + '/'.join(DEVICE_PATHS[plural]), 'value': kept}],
                                                   _content_type='application/json-patch+json')


def reset(twin):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()


def test_enable_puts_everything_in_place(twin, run_playbook):
    run = run_playbook('playbooks/enable.yml', VARIABLES)
    assert run.rc == 0, run
    enabled = state(twin)
    assert enabled['egressips'] == ['payments']
    assert enabled['policies'] == ['egressip-' + name for name in WORKERS]
    assert enabled['tuned'] == ['egressip-forwarding']
    assert enabled['labelled'] == WORKERS and enabled['secondary_addresses'] == WORKERS and enabled['nics'] == WORKERS
    assert len(enabled['portgroup_hosts']) == 3
    machinesets = [name for name in enabled['machine_api'] if name.startswith('machinesets/')]
    assert enabled['machine_api'] == ['machines/' + name for name in WORKERS] + machinesets and len(machinesets) == 1


def test_keeping_the_egressips_is_refused_at_the_labels(twin, run_playbook):
    before = state(twin)
    reset(twin)
    run = run_playbook('playbooks/disable.yml', [VARIABLES, {'disable_keep_egressips': True}])
    assert run.rc != 0, run
    assert 'node_hosts_egress_ips' in run.stdout and 'would strand egress IP' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert state(twin) == before


def test_check_mode_stops_where_an_egress_ip_of_another_owner_stays(twin, run_playbook):
    objects = twin.custom_objects()
    objects.create_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', {
        'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': 'legacy'},
        'spec': {'egressIPs': ['10.20.0.210'], 'namespaceSelector': {'matchLabels': {'team': 'legacy'}}}})
    twin.wait_for(lambda: objects.get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'legacy').get('status', {}).get('items'),
                  timeout=30, what='the egress IP of legacy assigned')
    before = state(twin)
    reset(twin)
    run = run_playbook('playbooks/disable.yml', [VARIABLES, {'disable_machine_api': False}], check=True)
    assert run.rc != 0, run
    assert 'A real run deletes EgressIP object(s) payments first; these egress IPs stay' in run.stdout, run
    assert 'of EgressIP legacy on ocp1-worker-' in run.stdout and 'would strand egress IP 10.20.0.210 of EgressIP legacy' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert state(twin) == before
    objects.delete_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'legacy')


def test_check_mode_plans_every_step_and_writes_nothing(twin, run_playbook):
    before = state(twin)
    reset(twin)
    run = run_playbook('playbooks/disable.yml', [VARIABLES, {'disable_machine_api': False}], check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed == 6, run  # EgressIPs, labels, addresses, forwarding, NICs, port group
    assert 'Would remove: 1 EgressIP object(s), the egress-assignable label of 3 node(s), the secondary address of 3 node(s), ' \
           'the IP forwarding, the NIC of 3 VM(s), the port group.' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert state(twin) == before


def test_check_mode_stops_at_the_machine_api_check_like_a_real_run(twin, run_playbook):
    reset(twin)
    run = run_playbook('playbooks/disable.yml', VARIABLES, check=True)
    assert run.rc != 0, run
    assert 'MachineSet(s) ocp1-' in run.stdout and 'A real run stops here too' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}


def test_disable_stops_before_the_nics_while_machine_api_lists_the_port_group(twin, run_playbook):
    reset(twin)
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc != 0, run
    assert 'Machine API still expects a NIC on ocp-egress-120' in run.stdout, run
    assert 'Machine(s) ocp1-worker-0, ocp1-worker-1, ocp1-worker-2 list as many devices' in run.stdout, run
    after = state(twin)
    assert after['egressips'] == [] and after['policies'] == [] and after['tuned'] == [] and after['labelled'] == []
    assert after['secondary_addresses'] == []  # the address left the nodes before the policies went
    assert after['nics'] == WORKERS and len(after['portgroup_hosts']) == 3
    assert vcsim_writes(twin) == {}


def test_after_the_manual_machine_api_edit_disable_completes(twin, run_playbook):
    unlist_portgroup(twin)
    reset(twin)
    check = run_playbook('playbooks/disable.yml', VARIABLES, check=True, diff=True)
    assert check.rc == 0, check
    assert check.changed == 2, check  # NICs and port group; the Kubernetes side is already clean
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc == 0, run
    assert run.changed == 2, run
    assert state(twin) == {'egressips': [], 'policies': [], 'tuned': [], 'labelled': [], 'secondary_addresses': [], 'nics': [],
                           'portgroup_hosts': [], 'machine_api': []}


def test_rerun_changes_nothing(twin, run_playbook):
    reset(twin)
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc == 0, run
    assert run.changed == 0, run
    check = run_playbook('playbooks/disable.yml', VARIABLES, check=True)
    assert check.rc == 0 and check.changed == 0, check
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
