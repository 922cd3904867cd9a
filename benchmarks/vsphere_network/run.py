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
PHASES = ('apply', 'noop')


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
        results = {}
        for phase in PHASES:
            label = '%s-%s-%d-r%d' % (way, phase, size, rep)
            variables = ours_vars(size) if way == 'ours' else peer_vars(size)
            result = _bench.run_playbook(twin, args.peer_venv, os.path.join(HERE, WAYS[way]), variables,
                                         os.path.join(log_dir, label + '.log'), args.timeout)
            results[phase] = result
            print('[bench] %-5s %-5s N=%-3d rep %d: rc=%s %.1f s (CPU %.1f s client + %.1f s twin), %d vCenter requests, '
                  '%d Kubernetes requests, changed=%s, load %s%s'
                  % (way, phase, size, rep, result['rc'], result['seconds'], result['cpu_client'], result['cpu_twin'],
                     result['vcenter']['total'], result['kube']['total'], result['changed'], result['load_before'][0],
                     ('  ERROR ' + result['error']) if 'error' in result else ''), flush=True)
            if result['rc'] != 0:
                break
        return results
    finally:
        _bench.stop_twin(twin, keep=args.keep_twin)


def summary(runs):
    """Median seconds per way and phase, request counts (equal in every repetition), load range."""
    out = {}
    for way in WAYS:
        out[way] = {}
        for phase in PHASES:
            done = [run[way][phase] for run in runs if phase in run[way]]
            out[way][phase] = {
                'seconds': _bench.median_of(done),
                'seconds_all': [run['seconds'] for run in done],
                'cpu': _bench.median_cpu(done),
                'cpu_client': _bench.median_of(done, 'cpu_client'),
                'cpu_twin': _bench.median_of(done, 'cpu_twin'),
                'vcenter_requests': _bench.same_or_range([run['vcenter']['total'] for run in done]),
                'kube_requests': _bench.same_or_range([run['kube']['total'] for run in done]),
                'changed': _bench.same_or_range([run['changed'] for run in done]),
                'rc': _bench.same_or_range([run['rc'] for run in done]),
                'load_1min': [min(run['load_before'][0] for run in done), max(run['load_before'][0] for run in done)] if done else None,
                'errors': sorted(set(run['error'] for run in done if 'error' in run)),
            }
    return out


def markdown(results):
    lines = ['| VMs | run | ours: s | peers: s | speed-up (per repetition) | ours: CPU s, client + twin | peers: CPU s, client + twin | client CPU ratio '
             '| ours: vCenter requests | peers: vCenter requests | changed (ours / peers) | load (1 min) |',
             '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |']
    for size in sorted(results, key=int):
        runs, med = results[size]['runs'], results[size]['median']
        for phase in PHASES:
            ours, peers = med['ours'][phase], med['peers'][phase]
            ratios = sorted(_bench.ratio(run['peers'][phase]['seconds'], run['ours'][phase]['seconds'])
                            for run in runs if phase in run['ours'] and phase in run['peers'])
            loads = (ours['load_1min'] or []) + (peers['load_1min'] or []) or [0.0]
            lines.append('| %s | %s | %s | %s | %sx (%s) | %s | %s | %sx | %s | %s | %s / %s | %.1f-%.1f |' % (
                size, 'first apply' if phase == 'apply' else 'no-op rerun', ours['seconds'], peers['seconds'],
                _bench.ratio(peers['seconds'], ours['seconds']), ', '.join('%s' % value for value in ratios),
                _bench.cpu_text(ours), _bench.cpu_text(peers), _bench.ratio(peers['cpu_client'], ours['cpu_client']),
                ours['vcenter_requests'], peers['vcenter_requests'], ours['changed'], peers['changed'], min(loads), max(loads)))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--sizes', '--vms', type=int, nargs='+', default=[10, 50, 200])
    parser.add_argument('--repeat', type=int, default=3, help='repetitions per size; the table shows the median')
    parser.add_argument('--peer-venv', default=_bench.DEFAULT_PEER_VENV, help=_bench.PEER_VENV_HELP)
    parser.add_argument('--hosts', type=int, default=3)
    parser.add_argument('--keep-twin', action='store_true', help='keep the twins\' state directories (logs) in $TMPDIR')
    parser.add_argument('--timeout', type=int, default=1800, help='seconds one ansible-playbook run may take')
    parser.add_argument('--output', default=os.path.join(_bench.REPO, 'reports', 'bench-vsphere-network.json'))
    parser.add_argument('--markdown', help='also write the Markdown table to this file')
    parser.add_argument('--table', action='store_true', help='only print the table of the results already in --output')
    args = parser.parse_args(argv)
    if args.table:
        results = _bench.read_json(args.output).get('results', {})
        for value in results.values():
            value['median'] = summary(value['runs'])
        print(markdown(results))
        return 0
    _bench.check_peer_venv(parser, args.peer_venv)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    log_dir = os.path.join(os.path.dirname(os.path.abspath(args.output)), 'bench-vsphere-network-logs')
    os.makedirs(log_dir, exist_ok=True)
    binary = _bench.ctl.build_vcsim()
    data = _bench.read_json(args.output)
    data['machine'] = _bench.machine()
    results = dict((size, value) for size, value in data.get('results', {}).items() if 'runs' in value)
    data['results'] = results
    for size in args.sizes:
        runs = []
        for rep in range(args.repeat):
            order = list(WAYS) if rep % 2 == 0 else list(reversed(list(WAYS)))
            run = {}
            for way in order:
                run[way] = bench_way(way, size, rep, args, binary, log_dir)
            runs.append(run)
            results[str(size)] = {'runs': runs, 'median': summary(runs)}
            _bench.write_json(args.output, data)
    table = markdown(results)
    print(table)
    if args.markdown:
        with open(args.markdown, 'w', encoding='utf-8') as handle:
            handle.write(table)
    return 0


if __name__ == '__main__':
    sys.exit(main())
