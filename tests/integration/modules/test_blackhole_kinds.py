"""The blackholes verify names, on a twin whose NetworkManager keeps the address without carrier (ignore-carrier).

Each kind leaves the egress IP assigned (OVN-K probes over the primary network) while its traffic is dropped:
the vNIC disconnected on a node that keeps its address, the port group re-tagged (another VLAN) or renamed on the
ESXi host the VM runs on after it arrived, the standard vSwitch there without a physical uplink or with its uplink's
link down, and the NIC's gateway route gone from its NodeNetworkState. Each is found by egressip_verify with its own
finding id next to egressip_blackhole, and the twin's wire (the echo target) agrees. egressip_plan reads ignore-carrier
from a NodeNetworkState that shows a link down with its address. The tests share the twin and run in order; each puts
back what it broke.
"""

from pyVmomi import vim

import _egress_cluster as ec

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 17, 'carrier_loss': 'keep', 'carrier_loss_delay': 1.0}


def args(twin, **extra):
    options = dict(objects=[{'name': 'payments'}], network=dict(ec.NETWORK), fail_on_error=False, poll_interval=0.2,
                   wire={'echo_target': ec.ECHO_TARGET, 'probes': 8}, **ec.vsphere_options(twin))
    options.update(extra)
    return options


def ids(result):
    return sorted(item['id'] for item in result['findings'])


def finding(result, finding_id):
    return next(item for item in result['findings'] if item['id'] == finding_id)


def statuses(result):
    return dict((row['ip'], row['status']) for row in result['egress_ips'])


def set_portgroup(twin, host_name, old_name, new_name, vlan):
    """UpdatePortGroup on one host: rename or re-tag the standard port group there (as an administrator would)."""
    spec = vim.host.PortGroup.Specification(name=new_name, vlanId=vlan, vswitchName=ec.PORTGROUP['switch'], policy=vim.host.NetworkPolicy())
    ec.host_object(twin, host_name).configManager.networkSystem.UpdatePortGroup(pgName=old_name, portgrp=spec)


def test_disconnected_nic_with_ignore_carrier_is_a_named_blackhole_and_plan_reads_it(twin, run_module):
    ec.make_egress_cluster(twin)
    victim = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, victim, False)
    mac = next(nic['mac'] for nic in ec.inventory_vm(twin, victim)['nics'] if nic['network'] == ec.PORTGROUP['name'])
    twin.wait_for(lambda: (ec.nns_interface(twin, victim, mac) or {}).get('state') == 'down', timeout=30,
                  what='NodeNetworkState of %s reporting its NIC down' % victim)
    try:
        result = run_module('egressip_verify', args(twin))
        assert statuses(result)['10.20.0.200'] == 'blackhole'
        row = next(item for item in result['nodes'] if item['name'] == victim)
        assert row['carrier_loss'] == 'keep' and row['blackhole_kinds'] == ['blackhole_nic_disconnected']
        assert 'is disconnected' in finding(result, 'blackhole_nic_disconnected')['message']
        assert 'egressip_wire_failed' in ids(result)
        assert ec.assignments(twin)['10.20.0.200'] == victim  # nothing moved by itself
        other = sorted(set(ec.workers(twin)) - {victim})[0]
        plan = run_module('egressip_plan', {'nodes': [other], 'trigger': 'disconnect_nic'})
        assert plan['carrier_loss'][other]['behaviour'] == 'keep'
        assert 'read from node %s' % victim in plan['carrier_loss'][other]['source']
        assert plan['what_if'][0]['effect'] in ('blackhole', 'none')
    finally:
        ec.set_nic_connected(twin, victim, True)
    twin.wait_for(lambda: (ec.nns_interface(twin, victim, mac) or {}).get('state') == 'up', timeout=30, what='the NIC up again')
    assert run_module('egressip_verify', args(twin))['summary']['ok'] is True


def test_port_group_with_another_vlan_on_the_vm_host_is_a_named_blackhole(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    host = ec.inventory_vm(twin, victim)['host']
    set_portgroup(twin, host, ec.PORTGROUP['name'], ec.PORTGROUP['name'], 130)
    try:
        result = run_module('egressip_verify', args(twin))
        assert statuses(result) == {'10.20.0.200': 'blackhole', '10.20.0.201': 'ok'}
        text = finding(result, 'blackhole_portgroup_vlan_mismatch')['message']
        assert 'VLAN 130 on ESXi host %s where VM %s runs now, VLAN 120 configured' % (host, victim) in text
        assert 'egressip_wire_failed' in ids(result)  # the twin's wire drops frames on the wrong segment too
        assert ec.assignments(twin)['10.20.0.200'] == victim
    finally:
        set_portgroup(twin, host, ec.PORTGROUP['name'], ec.PORTGROUP['name'], ec.PORTGROUP['vlan_id'])
    assert run_module('egressip_verify', args(twin))['summary']['ok'] is True


def test_port_group_renamed_on_the_vm_host_after_it_arrived_is_a_named_blackhole(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    host = ec.inventory_vm(twin, victim)['host']
    set_portgroup(twin, host, ec.PORTGROUP['name'], 'ocp-egress-renamed', ec.PORTGROUP['vlan_id'])
    try:
        result = run_module('egressip_verify', args(twin))
        assert statuses(result)['10.20.0.200'] == 'blackhole'
        text = finding(result, 'blackhole_portgroup_missing_on_host')['message']
        assert 'port group %s does not exist on ESXi host %s where VM %s runs now' % (ec.PORTGROUP['name'], host, victim) in text
        assert 'egressip_wire_failed' in ids(result)
    finally:
        set_portgroup(twin, host, 'ocp-egress-renamed', ec.PORTGROUP['name'], ec.PORTGROUP['vlan_id'])
    assert run_module('egressip_verify', args(twin))['summary']['ok'] is True


def set_uplinks(twin, host_name, devices):
    """UpdateVirtualSwitch on one host: the egress vSwitch bridges these physical NICs (none: no uplink), as an administrator would."""
    bridge = vim.host.VirtualSwitch.BondBridge(nicDevice=devices) if devices else None
    spec = vim.host.VirtualSwitch.Specification(numPorts=128, mtu=1500, bridge=bridge)
    ec.host_object(twin, host_name).configManager.networkSystem.UpdateVirtualSwitch(vswitchName=ec.PORTGROUP['switch'], spec=spec)


def test_vswitch_without_uplink_on_the_vm_host_is_a_named_blackhole(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    host = ec.inventory_vm(twin, victim)['host']
    set_uplinks(twin, host, [])
    try:
        result = run_module('egressip_verify', args(twin))
        assert statuses(result)['10.20.0.200'] == 'blackhole'
        text = finding(result, 'blackhole_vswitch_no_uplink')['message']
        assert 'vSwitch vSwitch1 of port group %s on ESXi host %s where VM %s runs now has no physical uplink' % (
            ec.PORTGROUP['name'], host, victim) in text
        assert 'egressip_wire_failed' in ids(result)  # the twin's wire: the frames never leave the host
        assert ec.assignments(twin)['10.20.0.200'] == victim  # OVN-K notices nothing
    finally:
        set_uplinks(twin, host, ['vmnic1'])
    assert run_module('egressip_verify', args(twin))['summary']['ok'] is True


def test_vswitch_whose_uplink_lost_its_link_is_a_named_blackhole(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    host = ec.inventory_vm(twin, victim)['host']
    twin.set_pnic_link(host, 'vmnic1', False)
    try:
        result = run_module('egressip_verify', args(twin))
        assert statuses(result)['10.20.0.200'] == 'blackhole'
        assert 'has every physical uplink down (vmnic1: no link)' in finding(result, 'blackhole_vswitch_no_uplink')['message']
        assert 'egressip_wire_failed' in ids(result)
    finally:
        twin.set_pnic_link(host, 'vmnic1', True)
    assert run_module('egressip_verify', args(twin))['summary']['ok'] is True


def test_gateway_route_gone_from_the_node_is_a_named_blackhole(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    mac = next(nic['mac'] for nic in ec.inventory_vm(twin, victim)['nics'] if nic['network'] == ec.PORTGROUP['name'])
    interface = ec.nns_interface(twin, victim, mac)['name']

    def routes():
        nns = twin.custom_objects().get_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates', victim)
        return [route for route in nns['status']['currentState']['routes']['config'] if route.get('next-hop-interface') == interface]

    def set_route(state=None):
        body = {'spec': {'desiredState': {'routes': {'config': [ec.gateway_route(interface, state)]}}}}
        twin.custom_objects().patch_cluster_custom_object(name='test-egress-%s' % victim, body=body, **ec.NNCP)

    set_route('absent')
    twin.wait_for(lambda: routes() == [], timeout=30, what='NodeNetworkState of %s without the gateway route' % victim)
    try:
        result = run_module('egressip_verify', args(twin))
        assert statuses(result) == {'10.20.0.200': 'blackhole', '10.20.0.201': 'ok'}
        text = finding(result, 'blackhole_gateway_route_missing')['message']
        assert 'no route via gateway 10.20.0.1 on interface %s' % interface in text
        # the twin's wire: ovnkube-node's `default dev <nic>` ARPs for the echo target itself, nothing answers
        assert 'egressip_wire_failed' in ids(result)
        without_gateway = run_module('egressip_verify', args(twin, wire=None, network={'cidr': ec.CIDR}))
        assert 'blackhole_gateway_route_missing' not in ids(without_gateway)  # checked only when the gateway is given
    finally:
        set_route()
    twin.wait_for(lambda: routes() != [], timeout=30, what='the gateway route back')
    assert run_module('egressip_verify', args(twin))['summary']['ok'] is True
