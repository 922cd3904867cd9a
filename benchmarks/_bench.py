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


def children_cpu():
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
    cpu_before, twin_before = children_cpu(), twin_cpu(twin)
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
    cpu_client, cpu_twin = children_cpu() - cpu_before, twin_cpu(twin) - twin_before
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


# What every benchmark's run.py shares: the two phases of one way on one twin, the options, the loop over sizes and
# repetitions, the summary of one way and phase, and the ours-versus-peers table.

PHASES = ('apply', 'noop')


def phase_name(phase):
    return 'first apply' if phase == 'apply' else 'no-op rerun'


def add_options(parser, output, repeat=3, peers=True):
    """The options every benchmark takes (`peers`: also --peer-venv and --markdown, for the ours-versus-peers ones)."""
    parser.add_argument('--repeat', type=int, default=repeat, help='repetitions per size; the table shows the median')
    if peers:
        parser.add_argument('--peer-venv', default=DEFAULT_PEER_VENV, help=PEER_VENV_HELP)
    parser.add_argument('--hosts', type=int, default=3)
    parser.add_argument('--keep-twin', action='store_true', help='keep the twins\' state directories (logs) in $TMPDIR')
    parser.add_argument('--timeout', type=int, default=1800, help='seconds one ansible-playbook run may take')
    parser.add_argument('--output', default=output)
    if peers:
        parser.add_argument('--markdown', help='also write the Markdown table to this file')
    parser.add_argument('--table', action='store_true', help='only print the table of the results already in --output')


def run_phases(way, size, rep, run_phase, details):
    """The first apply, then the no-op rerun unless the apply failed: {phase: result}.

    `run_phase(phase)` runs one and returns its result (run_playbook's); `details(result)` is what the progress line
    says after the times.
    """
    results = {}
    for phase in PHASES:
        result = results[phase] = run_phase(phase)
        print('[bench] %-8s %-5s N=%-3d rep %d: rc=%s %.1f s (CPU %.1f s client + %.1f s twin), %s%s'
              % (way, phase, size, rep, result['rc'], result['seconds'], result['cpu_client'], result['cpu_twin'],
                 details(result), ('  ERROR ' + result['error']) if 'error' in result else ''), flush=True)
        if result['rc'] != 0:
            break
    return results


def run_sizes(args, data, sizes, ways, bench_way, summary):
    """Every size, every repetition, each way on a fresh twin (`bench_way(way, size, rep)`), the repetitions
    alternating which way goes first; `data['results'][size]` gets the runs and `summary(runs, size)`, written to
    --output after every repetition. Returns data['results']."""
    results = data.setdefault('results', {})
    for size in sizes:
        runs = []
        for rep in range(args.repeat):
            order = list(ways) if rep % 2 == 0 else list(reversed(ways))
            runs.append(dict((way, bench_way(way, size, rep)) for way in order))
            results[str(size)] = {'runs': runs, 'median': summary(runs, size)}
            write_json(args.output, data)
    return results


def begin(output, log_dir):
    """Before the first run: the folders of --output and of the logs; the results so far (with what this machine is) and
    the vcsim binary."""
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    os.makedirs(log_dir, exist_ok=True)
    data = read_json(output)
    data['machine'] = machine()
    return data, ctl.build_vcsim()


def print_table(table, markdown_path=None):
    print(table)
    if markdown_path:
        with open(markdown_path, 'w', encoding='utf-8') as handle:
            handle.write(table)


def summarize(runs, fields):
    """{way: {phase: summary}} of the repetitions: the medians of the times, rc, changed, load and errors of each way and
    phase that ran at least once, and what `fields(done)` adds (the request counts a benchmark shows)."""
    out = {}
    for way in sorted(set(way for run in runs for way in run)):
        out[way] = {}
        for phase in PHASES:
            done = [run[way][phase] for run in runs if phase in run.get(way, {})]
            if done:
                out[way][phase] = dict({
                    'seconds': median_of(done),
                    'seconds_all': [run['seconds'] for run in done],
                    'cpu': median_cpu(done),
                    'cpu_client': median_of(done, 'cpu_client'),
                    'cpu_twin': median_of(done, 'cpu_twin'),
                    'kube_requests': same_or_range([run['kube']['total'] for run in done]),
                    'changed': same_or_range([run['changed'] for run in done]),
                    'rc': same_or_range([run['rc'] for run in done]),
                    'load_1min': [min(run['load_before'][0] for run in done), max(run['load_before'][0] for run in done)],
                    'errors': sorted(set(run['error'] for run in done if 'error' in run)),
                }, **fields(done))
    return out


def versus_table(results, what, columns, cells):
    """The Markdown table of ours against the peers: a row per size and phase both ways ran; `what` names the sizes
    (nodes, VMs), `columns` the request columns and `cells(ours, peers)` gives their values."""
    lines = ['| %s | run | ours: s | peers: s | speed-up (per repetition) | ours: CPU s, client + twin | peers: CPU s, client + twin '
             '| client CPU ratio | %s | changed (ours / peers) | load (1 min) |' % (what, ' | '.join(columns)),
             '| ---: | --- |%s ---: | --- |' % (' ---: |' * (6 + len(columns)))]
    for size in sorted(results, key=int):
        runs, med = results[size]['runs'], results[size]['median']
        for phase in PHASES:
            ours, peers = med.get('ours', {}).get(phase), med.get('peers', {}).get(phase)
            if not ours or not peers:
                continue
            ratios = sorted(ratio(run['peers'][phase]['seconds'], run['ours'][phase]['seconds'])
                            for run in runs if phase in run.get('ours', {}) and phase in run.get('peers', {}))
            loads = ours['load_1min'] + peers['load_1min']
            lines.append('| %s | %s | %s | %s | %sx (%s) | %s | %s | %sx | %s | %s / %s | %.1f-%.1f |' % (
                size, phase_name(phase), ours['seconds'], peers['seconds'],
                ratio(peers['seconds'], ours['seconds']), ', '.join('%s' % value for value in ratios),
                cpu_text(ours), cpu_text(peers), ratio(peers['cpu_client'], ours['cpu_client']),
                ' | '.join('%s' % cell for cell in cells(ours, peers)), ours['changed'], peers['changed'], min(loads), max(loads)))
    return '\n'.join(lines) + '\n'
