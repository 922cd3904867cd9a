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

PHASES = ('apply', 'noop')
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
        results = {}
        for phase in PHASES:
            result = run_phase(twin, root, args, '%s-%s-%d-r%d' % (way, phase, size, rep), log_dir)
            if phase == 'apply':
                result['outcome'] = outcome(twin)
            results[phase] = result
            roles = ', '.join('%s %.1f' % (role.rsplit('.', 1)[-1], seconds) for role, seconds in
                              sorted(result['times']['roles'].items(), key=lambda item: -item[1])[:6])
            print('[bench] %-8s %-5s N=%-3d rep %d: rc=%s %.1f s (CPU %.1f s client + %.1f s twin), %d Kubernetes requests '
                  '(%d writes), %d vCenter calls, changed=%s, load %s; roles: %s%s'
                  % (way, phase, size, rep, result['rc'], result['seconds'], result['cpu_client'], result['cpu_twin'],
                     result['kube']['total'], result['kube']['writes'], result['vcenter']['total'], result['changed'],
                     result['load_before'][0], roles, ('  ERROR ' + result['error']) if 'error' in result else ''), flush=True)
            if result['rc'] != 0:
                break
        return results
    finally:
        _bench.stop_twin(twin, keep=args.keep_twin)


def summary(runs):
    out = {}
    for way in sorted(set(way for run in runs for way in run)):
        out[way] = {}
        for phase in PHASES:
            done = [run[way][phase] for run in runs if phase in run.get(way, {})]
            if done:
                out[way][phase] = {
                    'seconds': _bench.median_of(done), 'seconds_all': [run['seconds'] for run in done],
                    'cpu_client': _bench.median_of(done, 'cpu_client'), 'cpu_twin': _bench.median_of(done, 'cpu_twin'),
                    'kube_requests': _bench.same_or_range([run['kube']['total'] for run in done]),
                    'kube_writes': _bench.same_or_range([run['kube']['writes'] for run in done]),
                    'vcenter_calls': _bench.same_or_range([run['vcenter']['total'] for run in done]),
                    'changed': _bench.same_or_range([run['changed'] for run in done]),
                    'rc': _bench.same_or_range([run['rc'] for run in done]),
                    'load_1min': [min(run['load_before'][0] for run in done), max(run['load_before'][0] for run in done)],
                    'roles': done[0]['times']['roles'],
                }
    return out


def markdown(results):
    lines = ['| nodes | way | run | wall s | client CPU s | twin CPU s | Kubernetes requests (writes) | vCenter calls | changed | load (1 min) |',
             '| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |']
    for size in sorted(results, key=int):
        for way, phases in sorted(results[size]['median'].items()):
            for phase in PHASES:
                row = phases.get(phase)
                if row:
                    lines.append('| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s-%s |' % (
                        size, way, 'first apply' if phase == 'apply' else 'no-op rerun', row['seconds'], row['cpu_client'],
                        row['cpu_twin'], row['kube_requests'], row['kube_writes'], row['vcenter_calls'], row['changed'],
                        row['load_1min'][0], row['load_1min'][1]))
    return '\n'.join(lines) + '\n'


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--nodes', '--sizes', type=int, nargs='+', default=[50, 200, 500])
    parser.add_argument('--repeat', type=int, default=1, help='repetitions per size; the table shows the median')
    parser.add_argument('--ways', nargs='+', choices=('baseline', 'ours'), default=['ours'])
    parser.add_argument('--baseline', help='the checkout measured as `baseline`')
    parser.add_argument('--hosts', type=int, default=3)
    parser.add_argument('--keep-twin', action='store_true', help='keep the twins\' state directories (logs) in $TMPDIR')
    parser.add_argument('--timeout', type=int, default=1800, help='seconds one ansible-playbook run may take')
    parser.add_argument('--output', default=os.path.join(HERE, 'results.json'))
    parser.add_argument('--table', action='store_true', help='only print the table of the results already in --output')
    args = parser.parse_args(argv)
    if 'baseline' in args.ways and not args.baseline:
        parser.error('--ways baseline needs --baseline <checkout>')
    return args


def main(argv=None):
    args = parse_args(argv)
    data = _bench.read_json(args.output)
    results = data.setdefault('results', {})
    if args.table:
        print(markdown(results))
        return 0
    log_dir = os.path.join(_bench.REPO, 'reports', 'bench-enable-logs')
    os.makedirs(log_dir, exist_ok=True)
    binary = _bench.ctl.build_vcsim()
    data['machine'] = _bench.machine()
    roots = {'ours': _bench.REPO, 'baseline': args.baseline}
    for size in args.nodes:
        runs = []
        for rep in range(args.repeat):
            order = args.ways if rep % 2 == 0 else list(reversed(args.ways))
            runs.append(dict((way, bench_way(way, roots[way], size, rep, args, binary, log_dir)) for way in order))
            results[str(size)] = {'runs': runs, 'median': summary(runs)}
            _bench.write_json(args.output, data)
    print(markdown(results))
    return 0


if __name__ == '__main__':
    sys.exit(main())
