"""Peak memory of a guard round (and of verify and enable) by cluster size, against the in-cluster CronJob's limit.

    .venv/bin/python benchmarks/guard/memory.py --nodes 50 500 --pad-images 50 --output benchmarks/guard/memory.json

For each size N, a fresh twin with N worker nodes (3 masters, 3 ESXi hosts), enabled once (the first apply), then a no-op
enable, a guard round (`playbooks/guard.yml`, what the CronJob runs) and a verify, each as one ansible-playbook run. While
a run lasts, the PSS (proportional set size: shared pages counted once over the processes sharing them) of every process
of its tree - the controller, its forked worker, the module - is read from /proc/<pid>/smaps_rollup every 50 ms; the peak
of their sum is what a container's memory limit meets, page cache left out. Sampling can miss a peak shorter than 50 ms.
Each run also records its Kubernetes requests (by kind), vCenter calls and client CPU. With --pad-images N, every Node
then gets N container images (real Nodes carry up to 50) and a guard round runs again: what larger objects cost.

The twin's objects are smaller than a real cluster's (docs/guard.md#resources says by how much): the per-node growth
measured here is a lower bound.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'enable'))

import _bench  # noqa: E402  pylint: disable=wrong-import-position
import run as enable_bench  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOKS = (('enable (first apply)', 'enable.yml'), ('enable (no-op)', 'enable.yml'), ('guard round', 'guard.yml'),
             ('verify', 'verify.yml'))


def _children():
    """{ppid: [pid]} of every process now."""
    result = {}
    for name in os.listdir('/proc'):
        if name.isdigit():
            try:
                with open('/proc/%s/stat' % name, encoding='utf-8') as handle:
                    data = handle.read()
            except OSError:
                continue
            result.setdefault(int(data[data.rindex(')') + 2:].split()[1]), []).append(int(name))
    return result


def process_tree(root):
    children, found, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def pss_kib(pid):
    try:
        with open('/proc/%d/smaps_rollup' % pid, encoding='utf-8') as handle:
            for line in handle:
                if line.startswith('Pss:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def role_of(pid):
    """What a process of the tree is: the module (AnsiballZ_<name>), ansible-playbook (controller or worker), or other."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            argv = handle.read().decode('utf-8', 'replace').split('\0')
    except OSError:
        return 'gone'
    for part in argv:
        if 'AnsiballZ_' in part:
            return 'module ' + part.rsplit('AnsiballZ_', 1)[1].rsplit('.py', 1)[0]
    return 'ansible-playbook' if any(part.endswith('ansible-playbook') for part in argv) else 'other'


def measure(twin, playbook, log_path, timeout):
    env = _bench.playbook_env(twin, os.path.join(_bench.REPO, '.venv'),
                              {'ANSIBLE_COLLECTIONS_PATH': enable_bench.collections_path(_bench.REPO)})
    variables = os.path.join(os.path.dirname(log_path), 'variables.json')
    _bench.write_json(variables, enable_bench.variables())
    argv = [os.path.join(_bench.REPO, '.venv', 'bin', 'ansible-playbook'), '-i',
            os.path.join(_bench.REPO, 'examples', 'inventory', 'localhost.yml'), os.path.join(_bench.REPO, 'playbooks', playbook),
            '-e', '@' + variables]
    peak = {'kib': 0, 'processes': []}
    done = threading.Event()
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    cpu_before = _bench.children_cpu()
    with open(log_path, 'w', encoding='utf-8') as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=_bench.REPO)

        def sample():
            while not done.is_set():
                values = [(pss_kib(pid), pid) for pid in process_tree(proc.pid)]
                total = sum(value for value, _pid in values)
                if total > peak['kib']:
                    peak['kib'] = total
                    peak['processes'] = sorted(((round(value / 1024.0, 1), role_of(pid)) for value, pid in values if value > 1024),
                                               reverse=True)
                time.sleep(0.05)
        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.monotonic()
        try:
            returncode = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            returncode = 'timeout'
        done.set()
        sampler.join()
    kube = _bench.kube_summary(twin.kube_requests())
    return {'rc': returncode, 'seconds': round(time.monotonic() - started, 1), 'peak_mib': round(peak['kib'] / 1024.0, 1),
            'processes_at_peak': peak['processes'], 'cpu_client': round(_bench.children_cpu() - cpu_before, 2),
            'kube_requests': kube['total'], 'kube_by_kind': kube['by_kind'], 'vcenter_calls': _bench.vcenter_summary(twin.vcsim_requests())['total']}


def pad_node_images(twin, count):
    """Give every Node `count` container images in its status, as kubelet reports them (at most 50), each two names:
    real Nodes carry them, the twin's do not."""
    images = [{'names': ['quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:%064x' % (index * 7919),
                         'quay.io/openshift-release-dev/ocp-v4.0-art-dev:%d' % index], 'sizeBytes': 500000000 + index}
              for index in range(count)]
    core = twin.core_v1()
    for node in core.list_node().items:
        core.patch_node_status(node.metadata.name, {'status': {'images': images}})
    return len(json.dumps(images))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    parser.add_argument('--nodes', type=int, nargs='+', default=[50, 500])
    parser.add_argument('--output', default=os.path.join(HERE, 'memory.json'))
    parser.add_argument('--timeout', type=int, default=900)
    parser.add_argument('--pad-images', type=int, default=0, metavar='N',
                        help='after the runs, give every Node N container images and run a guard round again')
    args = parser.parse_args(argv)
    log_dir = os.path.join(_bench.REPO, 'reports', 'bench-guard-memory-logs')
    data, binary = _bench.begin(args.output, log_dir)
    data.setdefault('results', {})
    for size in args.nodes:
        twin = _bench.start_twin('bench-guard-memory-', workers=size, masters=3, hosts=3, binary=binary, nns_refresh=2.0)
        try:
            runs = {}
            for label, playbook in PLAYBOOKS:
                runs[label] = result = measure(twin, playbook, os.path.join(log_dir, '%s-%d.log' % (label.split()[0], size)), args.timeout)
                print('%4d nodes  %-22s rc=%s %6.1f s  peak %6.1f MiB  %d requests, %d vCenter calls, %.1f s CPU  %s' % (
                    size, label, result['rc'], result['seconds'], result['peak_mib'], result['kube_requests'],
                    result['vcenter_calls'], result['cpu_client'],
                    ', '.join('%s %.1f' % (role, mib) for mib, role in result['processes_at_peak'])))
                sys.stdout.flush()
            if args.pad_images:
                label = 'guard round, %d images per Node' % args.pad_images
                padding = pad_node_images(twin, args.pad_images)
                runs[label] = result = measure(twin, 'guard.yml', os.path.join(log_dir, 'guard-padded-%d.log' % size), args.timeout)
                result['json_bytes_added_per_node'] = padding
                print('%4d nodes  %-22s rc=%s %6.1f s  peak %6.1f MiB (+%d bytes of JSON per Node)' % (
                    size, label, result['rc'], result['seconds'], result['peak_mib'], padding))
            data['results'][str(size)] = runs
        finally:
            _bench.stop_twin(twin)
    _bench.write_json(args.output, data)
    return 0


if __name__ == '__main__':
    sys.exit(main())
