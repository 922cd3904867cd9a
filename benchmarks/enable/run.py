"""Benchmark: the whole `enable` playbook on the twin, first apply and no-op rerun (not a timed test).

    .venv/bin/python benchmarks/enable/run.py --nodes 50 200 500 --repeat 1
    .venv/bin/python benchmarks/enable/run.py --nodes 500 --ways baseline ours --baseline /work/wt/baseline

For each size N, each repetition and each way, a fresh twin with N worker nodes (3 masters, 3 ESXi hosts,
NodeNetworkState refreshed every 2 s as in the tests) runs playbooks/enable.yml with the twin's variables
(examples/twin-cluster.yml, the wire check included) on a /22 network whose node address range fits 500 nodes,
then runs it again with nothing to do. A way is a checkout of the collection: `ours` is this one, `baseline` is
another checkout (--baseline, e.g. `git worktree add /work/wt/baseline <commit>`) so that two versions are
measured side by side in the same run, on the same machine load. Both run this checkout's .venv ansible-playbook.

Measured per run: wall time of the ansible-playbook process, CPU seconds (user + system) of its process tree and
of the twin, Kubernetes API requests and vCenter SOAP calls from the twin's request logs (reset before each run;
total, per verb and resource), rc, changed, the load average, and the seconds of each role and of the slowest
tasks (the junit callback's task times).
"""

import argparse
import copy
import glob
import os
import sys
import tempfile
import xml.etree.ElementTree as ET  # nosec: our own junit callback output

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import _bench  # noqa: E402  pylint: disable=wrong-import-position

NETWORK = {'cidr': '10.20.0.0/22', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.3.199', 'route_metric': 200}
EGRESS_IPS = ['10.20.3.250', '10.20.3.251']


def variables():
    with open(os.path.join(_bench.REPO, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
        data = yaml.safe_load(handle)
    data['egressip_network'] = dict(NETWORK)
    data['egressip_objects'] = copy.deepcopy(data['egressip_objects'])
    data['egressip_objects'][0]['egress_ips'] = list(EGRESS_IPS)
    return data


def collections_path(root):
    """A collections directory whose ocp/egressip is the checkout `root` (made once, beside the checkout's .build)."""
    base = os.path.join(root, '.build')
    link = os.path.join(base, 'ansible_collections', 'ocp', 'egressip')
    if not os.path.exists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.abspath(root), link)
    return base


def task_times(junit_dir):
    """{'roles': {role: s}, 'tasks': [[s, name], ...] (the ten slowest)} from the junit callback's report."""
    roles, tasks = {}, []
    for path in glob.glob(os.path.join(junit_dir, '*.xml')):
        for case in ET.parse(path).getroot().iter('testcase'):  # nosec: our own file
            name, seconds = case.get('name', ''), float(case.get('time') or 0)
            task = name.split('] ', 1)[-1]
            role = task.split(' : ', 1)[0] if ' : ' in task else '(playbook)'
            roles[role] = round(roles.get(role, 0.0) + seconds, 2)
            tasks.append([round(seconds, 2), task])
    return {'roles': roles, 'tasks': sorted(tasks, reverse=True)[:10]}


def outcome(twin):
    """After the first apply: where the two egress IPs are assigned."""
    egressip = twin.custom_objects().get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'payments')
    return {item['egressIP']: item['node'] for item in (egressip.get('status') or {}).get('items') or []}


def run_phase(twin, root, args, label, log_dir):
    junit_dir = tempfile.mkdtemp(prefix='bench-enable-junit-')
    env = {'ANSIBLE_COLLECTIONS_PATH': collections_path(root), 'ANSIBLE_CALLBACKS_ENABLED': 'ansible.builtin.junit',
           'JUNIT_OUTPUT_DIR': junit_dir, 'JUNIT_HIDE_TASK_ARGUMENTS': 'true'}
    result = _bench.run_playbook(twin, os.path.join(_bench.REPO, '.venv'), os.path.join(root, 'playbooks', 'enable.yml'),
                                 variables(), os.path.join(log_dir, label + '.log'), args.timeout, env=env)
    result['times'] = task_times(junit_dir)
    for path in glob.glob(os.path.join(junit_dir, '*')):
        os.unlink(path)
    os.rmdir(junit_dir)
    return result


def bench_way(way, root, size, rep, args, binary, log_dir):
    """One fresh twin: the first apply and the no-op rerun of one checkout."""
    twin = _bench.start_twin('bench-enable-twin-', workers=size, masters=3, hosts=args.hosts, binary=binary, nns_refresh=2.0)
    try:
        def run(phase):
            result = run_phase(twin, root, args, '%s-%s-%d-r%d' % (way, phase, size, rep), log_dir)
            if phase == 'apply':
                result['outcome'] = outcome(twin)
            return result

        def details(result):
            roles = ', '.join('%s %.1f' % (role.rsplit('.', 1)[-1], seconds) for role, seconds in
                              sorted(result['times']['roles'].items(), key=lambda item: -item[1])[:6])
            return ('%d Kubernetes requests (%d writes), %d vCenter calls, changed=%s, load %s; roles: %s'
                    % (result['kube']['total'], result['kube']['writes'], result['vcenter']['total'], result['changed'],
                       result['load_before'][0], roles))
        return _bench.run_phases(way, size, rep, run, details)
    finally:
        _bench.stop_twin(twin, keep=args.keep_twin)


def summary(runs, size=None):  # pylint: disable=unused-argument
    return _bench.summarize(runs, lambda done: {
        'kube_writes': _bench.same_or_range([run['kube']['writes'] for run in done]),
        'vcenter_calls': _bench.same_or_range([run['vcenter']['total'] for run in done]),
        'roles': done[0]['times']['roles']})


def markdown(results):
    lines = ['| nodes | way | run | wall s | client CPU s | twin CPU s | Kubernetes requests (writes) | vCenter calls | changed | load (1 min) |',
             '| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |']
    for size in sorted(results, key=int):
        for way, phases in sorted(results[size]['median'].items()):
            for phase in _bench.PHASES:
                row = phases.get(phase)
                if row:
                    lines.append('| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s-%s |' % (
                        size, way, _bench.phase_name(phase), row['seconds'], row['cpu_client'],
                        row['cpu_twin'], row['kube_requests'], row['kube_writes'], row['vcenter_calls'], row['changed'],
                        row['load_1min'][0], row['load_1min'][1]))
    return '\n'.join(lines) + '\n'


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--nodes', '--sizes', type=int, nargs='+', default=[50, 200, 500])
    parser.add_argument('--ways', nargs='+', choices=('baseline', 'ours'), default=['ours'])
    parser.add_argument('--baseline', help='the checkout measured as `baseline`')
    _bench.add_options(parser, os.path.join(HERE, 'results.json'), repeat=1, peers=False)
    args = parser.parse_args(argv)
    if 'baseline' in args.ways and not args.baseline:
        parser.error('--ways baseline needs --baseline <checkout>')
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.table:
        print(markdown(_bench.read_json(args.output).get('results', {})))
        return 0
    log_dir = os.path.join(_bench.REPO, 'reports', 'bench-enable-logs')
    data, binary = _bench.begin(args.output, log_dir)
    roots = {'ours': _bench.REPO, 'baseline': args.baseline}
    results = _bench.run_sizes(args, data, args.nodes, args.ways,
                               lambda way, size, rep: bench_way(way, roots[way], size, rep, args, binary, log_dir), summary)
    print(markdown(results))
    return 0


if __name__ == '__main__':
    sys.exit(main())
