"""playbooks/disable.yml with a distributed port group: enable, disable (Machine API included), rerun (in order, one twin).

The standard-port-group case, with the refusals and check mode, is test_disable.py.
"""

import pytest

from twin.fixture import kube_writes, vcsim_writes

import test_disable as standard

pytestmark = pytest.mark.slow

DISTRIBUTED = {'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                                    'portgroup': {'name': standard.PORTGROUP, 'switch_type': 'distributed', 'switch': 'DSwitch1',
                                                  'vlan_id': 120}}}
VARIABLES = [standard.VARIABLES, DISTRIBUTED]


def distributed_portgroups(twin):
    return [pg['name'] for dvs in twin.inventory()['dvs'] for pg in dvs['portgroups'] if pg['name'] == standard.PORTGROUP]


def test_enable_then_disable_a_distributed_port_group(twin, run_playbook):
    run = run_playbook('playbooks/enable.yml', VARIABLES)
    assert run.rc == 0, run
    assert standard.state(twin)['nics'] == standard.WORKERS and distributed_portgroups(twin) == [standard.PORTGROUP]
    standard.reset(twin)
    check = run_playbook('playbooks/disable.yml', VARIABLES + [{'disable_delete_assigned_egressips': True}], check=True, diff=True)
    assert check.rc == 0 and check.changed == 8, check
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    run = run_playbook('playbooks/disable.yml', VARIABLES + [{'disable_delete_assigned_egressips': True}])
    assert run.rc == 0 and run.changed == 8, run
    assert 'Removed: 1 EgressIP object(s) - 2 assigned egress IP(s) stopped carrying traffic, ' \
           'the egress-assignable label of 3 node(s), the secondary address of 3 node(s), ' \
           'the IP forwarding, the port group from 1 MachineSet template(s) and 3 Machine(s), the NIC of 3 VM(s), the port group.' \
           in run.stdout, run
    after = standard.state(twin)
    assert after['egressips'] == [] and after['policies'] == [] and after['labelled'] == [] and after['nics'] == []
    assert after['secondary_addresses'] == [] and after['machine_api'] == []
    assert distributed_portgroups(twin) == []
    assert standard.machine_vm_counts(twin) == dict((name, (1, 1)) for name in standard.WORKERS)


def test_rerun_changes_nothing(twin, run_playbook):
    standard.reset(twin)
    run = run_playbook('playbooks/disable.yml', VARIABLES)
    assert run.rc == 0 and run.changed == 0, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
