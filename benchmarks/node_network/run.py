"""Benchmark: the node_network and egress_nodes roles against the peers' kubernetes.core loop (not a timed test).

    .venv/bin/python benchmarks/node_network/run.py --nodes 50 200 --repeat 3

For each size N, each repetition and each way, a fresh twin with N worker nodes (3 masters, 3 ESXi hosts)
gets, outside the timed part, a standard port group on vSwitch1 of every host and one vmxnet3 NIC on it per
worker VM (pyVmomi, as the vsphere_network role leaves it), and the script waits until every worker's
NodeNetworkState shows that NIC. Then, timed, each way gives every worker's NIC a static address with a
gateway route (one NodeNetworkConfigurationPolicy per node, NIC matched by MAC), turns on IP forwarding on it
(one Tuned) and labels the node `k8s.ovn.org/egress-assignable`, then runs again with nothing to do:

- ours: ansible-playbook benchmarks/node_network/ours.yml (roles ocp.egressip.node_network and
  ocp.egressip.egress_nodes, role defaults: they wait until the policies are Available and the nodes capable);
- peers: ansible-playbook benchmarks/node_network/peers.yml (kubernetes.core.k8s in a loop, one task per node
  for the policy and one per node for the label, plus one Tuned), from PyPI's `ansible`; --peer-wait makes the
  policy task wait until each policy is Available (k8s wait_condition), as the roles do.

Measured per run: wall time of the ansible-playbook process, Kubernetes API requests from the twin's request
log (reset before each run; total, per node, per verb and resource, writes), rc, changed, load average. Both
ways run with the same ansible-core (the peer venv's). The table shows the median time of the repetitions.
After the first apply the script checks the outcome (every worker labelled, its address in host-cidrs).
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import _bench  # noqa: E402  pylint: disable=wrong-import-position

WAYS = {'ours': 'ours.yml', 'peers': 'peers.yml'}
PORTGROUP = 'bench-egress'
CIDR, PREFIX, GATEWAY, FIRST = '10.20.0.0/23', 23, '10.20.0.1', 10
LABEL = 'k8s.ovn.org/egress-assignable'
SELECTOR = {'node-role.kubernetes.io/worker': ''}


def address(index):
    number = FIRST + index
    return '10.20.%d.%d' % (number // 256, number % 256)


def ours_vars(nics):
    return {'egressip_network': {'cidr': CIDR, 'gateway': GATEWAY, 'route_metric': 200,
                                 'node_address_range': '%s-%s' % (address(0), address(len(nics) + 20))},
            'egressip_nodes': {'selector': SELECTOR},
            'vsphere_network_macs': dict((node, mac) for node, mac in nics)}


def peer_vars(nics, wait):
    return {'bench_nodes': [{'node': node, 'mac': mac, 'address': address(index)} for index, (node, mac) in enumerate(nics)],
            'bench_prefix': PREFIX, 'bench_gateway': GATEWAY, 'bench_metric': 200, 'bench_interface': 'ens224', 'bench_wait': wait}


def _views(content, kind):
    from pyVmomi import vim  # pylint: disable=import-outside-toplevel
    view = content.viewManager.CreateContainerView(content.rootFolder, [getattr(vim, kind)], True)
    try:
        return list(view.view)
    finally:
        view.DestroyView()


def prepare_nics(twin, workers, timeout):
    """Port group on vSwitch1 of every host, one vmxnet3 NIC on it per worker VM; [(node, mac)] in worker order."""
    from pyVim.task import WaitForTasks  # pylint: disable=import-outside-toplevel
    from pyVmomi import vim  # pylint: disable=import-outside-toplevel
    si = twin.vsphere()
    content = si.RetrieveContent()
    for host in _views(content, 'HostSystem'):
        host.configManager.networkSystem.AddPortGroup(vim.host.PortGroup.Specification(
            name=PORTGROUP, vlanId=120, vswitchName='vSwitch1', policy=vim.host.NetworkPolicy()))
    wanted = set(workers)
    tasks = []
    for vm in _views(content, 'VirtualMachine'):
        if vm.name in wanted:
            nic = vim.vm.device.VirtualVmxnet3(
                key=-101, backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=PORTGROUP),
                connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))
            tasks.append(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))
    WaitForTasks(tasks, si=si)
    macs = {}
    for vm in twin.inventory()['vms']:
        for nic in vm['nics']:
            if vm['name'] in wanted and nic['network'] == PORTGROUP:
                macs[vm['name']] = nic['mac']
    missing = sorted(wanted - set(macs))
    if missing:
        raise RuntimeError('no %s NIC on %s' % (PORTGROUP, ', '.join(missing)))
    twin.wait_for(lambda: _nns_macs_seen(twin, macs), timeout=timeout, interval=0.5,
                  what='every NodeNetworkState to show the new NIC')
    return [(node, macs[node]) for node in workers]


def _nns_macs_seen(twin, macs):
    states = twin.custom_objects().list_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates')['items']
    seen = {}
    for state in states:
        seen[state['metadata']['name']] = set(str(interface.get('mac-address') or '').lower() for interface in
                                              ((state.get('status') or {}).get('currentState') or {}).get('interfaces') or [])
    return all(mac.lower() in seen.get(node, ()) for node, mac in macs.items())


def outcome(twin, nics):
    """After the first apply: nodes labelled and nodes whose host-cidrs show a secondary address."""
    nodes = dict((node.metadata.name, node) for node in twin.core_v1().list_node().items)
    labelled = [node for node, _mac in nics if LABEL in (nodes[node].metadata.labels or {})]
    addressed = [node for node, _mac in nics
                 if any(cidr.startswith('10.20.') for cidr in json.loads((nodes[node].metadata.annotations or {}).get('k8s.ovn.org/host-cidrs') or '[]'))]
    return {'labelled': len(labelled), 'addressed': len(addressed)}


def bench_way(way, size, rep, args, binary, log_dir):
    """One fresh twin: NICs prepared, then the first apply and the no-op rerun of one way."""
    twin = _bench.start_twin('bench-node-twin-', workers=size, masters=3, hosts=args.hosts, binary=binary)
    try:
        workers = ['ocp1-worker-%d' % index for index in range(size)]
        started = time.monotonic()
        nics = prepare_nics(twin, workers, timeout=args.prepare_timeout)
        print('[bench] N=%d: %d NICs prepared in %.1f s (not timed)' % (size, len(nics), time.monotonic() - started), flush=True)
        variables = ours_vars(nics) if way == 'ours' else peer_vars(nics, args.peer_wait)

        def run_phase(phase):
            result = _bench.run_playbook(twin, args.peer_venv, os.path.join(HERE, WAYS[way]), variables,
                                         os.path.join(log_dir, '%s-%s-%d-r%d.log' % (way, phase, size, rep)), args.timeout)
            if phase == 'apply':
                result['outcome'] = outcome(twin, nics)
            return result

        return _bench.run_phases(way, size, rep, run_phase, lambda result: (
            '%d Kubernetes requests (%.2f per node, %d writes), changed=%s, load %s%s'
            % (result['kube']['total'], result['kube']['total'] / float(size), result['kube']['writes'], result['changed'],
               result['load_before'][0], (' outcome %s' % result['outcome']) if 'outcome' in result else '')))
    finally:
        _bench.stop_twin(twin, keep=args.keep_twin)


def summary(runs, size):
    def fields(done):
        total = _bench.same_or_range([run['kube']['total'] for run in done])
        return {'kube_per_node': round(total / float(size), 2) if isinstance(total, int) else [round(value / float(size), 2) for value in total],
                'kube_by_kind': done[0]['kube']['by_kind'],
                'kube_writes': _bench.same_or_range([run['kube']['writes'] for run in done]),
                'outcome': done[0].get('outcome')}
    return _bench.summarize(runs, fields)


def markdown(results):
    return _bench.versus_table(results, 'nodes', ('ours: API requests (per node)', 'peers: API requests (per node)'), lambda ours, peers: (
        '%s (%s)' % (ours['kube_requests'], ours['kube_per_node']), '%s (%s)' % (peers['kube_requests'], peers['kube_per_node'])))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--nodes', '--sizes', type=int, nargs='+', default=[50, 200])
    parser.add_argument('--peer-wait', action='store_true', help='the peers wait for each policy to be Available')
    parser.add_argument('--ways', nargs='+', choices=sorted(WAYS), default=sorted(WAYS))
    parser.add_argument('--prepare-timeout', type=int, default=300, help='seconds to wait for the NICs to show in NodeNetworkState')
    _bench.add_options(parser, os.path.join(_bench.REPO, 'reports', 'bench-node-network.json'))
    args = parser.parse_args(argv)
    if args.table:
        results = _bench.read_json(args.output).get('results', {})
        for size, value in results.items():
            value['median'] = summary(value['runs'], int(size))
        print(markdown(results))
        return 0
    _bench.check_peer_venv(parser, args.peer_venv)
    log_dir = os.path.join(os.path.dirname(os.path.abspath(args.output)), 'bench-node-network-logs')
    data, binary = _bench.begin(args.output, log_dir)
    data['peer_wait'] = args.peer_wait
    results = _bench.run_sizes(args, data, args.nodes, [way for way in sorted(WAYS) if way in args.ways],
                               lambda way, size, rep: bench_way(way, size, rep, args, binary, log_dir), summary)
    _bench.print_table(markdown(results), args.markdown)
    return 0


if __name__ == '__main__':
    sys.exit(main())
