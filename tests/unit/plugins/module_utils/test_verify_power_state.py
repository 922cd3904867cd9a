"""verify's secondary path of a VM that is not powered on: vCenter reports its NICs disconnected, which is not a broken vNIC."""

from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path

PORTGROUP = 'ocp-egress-120'


def vsphere(power_state, connected, start_connected):
    nic = {'key': 4001, 'mac': '00:50:56:aa:00:01', 'network': PORTGROUP, 'portgroup_key': None, 'switch_uuid': None,
           'connected': connected, 'start_connected': start_connected}
    return {'portgroup': PORTGROUP, 'switch_type': 'standard', 'switch': 'vSwitch1', 'network': {'type': 'standard', 'name': PORTGROUP},
            'cluster': 'C0', 'hosts': {'H0': ['VM Network', PORTGROUP]}, 'switch_hosts': None, 'findings': [],
            'vms': {'w0': {'name': 'w0', 'moid': 'vm-1', 'host': 'H0', 'power_state': power_state, 'nics': [nic]}}}


def test_powered_off_vm_with_start_connected_nic_has_only_the_power_state_problem():
    facts = verify_path.vsphere_path('w0', vsphere('poweredOff', False, True))
    assert facts['problems'] == ['VM w0 is poweredOff']
    assert facts['nic']['connected'] is False  # as vCenter reports it


def test_powered_off_vm_whose_nic_will_not_connect_at_power_on():
    facts = verify_path.vsphere_path('w0', vsphere('poweredOff', False, False))
    assert facts['problems'] == ['VM w0 is poweredOff',
                                 'vNIC 00:50:56:aa:00:01 of VM w0 on port group %s will not connect when the VM powers on (startConnected false)'
                                 % PORTGROUP]


def test_running_vm_with_a_disconnected_nic_is_still_a_disconnected_vnic():
    facts = verify_path.vsphere_path('w0', vsphere('poweredOn', False, True))
    assert facts['problems'] == ['vNIC 00:50:56:aa:00:01 of VM w0 on port group %s is disconnected' % PORTGROUP]


def test_a_powered_off_node_is_not_classified_as_carrier_loss():
    row = {'name': 'w0', 'nic': {'connected': False}, 'power_state': 'poweredOff', 'address': '10.20.0.10', 'problems': [],
           'notes': [], 'blackhole_kinds': [], 'path': verify_path.PATH_UNKNOWN, 'carrier_loss': None}
    assert verify_path._carrier_loss(row, held=True) is False  # pylint: disable=protected-access
    assert row['blackhole_kinds'] == [] and row['carrier_loss'] is None
