"""Detection latency of the guard, per blackhole kind, on the twin (issue 17).

One twin (3 workers, NetworkManager keeping the address without carrier so that a disconnected vNIC is a blackhole,
not a capacity loss), made egress-ready as the module tests make it. For each kind: break the path of the node that
hosts 10.20.0.200, then run guard rounds back to back (`ansible-playbook playbooks/guard.yml`, as the in-cluster
CronJob runs one, without the wait between two scheduled rounds) while a poller watches for the Warning Event
`EgressIPBlackhole` on EgressIP `payments`; the latency is from the break to that Event. Then the path is restored
and rounds run until the object is healthy again (its `EgressIPHealthy` Event), so each kind starts from healthy.

A round scheduled every minute finds a break within one interval plus the round's own time; the table gives the
measured time from the break to the Event with rounds back to back, the rounds that took, and the round time.

    .venv/bin/python benchmarks/guard/latency.py [--kinds nic_disconnected ...] [--output benchmarks/guard/results.json]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, 'tests'), os.path.join(ROOT, 'tests', 'integration', 'modules')]

from pyVmomi import vim  # noqa: E402

import _egress_cluster as ec  # noqa: E402
from twin import ctl  # noqa: E402
from twin.fixture import Twin  # noqa: E402

# NodeNetworkState refreshed every 2 s as in the tests (a real handler: about every 60 s, which a kind read from it - the
# gateway route - adds to its latency on a cluster; the vCenter kinds are read from vCenter at each round)
TWIN_OPTIONS = {'workers': 3, 'carrier_loss': 'keep', 'nns_refresh': 2.0}
VARIABLES = '@examples/twin-cluster.yml'


def set_portgroup(twin, host, old, new, vlan):
    spec = vim.host.PortGroup.Specification(name=new, vlanId=vlan, vswitchName=ec.PORTGROUP['switch'], policy=vim.host.NetworkPolicy())
    ec.host_object(twin, host).configManager.networkSystem.UpdatePortGroup(pgName=old, portgrp=spec)


def set_uplinks(twin, host, devices):
    bridge = vim.host.VirtualSwitch.BondBridge(nicDevice=devices) if devices else None
    spec = vim.host.VirtualSwitch.Specification(numPorts=128, mtu=1500, bridge=bridge)
    ec.host_object(twin, host).configManager.networkSystem.UpdateVirtualSwitch(vswitchName=ec.PORTGROUP['switch'], spec=spec)


def set_gateway_route(twin, node, state=None):
    mac = next(nic['mac'] for nic in ec.inventory_vm(twin, node)['nics'] if nic['network'] == ec.PORTGROUP['name'])
    interface = ec.nns_interface(twin, node, mac)['name']
    body = {'spec': {'desiredState': {'routes': {'config': [ec.gateway_route(interface, state)]}}}}
    twin.custom_objects().patch_cluster_custom_object(name='test-egress-%s' % node, body=body, **ec.NNCP)


# kind -> (break, restore), each called with (twin, node, host)
KINDS = {
    'nic_disconnected': (lambda twin, node, host: ec.set_nic_connected(twin, node, False),
                         lambda twin, node, host: ec.set_nic_connected(twin, node, True)),
    'portgroup_vlan_mismatch': (lambda twin, node, host: set_portgroup(twin, host, ec.PORTGROUP['name'], ec.PORTGROUP['name'], 130),
                                lambda twin, node, host: set_portgroup(twin, host, ec.PORTGROUP['name'], ec.PORTGROUP['name'],
                                                                       ec.PORTGROUP['vlan_id'])),
    'portgroup_missing_on_host': (lambda twin, node, host: set_portgroup(twin, host, ec.PORTGROUP['name'], 'renamed-by-hand',
                                                                         ec.PORTGROUP['vlan_id']),
                                  lambda twin, node, host: set_portgroup(twin, host, 'renamed-by-hand', ec.PORTGROUP['name'],
                                                                         ec.PORTGROUP['vlan_id'])),
    'vswitch_no_uplink': (lambda twin, node, host: set_uplinks(twin, host, []),
                          lambda twin, node, host: set_uplinks(twin, host, ['vmnic1'])),
    'uplink_link_down': (lambda twin, node, host: twin.set_pnic_link(host, 'vmnic1', False),
                         lambda twin, node, host: twin.set_pnic_link(host, 'vmnic1', True)),
    'gateway_route_missing': (lambda twin, node, host: set_gateway_route(twin, node, 'absent'),
                              lambda twin, node, host: set_gateway_route(twin, node)),
}


def events(twin, reason):
    selector = 'involvedObject.kind=EgressIP,involvedObject.name=payments,reason=%s' % reason
    return twin.core_v1().list_namespaced_event('default', field_selector=selector).items


class Poller(threading.Thread):
    """Notes the monotonic time at which an Event of `reason` appears that was not there at the start."""

    def __init__(self, twin, reason):
        super().__init__(daemon=True)
        self.twin, self.reason = twin, reason
        self.known = set((item.metadata.name, item.count) for item in events(twin, reason))
        self.seen = None
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set() and self.seen is None:
            if any((item.metadata.name, item.count) not in self.known for item in events(self.twin, self.reason)):
                self.seen = time.monotonic()
            time.sleep(0.2)


def round_once(twin):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.build'), ANSIBLE_NOCOLOR='1', **twin.env)
    env.pop('KUBECONFIG', None)
    env.update(twin.env)
    started = time.monotonic()
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i',
                           os.path.join(ROOT, 'examples', 'inventory', 'localhost.yml'), os.path.join(ROOT, 'playbooks', 'guard.yml'),
                           '-e', VARIABLES], env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.returncode, time.monotonic() - started


def rounds_until(twin, reason, started, limit=600):
    """Guard rounds back to back until an Event of `reason` appears; (seconds from `started`, rounds, round times)."""
    poller = Poller(twin, reason)
    poller.start()
    times = []
    try:
        while poller.seen is None and time.monotonic() - started < limit:
            times.append(round_once(twin)[1])
            poller.join(timeout=1.0)
    finally:
        poller.stop.set()
    return (None if poller.seen is None else poller.seen - started), len(times), times


def measure(twin, kinds):
    results = {}
    round_once(twin)  # a first round records the healthy state (no Event: nothing to recover from)
    for kind in kinds:
        node = ec.assignments(twin)['10.20.0.200']
        host = ec.inventory_vm(twin, node)['host']
        breaks, restore = KINDS[kind]
        started = time.monotonic()
        breaks(twin, node, host)
        latency, rounds, times = rounds_until(twin, 'EgressIPBlackhole', started)
        restore(twin, node, host)
        recovered, recovery_rounds, _times = rounds_until(twin, 'EgressIPHealthy', time.monotonic())
        results[kind] = {'latency_s': None if latency is None else round(latency, 2), 'rounds': rounds,
                         'round_s': [round(value, 2) for value in times], 'node': node, 'host': host,
                         'recovered_s': None if recovered is None else round(recovered, 2), 'recovery_rounds': recovery_rounds}
        print('%-26s latency %6s s after %d round(s) (round %s s); healthy again %s s later' % (
            kind, results[kind]['latency_s'], rounds, ', '.join('%.1f' % value for value in times), results[kind]['recovered_s']))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--kinds', nargs='*', default=list(KINDS), choices=list(KINDS))
    parser.add_argument('--output', help='write the results as JSON')
    args = parser.parse_args()
    state = tempfile.mkdtemp(prefix='guard-latency-')
    twin = Twin.start(state, binary=ctl.build_vcsim(), **TWIN_OPTIONS)
    try:
        ec.make_egress_cluster(twin)
        load = os.getloadavg()[0]
        results = measure(twin, args.kinds)
        document = {'machine': {'cpus': os.cpu_count(), 'python': platform.python_version(), 'load_1min_start': round(load, 2),
                                'load_1min_end': round(os.getloadavg()[0], 2)},
                    'twin': TWIN_OPTIONS, 'results': results}
        if args.output:
            with open(args.output, 'w', encoding='utf-8') as handle:
                json.dump(document, handle, indent=1, sort_keys=True)
                handle.write('\n')
    finally:
        twin.stop()


if __name__ == '__main__':
    main()
