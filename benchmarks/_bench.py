"""Shared helpers of the benchmarks (not a test module): run a playbook against a twin, time it, count its requests.

Each benchmark's run.py imports this file (benchmarks/ is put on sys.path). The twin comes from tests/twin
(ctl.py and fixture.Twin); nothing here imports the collection.
"""

import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
sys.path.insert(0, os.path.join(REPO, 'tests'))

from twin import ctl  # noqa: E402  pylint: disable=wrong-import-position,unused-import
from twin.fixture import Twin  # noqa: E402  pylint: disable=wrong-import-position,unused-import

DEFAULT_PEER_VENV = os.path.join(REPO, '.cache', 'bench-venv')
PEER_VENV_HELP = ('a virtualenv with PyPI\'s `ansible` 12.x (ansible-core 2.19, kubernetes.core, community.vmware) and the '
                  'collection\'s requirements; both ways run with its ansible-playbook')
RECAP = re.compile(r'^localhost\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def check_peer_venv(parser, peer_venv):
    if not os.path.exists(os.path.join(peer_venv, 'bin', 'ansible-playbook')):
        parser.error('no ansible-playbook in %s: python3 -m venv %s && %s/bin/pip install "ansible>=12,<13" -r requirements.txt'
                     % (peer_venv, peer_venv, peer_venv))


def loadavg():
    return [round(value, 2) for value in os.getloadavg()]


def playbook_env(twin, peer_venv, extra=None):
    env = dict(os.environ)
    env.pop('KUBECONFIG', None)
    env.update(twin.env)
    env.update({'ANSIBLE_COLLECTIONS_PATH': os.path.join(REPO, '.build'), 'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0',
                'ANSIBLE_PYTHON_INTERPRETER': os.path.join(peer_venv, 'bin', 'python'),
                'ANSIBLE_LOCALHOST_WARNING': 'false', 'ANSIBLE_INVENTORY_UNPARSED_WARNING': 'false'})
    env.update(extra or {})
    return {key: str(value) for key, value in env.items()}


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def twin_cpu(twin):
    """CPU seconds (user + system) the twin's two processes have used so far, from /proc/<pid>/stat."""
    total = 0.0
    for pid in _twin_pids(twin):
        try:
            with open('/proc/%d/stat' % pid, encoding='utf-8') as handle:
                fields = handle.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / float(os.sysconf('SC_CLK_TCK'))
    return total


def _twin_pids(twin):
    return read_json(os.path.join(twin.state_dir, 'pids.json')).values()


def start_twin(prefix, **options):
    """A fresh twin in a new temporary directory (removed again by stop_twin)."""
    return Twin.start(tempfile.mkdtemp(prefix=prefix), **options)


def stop_twin(twin, keep=False):
    twin.stop()
    if not keep:
        shutil.rmtree(twin.state_dir, ignore_errors=True)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_playbook(twin, peer_venv, playbook, variables, log_path, timeout, env=None):
    """One ansible-playbook run with both request logs reset first.

    Returns rc, seconds (wall time of the ansible-playbook process), CPU seconds (user + system) of the
    ansible-playbook process tree ('cpu_client': controller, workers, modules) and of the twin's processes
    ('cpu_twin'), changed/failed from the recap, the load average before and after, the request counts of
    both sides ('kube', 'vcenter'), and the error of a failed run. A run that exceeds `timeout` seconds is
    killed (rc 'timeout'). CPU seconds hardly depend on what else the machine runs; wall time does.
    """
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as handle:
        json.dump(variables, handle)
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    argv = [os.path.join(peer_venv, 'bin', 'ansible-playbook'), playbook, '-e', '@' + handle.name]
    load_before = loadavg()
    cpu_before, twin_before = _children_cpu(), twin_cpu(twin)
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=playbook_env(twin, peer_venv, env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        returncode = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        returncode = 'timeout'
    seconds = time.monotonic() - started
    cpu_client, cpu_twin = _children_cpu() - cpu_before, twin_cpu(twin) - twin_before
    os.unlink(handle.name)
    with open(log_path, 'w', encoding='utf-8') as log:
        log.write(stdout + '\n--- stderr ---\n' + stderr)
    recap = RECAP.search(stdout)
    result = {'rc': returncode, 'seconds': round(seconds, 2), 'cpu_client': round(cpu_client, 2), 'cpu_twin': round(cpu_twin, 2),
              'load_before': load_before, 'load_after': loadavg(),
              'changed': int(recap.group(2)) if recap else None, 'failed': int(recap.group(4)) if recap else None,
              'vcenter': vcenter_summary(twin.vcsim_requests()), 'kube': kube_summary(twin.kube_requests())}
    if returncode != 0:
        errors = [line for line in stdout.splitlines() if 'FAILED' in line or 'ERROR' in line or 'fatal' in line]
        result['error'] = (errors[-1] if errors else (stderr.strip().splitlines() or ['timeout after %d s' % timeout])[-1])[:2000]
    return result


def kube_summary(log):
    """Kubernetes API round trips: total, per verb, per 'verb resource [(dry run)] [(status code unless 2xx)]', successful writes."""
    by_kind = {}
    for request in log['requests']:
        key = '%s %s' % (request['verb'], request.get('resource') or '-')
        if request.get('dry_run'):
            key += ' (dry run)'
        if not 200 <= (request.get('code') or 200) < 300:
            key += ' (%s)' % request.get('code')
        by_kind[key] = by_kind.get(key, 0) + 1
    return {'total': sum(log['counts'].values()), 'counts': log['counts'], 'writes': log['writes'], 'by_kind': by_kind}


def vcenter_summary(log):
    """vCenter SOAP calls: total and per method (login and logout included)."""
    return {'total': sum(log['counts'].values()), 'counts': log['counts']}


def median_of(runs, key='seconds'):
    values = [run[key] for run in runs if run['rc'] == 0]
    return round(statistics.median(values), 2) if values else None


def median_cpu(runs):
    """Median CPU seconds of the client and the twin together (a proxy for the wall time on an idle machine)."""
    values = [run['cpu_client'] + run['cpu_twin'] for run in runs if run['rc'] == 0]
    return round(statistics.median(values), 2) if values else None


def cpu_text(summary):
    return '%s + %s' % (summary['cpu_client'], summary['cpu_twin'])


def same_or_range(values):
    """One value when every repetition agrees (request counts do), else [min, max]."""
    distinct = sorted(set(values), key=lambda value: (value is None, value))
    return distinct[0] if len(distinct) == 1 else [distinct[0], distinct[-1]]


def ratio(peer, ours):
    return round(peer / ours, 1) if peer and ours else None


def write_json(path, data):
    with open(path + '.tmp', 'w', encoding='utf-8') as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    os.replace(path + '.tmp', path)


def read_json(path):
    if not os.path.exists(path):
        return {}
    with open(path, encoding='utf-8') as handle:
        return json.load(handle)


def machine():
    """What the numbers were measured on."""
    info = {'cpus': os.cpu_count(), 'python': sys.version.split()[0]}
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as handle:
            model = [line.split(':', 1)[1].strip() for line in handle if line.startswith('model name')]
        info['cpu'] = model[0] if model else None
    except OSError:
        info['cpu'] = None
    return info
