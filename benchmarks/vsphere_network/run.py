"""Benchmark: the vsphere_network role against the peers' loop, on the same twin (not a timed test).

    .venv/bin/python benchmarks/vsphere_network/run.py --sizes 10 50 200 --repeat 3

For each size N and each repetition, each way gets a fresh twin with N worker VMs (3 masters, 3 ESXi
hosts), creates a standard port group on vSwitch1 of every host and gives every worker VM one vmxnet3
NIC on it, then runs again with nothing to do:

- ours: ansible-playbook benchmarks/vsphere_network/ours.yml (role ocp.egressip.vsphere_network:
  vsphere_portgroup, vsphere_vm_nic over the worker nodes, machineset_network);
- peers: ansible-playbook benchmarks/vsphere_network/peers.yml (community.vmware.vmware_portgroup,
  then community.vmware.vmware_guest_network in a loop over the VM names), from PyPI's `ansible`.

Measured per run: wall time of the ansible-playbook process, vCenter SOAP requests (the twin's request
log, reset before each run), Kubernetes requests, rc, the load average before and after. Both ways run
with the same ansible-core (the peer venv's) so only the modules differ. The repetitions alternate which
way goes first; the table shows the median time of the repetitions (request counts do not vary). A peer
that fails against the simulator is recorded as failed, with its error.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import _bench  # noqa: E402  pylint: disable=wrong-import-position

WAYS = {'ours': 'ours.yml', 'peers': 'peers.yml'}


def ours_vars(size):  # pylint: disable=unused-argument
    return {'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                                 'portgroup': {'name': 'bench-ours', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}},
            'egressip_nodes': {'selector': {'node-role.kubernetes.io/worker': ''}}}


def peer_vars(size):
    return {'bench_datacenter': 'DC0', 'bench_cluster': 'DC0_C0', 'bench_switch': 'vSwitch1', 'bench_portgroup': 'bench-peer',
            'bench_vlan': 120, 'bench_vms': ['ocp1-worker-%d' % index for index in range(size)]}


def bench_way(way, size, rep, args, binary, log_dir):
    """One fresh twin: first apply, then the no-op rerun, of one way."""
    twin = _bench.start_twin('bench-vsphere-twin-', workers=size, masters=3, hosts=args.hosts, binary=binary)
    try:
        variables = ours_vars(size) if way == 'ours' else peer_vars(size)
        return _bench.run_phases(way, size, rep, lambda phase: _bench.run_playbook(
            twin, args.peer_venv, os.path.join(HERE, WAYS[way]), variables,
            os.path.join(log_dir, '%s-%s-%d-r%d.log' % (way, phase, size, rep)), args.timeout), lambda result: (
            '%d vCenter requests, %d Kubernetes requests, changed=%s, load %s'
            % (result['vcenter']['total'], result['kube']['total'], result['changed'], result['load_before'][0])))
    finally:
        _bench.stop_twin(twin, keep=args.keep_twin)


def summary(runs, size=None):  # pylint: disable=unused-argument
    """Median seconds per way and phase, request counts (equal in every repetition), load range."""
    return _bench.summarize(runs, lambda done: {'vcenter_requests': _bench.same_or_range([run['vcenter']['total'] for run in done])})


def markdown(results):
    return _bench.versus_table(results, 'VMs', ('ours: vCenter requests', 'peers: vCenter requests'),
                               lambda ours, peers: (ours['vcenter_requests'], peers['vcenter_requests']))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--sizes', '--vms', type=int, nargs='+', default=[10, 50, 200])
    _bench.add_options(parser, os.path.join(_bench.REPO, 'reports', 'bench-vsphere-network.json'))
    args = parser.parse_args(argv)
    if args.table:
        results = _bench.read_json(args.output).get('results', {})
        for value in results.values():
            value['median'] = summary(value['runs'])
        print(markdown(results))
        return 0
    _bench.check_peer_venv(parser, args.peer_venv)
    log_dir = os.path.join(os.path.dirname(os.path.abspath(args.output)), 'bench-vsphere-network-logs')
    data, binary = _bench.begin(args.output, log_dir)
    data['results'] = dict((size, value) for size, value in data.get('results', {}).items() if 'runs' in value)
    results = _bench.run_sizes(args, data, args.sizes, list(WAYS),
                               lambda way, size, rep: bench_way(way, size, rep, args, binary, log_dir), summary)
    _bench.print_table(markdown(results), args.markdown)
    return 0


if __name__ == '__main__':
    sys.exit(main())
