"""playbooks/disable.yml end to end on the twin: enable first, then the orderly removal.

The tests of this module run in order on one twin (enable takes about 30 s): refusals (an assigned EgressIP is deleted only
with disable_delete_assigned_egressips; check mode lists what would stop carrying traffic), check mode, a run whose NIC
step fails for one VM (the Machines of the others are aligned right away, the failed one keeps matching its VM), the
rerun that completes it (Machine API devices, VM NICs, port group), and a rerun that changes nothing.
"""

import pytest

from twin.fixture import kube_writes, vcsim_writes

pytestmark = pytest.mark.slow

VARIABLES = '@examples/twin-cluster.yml'
CONFIRMED = [VARIABLES, {'disable_delete_assigned_egressips': True}]  # payments is assigned: deleting it needs the confirmation
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


def machine_vm_counts(twin):
    """{Machine: (devices its providerSpec lists, NICs its VM has)} for the worker Machines (Machine API compares them)."""
    vms = dict((vm['name'], vm) for vm in twin.inventory()['vms'])
    return dict((obj['metadata']['name'], (len(devices('machines', obj)), len(vms[obj['metadata']['name']]['nics'])))
                for plural, obj in machine_api_objects(twin) if plural == 'machines' and obj['metadata']['name'] in WORKERS)


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


def test_deleting_assigned_egressips_is_refused_without_the_confirmation(twin, run_playbook):
    before = state(twin)
    reset(twin)
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc != 0, run
    assert 'Refused - deleting the EgressIP object(s) of this collection would stop the traffic of these assigned egress IP(s): ' \
           '10.20.0.200 of payments on ocp1-worker-' in run.stdout, run
    assert '10.20.0.201 of payments on ocp1-worker-' in run.stdout and 'disable_delete_assigned_egressips: true' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert state(twin) == before
    check = run_playbook('playbooks/disable.yml', VARIABLES, check=True)
    assert check.rc != 0 and 'Check mode: a real run refuses - deleting the EgressIP object(s)' in check.stdout, check
    assert '10.20.0.200 of payments on ocp1-worker-' in check.stdout, check
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}


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
    run = run_playbook('playbooks/disable.yml', CONFIRMED, check=True)
    assert run.rc != 0, run
    assert 'A real run deletes EgressIP object(s) payments first; these egress IPs stay' in run.stdout, run
    # legacy has no managed-by label: removing the label of its node would move it
    assert 'of EgressIP legacy on ocp1-worker-' in run.stdout and 'would move egress IP 10.20.0.210 of EgressIP legacy' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert state(twin) == before
    objects.delete_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'legacy')


def test_check_mode_plans_every_step_and_writes_nothing(twin, run_playbook):
    before = state(twin)
    reset(twin)
    run = run_playbook('playbooks/disable.yml', CONFIRMED, check=True, diff=True)
    assert run.rc == 0, run
    # EgressIPs, labels, addresses, forwarding, MachineSet template, NICs, Machines (named: no NIC is removed), port group
    assert run.changed == 8, run
    assert 'Check mode: a real run stops the traffic of these assigned egress IP(s): 10.20.0.200 of payments on ocp1-worker-' in run.stdout, run
    assert 'Would remove: 1 EgressIP object(s) - 2 assigned egress IP(s) stopped carrying traffic, ' \
           'the egress-assignable label of 3 node(s), the secondary address of 3 node(s), ' \
           'the IP forwarding, the port group from 1 MachineSet template(s) and 3 Machine(s), the NIC of 3 VM(s), the port group.' \
           in run.stdout, run
    assert 'out of spec.providerSpec.value.network.devices of Machine(s) ocp1-worker-0, ocp1-worker-1, ocp1-worker-2 once' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert state(twin) == before


def test_check_mode_without_machine_api_leaves_it_out(twin, run_playbook):
    reset(twin)
    run = run_playbook('playbooks/disable.yml', CONFIRMED + [{'disable_machine_api': False}], check=True)
    assert run.rc == 0, run
    assert run.changed == 6, run  # EgressIPs, labels, addresses, forwarding, NICs, port group
    assert 'the port group from 0 MachineSet template(s) and 0 Machine(s), the NIC of 3 VM(s)' in run.stdout, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}


def test_nic_step_failing_for_one_vm_leaves_every_machine_matching_its_vm(twin, run_playbook):
    failing = next(vm for vm in twin.inventory()['vms'] if vm['name'] == 'ocp1-worker-1')
    twin.inject_vcsim_fault(method='ReconfigVM_Task', this=failing['moid'], count=1, fault='the VM is locked (test)')
    try:
        run = run_playbook('playbooks/disable.yml', CONFIRMED)
    finally:
        twin.clear_vcsim_faults()
    assert run.rc != 0, run
    assert 'the VM is locked (test)' in run.stdout, run
    after = state(twin)
    assert after['egressips'] == [] and after['policies'] == [] and after['tuned'] == [] and after['labelled'] == []
    assert after['secondary_addresses'] == []  # the address left the nodes before the policies went
    assert after['nics'] == ['ocp1-worker-1'] and len(after['portgroup_hosts']) == 3
    # the template went before the NICs; the Machines of the VMs that lost the NIC right after; the failed one kept it
    assert after['machine_api'] == ['machines/ocp1-worker-1']
    assert machine_vm_counts(twin) == {'ocp1-worker-0': (1, 1), 'ocp1-worker-1': (2, 2), 'ocp1-worker-2': (1, 1)}


def test_rerun_completes_machine_api_nics_and_port_group(twin, run_playbook):
    reset(twin)
    check = run_playbook('playbooks/disable.yml', VARIABLES, check=True, diff=True)
    assert check.rc == 0, check
    assert check.changed == 3, check  # the NIC, the Machine named for it, the port group; the rest is clean
    assert 'the port group from 0 MachineSet template(s) and 1 Machine(s), the NIC of 1 VM(s), the port group.' in check.stdout, check
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc == 0, run
    assert run.changed == 3, run
    assert 'Removed: 0 EgressIP object(s)' in run.stdout and \
           'the port group from 0 MachineSet template(s) and 1 Machine(s), the NIC of 1 VM(s), the port group.' in run.stdout, run
    assert state(twin) == {'egressips': [], 'policies': [], 'tuned': [], 'labelled': [], 'secondary_addresses': [], 'nics': [],
                           'portgroup_hosts': [], 'machine_api': []}
    assert machine_vm_counts(twin) == dict((name, (1, 1)) for name in WORKERS)


def test_rerun_changes_nothing(twin, run_playbook):
    reset(twin)
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc == 0, run
    assert run.changed == 0, run
    check = run_playbook('playbooks/disable.yml', VARIABLES, check=True)
    assert check.rc == 0 and check.changed == 0, check
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
