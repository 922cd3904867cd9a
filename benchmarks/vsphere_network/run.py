"""Benchmark: the vsphere_network role against the peers' loop, on the same twin (not a timed test).

    .venv/bin/python benchmarks/vsphere_network/run.py --peer-venv .cache/bench-venv --sizes 10 50 200

For each size N a fresh twin is started with N worker VMs (3 masters, 3 ESXi hosts). On that
twin, each way creates its own standard port group on vSwitch1 of every host and gives every
worker VM one vmxnet3 NIC on it, then runs again with nothing to do:

- ours: ansible-playbook benchmarks/vsphere_network/ours.yml (role ocp.egressip.vsphere_network:
  vsphere_portgroup, vsphere_vm_nic over the worker nodes, machineset_network);
- peers: ansible-playbook benchmarks/vsphere_network/peers.yml (community.vmware.vmware_portgroup,
  then community.vmware.vmware_guest_network in a loop over the VM names), from PyPI's `ansible`.

Measured per run: wall time of the ansible-playbook process, vCenter SOAP requests (the twin's
request log, reset before each run), Kubernetes requests, rc. Both ways run with the same
ansible-core (the peer venv's) so only the modules differ. Results go to a JSON file and a Markdown
table (--markdown); a peer that fails against the simulator is recorded as failed, with its error.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'tests'))

from twin import ctl  # noqa: E402  pylint: disable=wrong-import-position
from twin.fixture import Twin  # noqa: E402  pylint: disable=wrong-import-position

RECAP = re.compile(r'^localhost\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def ours_vars(size):
    return {'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                                 'portgroup': {'name': 'bench-ours', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}},
            'egressip_nodes': {'selector': {'node-role.kubernetes.io/worker': ''}}}


def peer_vars(size):
    return {'bench_datacenter': 'DC0', 'bench_cluster': 'DC0_C0', 'bench_switch': 'vSwitch1', 'bench_portgroup': 'bench-peer',
            'bench_vlan': 120, 'bench_vms': ['ocp1-worker-%d' % index for index in range(size)]}


def playbook_env(twin, peer_venv):
    env = dict(os.environ)
    env.pop('KUBECONFIG', None)
    env.update(twin.env)
    collections = os.path.join(REPO, '.build')
    env.update({'ANSIBLE_COLLECTIONS_PATH': collections, 'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0',
                'ANSIBLE_PYTHON_INTERPRETER': os.path.join(peer_venv, 'bin', 'python'),
                'ANSIBLE_LOCALHOST_WARNING': 'false', 'ANSIBLE_INVENTORY_UNPARSED_WARNING': 'false'})
    return {key: str(value) for key, value in env.items()}


def run(twin, peer_venv, playbook, variables, log_dir, label):
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as handle:
        json.dump(variables, handle)
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    argv = [os.path.join(peer_venv, 'bin', 'ansible-playbook'), os.path.join(HERE, playbook), '-e', '@' + handle.name]
    started = time.monotonic()
    proc = subprocess.run(argv, env=playbook_env(twin, peer_venv), capture_output=True, text=True, check=False, cwd=REPO)
    seconds = time.monotonic() - started
    os.unlink(handle.name)
    with open(os.path.join(log_dir, '%s.log' % label), 'w', encoding='utf-8') as log:
        log.write(proc.stdout + '\n--- stderr ---\n' + proc.stderr)
    vcenter = twin.vcsim_requests()['counts']
    kube = twin.kube_requests()['counts']
    recap = RECAP.search(proc.stdout)
    result = {'rc': proc.returncode, 'seconds': round(seconds, 2), 'vcenter_requests': sum(vcenter.values()),
              'vcenter_by_method': vcenter, 'kube_requests': sum(kube.values()),
              'changed': int(recap.group(2)) if recap else None, 'failed': int(recap.group(4)) if recap else None}
    if proc.returncode != 0:
        errors = [line for line in proc.stdout.splitlines() if 'FAILED' in line or 'ERROR' in line or 'fatal' in line]
        result['error'] = (errors[-1] if errors else proc.stderr.strip().splitlines()[-1:] or ['unknown'])[:2000]
    return result


def bench_size(size, peer_venv, binary, log_dir, hosts):
    state_dir = tempfile.mkdtemp(prefix='bench-twin-')
    twin = Twin.start(state_dir, workers=size, masters=3, hosts=hosts, binary=binary)
    try:
        results = {}
        for way, playbook, variables in (('ours', 'ours.yml', ours_vars(size)), ('peers', 'peers.yml', peer_vars(size))):
            results[way] = {}
            for phase in ('apply', 'noop'):
                label = '%s-%s-%d' % (way, phase, size)
                results[way][phase] = run(twin, peer_venv, playbook, variables, log_dir, label)
                print('[bench] %-5s %-5s N=%-3d %s' % (way, phase, size, json.dumps(
                    dict((k, v) for k, v in results[way][phase].items() if k != 'vcenter_by_method'))), flush=True)
        return results
    finally:
        twin.stop()


def ratio(peer, ours):
    return round(peer / ours, 1) if ours else None


def markdown(all_results):
    lines = ['| VMs | run | ours: s | peers: s | speed-up | ours: vCenter requests | peers: vCenter requests | peers rc |',
             '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |']
    for size in sorted(all_results, key=int):
        result = all_results[size]
        for phase in ('apply', 'noop'):
            ours, peers = result['ours'][phase], result['peers'][phase]
            lines.append('| %s | %s | %.1f | %.1f | %sx | %d | %d | %d |' % (
                size, 'first apply' if phase == 'apply' else 'no-op rerun', ours['seconds'], peers['seconds'],
                ratio(peers['seconds'], ours['seconds']), ours['vcenter_requests'], peers['vcenter_requests'], peers['rc']))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--sizes', type=int, nargs='+', default=[10, 50, 200])
    parser.add_argument('--peer-venv', default=os.path.join(REPO, '.cache', 'bench-venv'),
                        help='a virtualenv with PyPI\'s `ansible` (community.vmware), pyvmomi, kubernetes and netaddr')
    parser.add_argument('--hosts', type=int, default=3)
    parser.add_argument('--output', default=os.path.join(REPO, 'reports', 'bench-vsphere-network.json'))
    parser.add_argument('--markdown', help='also write the Markdown table to this file')
    args = parser.parse_args(argv)
    if not os.path.exists(os.path.join(args.peer_venv, 'bin', 'ansible-playbook')):
        parser.error('no ansible-playbook in %s: python3 -m venv %s && %s/bin/pip install ansible pyvmomi kubernetes netaddr'
                     % (args.peer_venv, args.peer_venv, args.peer_venv))
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    log_dir = os.path.join(os.path.dirname(args.output), 'bench-vsphere-network-logs')
    os.makedirs(log_dir, exist_ok=True)
    binary = ctl.build_vcsim()
    results = {}
    if os.path.exists(args.output):
        with open(args.output, encoding='utf-8') as handle:
            results = json.load(handle).get('results', {})
    for size in args.sizes:
        results[str(size)] = bench_size(size, args.peer_venv, binary, log_dir, args.hosts)
        with open(args.output, 'w', encoding='utf-8') as handle:
            json.dump({'results': results}, handle, indent=1, sort_keys=True)
    table = markdown(results)
    print(table)
    if args.markdown:
        with open(args.markdown, 'w', encoding='utf-8') as handle:
            handle.write(table)
    return 0


if __name__ == '__main__':
    sys.exit(main())
