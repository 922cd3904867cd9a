"""Start, stop and inspect the twin (vcsim + Kubernetes API emulator).

    python tests/twin/ctl.py start [--dir .twin] [--workers 3] [--hosts 3] [--probe-interval 1.0]
    python tests/twin/ctl.py stop  [--dir .twin]
    python tests/twin/ctl.py status [--dir .twin]

`start` builds the vCenter simulator when its sources changed, starts both processes in the
background, and writes `<dir>/env` (a file `source` accepts) with KUBECONFIG, K8S_AUTH_* and
VMWARE_* for the collection, and TWIN_* for tests and benchmarks.
"""

import argparse
import importlib.util
import json
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(TESTS_DIR)
VCSIM_SRC = os.path.join(TESTS_DIR, 'twin', 'vcsim')
DEFAULT_DIR = os.path.join(REPO_ROOT, '.twin')
DEFAULT_BIN = os.path.join(REPO_ROOT, '.cache', 'bin', 'vcsim-twin')
GOPATH = '/usr/share/gocode'
VCENTER_USER = 'administrator@vsphere.local'


class TwinError(Exception):
    """The twin could not be built, started or stopped; the message says why and where to look."""


def _log(message):
    print('[twin] %s' % message, file=sys.stderr, flush=True)


def _newest_mtime(directory):
    return max(os.path.getmtime(os.path.join(directory, name)) for name in os.listdir(directory) if name.endswith('.go'))


def build_vcsim(binary=DEFAULT_BIN):
    """Build the simulator from Debian's govmomi sources unless the binary is newer than them."""
    if os.path.exists(binary) and os.path.getmtime(binary) >= _newest_mtime(VCSIM_SRC):
        return binary
    if not os.path.isdir(os.path.join(GOPATH, 'src', 'github.com', 'vmware', 'govmomi', 'simulator')):
        raise TwinError('govmomi sources not found under %s: run `bash scripts/bootstrap.sh` '
                        '(installs golang-go and golang-github-vmware-govmomi-dev)' % GOPATH)
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    env = dict(os.environ, GOPATH=GOPATH, GO111MODULE='off', GOCACHE=os.path.join(REPO_ROOT, '.cache', 'go-build'))
    _log('building the vCenter simulator (govmomi %s) ...' % GOPATH)
    started = time.monotonic()
    # A temporary name of this process's own: parallel test workers may build at the same time.
    temporary = '%s.%d.tmp' % (binary, os.getpid())
    proc = subprocess.run(['go', 'build', '-o', temporary, '.'], cwd=VCSIM_SRC, env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise TwinError('building vcsim failed:\n%s%s' % (proc.stdout, proc.stderr))
    os.replace(temporary, binary)
    _log('built %s in %.0f s' % (binary, time.monotonic() - started))
    return binary


def _wait_for_file(path, proc, what, log_path, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, encoding='utf-8') as handle:
                return json.load(handle)
        if proc.poll() is not None:
            raise TwinError('%s exited with code %s while starting; see %s:\n%s' % (what, proc.returncode, log_path, _tail(log_path)))
        time.sleep(0.05)
    raise TwinError('%s did not start within %.0f s; see %s:\n%s' % (what, timeout, log_path, _tail(log_path)))


def _tail(path, lines=30):
    try:
        with open(path, encoding='utf-8', errors='replace') as handle:
            return ''.join(handle.readlines()[-lines:])
    except OSError:
        return ''


def _spawn(argv, log_path, env=None, cwd=None):
    # A session of its own: the twin outlives the shell that started it (`make twin`).
    with open(log_path, 'ab') as log:
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=cwd, start_new_session=True)


def _vcsim_certificates(state_dir):
    """A CA and a server certificate for vcsim (SAN 127.0.0.1), made by the emulator's tls helper."""
    spec = importlib.util.spec_from_file_location('twin_tls', os.path.join(TESTS_DIR, 'twin', 'kube', 'tls.py'))
    tls = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tls)
    return tls.make_certificates(state_dir, prefix='vcsim-', ca_name='twin-vcenter-vmca', server_name='twin-vcenter')


def start(state_dir=DEFAULT_DIR, workers=3, masters=3, hosts=3, probe_interval=1.0, binary=None, random_seed=None,
          nmstate_version=None, nns_refresh=None, nmstate_retry_backoff=None, tuned_delay=None,
          carrier_loss=None, carrier_loss_delay=None, vcsim_max_objects=None, failure_domains=None, dual_stack=False):
    """Start both processes; returns the settings written to <state_dir>/env as a dict.

    nmstate_version: the NMState handler's nmstate release (default 2.2.38, before routes could name a
    profile); nns_refresh: seconds between NodeNetworkState refreshes (default 60, as a cluster).
    carrier_loss: 'remove' (default, NetworkManager without ignore-carrier: the secondary address goes
    carrier_loss_delay seconds, default 4, after the vNIC is disconnected) or 'keep' (ignore-carrier).
    vcsim_max_objects: the property collector's own page limit (objects per RetrievePropertiesEx page; default none).
    failure_domains: N vSphere clusters DC0_C0... of `hosts` hosts each, the node VMs spread over them, and an
    Infrastructure with one failure domain per cluster (default: one cluster, the generated failure domain).
    dual_stack: nodes with IPv4 and IPv6 primary addresses, IPv6 cluster and service networks, an IPv6 echo target
    (tests/twin/README.md, "Dual stack"); default IPv4 only.
    """
    state_dir = os.path.abspath(state_dir)
    if status(state_dir):
        raise TwinError('a twin is already running from %s; stop it first (make twin-stop)' % state_dir)
    binary = binary or build_vcsim()
    os.makedirs(state_dir, exist_ok=True)
    for name in ('vcsim.json', 'kube.json', 'env', 'pids.json'):
        if os.path.exists(os.path.join(state_dir, name)):
            os.remove(os.path.join(state_dir, name))
    password = secrets.token_urlsafe(12)
    vcsim_log = os.path.join(state_dir, 'vcsim.log')
    certs = _vcsim_certificates(state_dir)
    vcsim = _spawn([binary, '-listen', '127.0.0.1:0', '-hosts', str(hosts), '-masters', str(masters),
                    '-workers', str(workers), '-username', VCENTER_USER, '-password', password,
                    '-state', os.path.join(state_dir, 'vcsim.json'), '-tlscert', certs['cert_file'], '-tlskey', certs['key_file']]
                   + (['-max-objects', str(vcsim_max_objects)] if vcsim_max_objects is not None else [])
                   + (['-vsphere-clusters', str(failure_domains)] if failure_domains else []), vcsim_log)
    pids = {'vcsim': vcsim.pid}
    _write_json(os.path.join(state_dir, 'pids.json'), pids)
    try:
        vcsim_state = _wait_for_file(os.path.join(state_dir, 'vcsim.json'), vcsim, 'vcsim', vcsim_log)
        kube_log = os.path.join(state_dir, 'kube.log')
        env = dict(os.environ, PYTHONPATH=TESTS_DIR)
        if random_seed is not None:
            env['TWIN_RANDOM_SEED'] = str(random_seed)
        nmstate_args = []
        for flag, value in (('--nmstate-version', nmstate_version), ('--nns-refresh', nns_refresh),
                            ('--nmstate-retry-backoff', nmstate_retry_backoff), ('--tuned-delay', tuned_delay),
                            ('--carrier-loss', carrier_loss), ('--carrier-loss-delay', carrier_loss_delay)):
            if value is not None:
                nmstate_args += [flag, str(value)]
        if dual_stack:
            nmstate_args.append('--dual-stack')
        kube = _spawn([sys.executable, '-m', 'twin.kube', '--listen', '127.0.0.1:0', '--state-dir', state_dir,
                       '--vcsim-state', os.path.join(state_dir, 'vcsim.json'), '--probe-interval', str(probe_interval)]
                      + nmstate_args, kube_log, env=env, cwd=TESTS_DIR)
        pids['kube'] = kube.pid
        _write_json(os.path.join(state_dir, 'pids.json'), pids)
        kube_state = _wait_for_file(os.path.join(state_dir, 'kube.json'), kube, 'the Kubernetes API emulator', kube_log)
    except Exception:
        stop(state_dir)
        raise
    settings = environment(state_dir, vcsim_state, kube_state)
    with open(os.path.join(state_dir, 'env'), 'w', encoding='utf-8') as handle:
        handle.write('# Written by tests/twin/ctl.py: `source` this file to point the collection at the twin.\n')
        for key, value in settings.items():
            handle.write('export %s=%s\n' % (key, shlex.quote(str(value))))
    return settings


def environment(state_dir, vcsim_state, kube_state):
    """The variables a user (or a test) exports to talk to the twin, as the collection reads them."""
    return {
        'KUBECONFIG': kube_state['kubeconfig'],
        'K8S_AUTH_KUBECONFIG': kube_state['kubeconfig'],
        'VMWARE_HOST': vcsim_state['host'],
        'VMWARE_PORT': vcsim_state['port'],
        'VMWARE_USER': vcsim_state['username'],
        'VMWARE_PASSWORD': vcsim_state['password'],
        # certificates are checked, against the twin's vCenter CA, as the collection's default and a real vCenter ask
        'VMWARE_VALIDATE_CERTS': 'true',
        'OCP_EGRESSIP_VCENTER_CA_BUNDLE': os.path.join(state_dir, 'vcsim-ca.crt'),
        'TWIN_DIR': state_dir,
        'TWIN_KUBE_URL': kube_state['url'],
        'TWIN_KUBE_TOKEN': kube_state['token'],
        'TWIN_CA_FILE': kube_state['ca_file'],
        'TWIN_VCSIM_URL': vcsim_state['url'],
        'TWIN_DATACENTER': vcsim_state['datacenter'],
        'TWIN_CLUSTER': vcsim_state['cluster'],
    }


def _write_json(path, data):
    with open(path + '.tmp', 'w', encoding='utf-8') as handle:
        json.dump(data, handle)
    os.replace(path + '.tmp', path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _pids(state_dir):
    try:
        with open(os.path.join(state_dir, 'pids.json'), encoding='utf-8') as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def status(state_dir=DEFAULT_DIR):
    """Names of the twin processes that are running from state_dir."""
    return sorted(name for name, pid in _pids(state_dir).items() if _alive(pid))


def stop(state_dir=DEFAULT_DIR, timeout=10.0):
    """Stop both processes (TERM, then KILL after timeout). Returns the names stopped."""
    pids = _pids(state_dir)
    for pid in pids.values():
        if _alive(pid):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids.values()):
        _reap(pids.values())
        time.sleep(0.05)
    for pid in pids.values():
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    _reap(pids.values())
    for name in ('pids.json', 'env'):
        if os.path.exists(os.path.join(state_dir, name)):
            os.remove(os.path.join(state_dir, name))
    return sorted(pids)


def _reap(pids):
    # Children of this process become zombies until waited for; others are not ours to wait on.
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def main(argv=None):
    parser = argparse.ArgumentParser(description='Start or stop the twin (vCenter simulator + Kubernetes API emulator).')
    parser.add_argument('action', choices=['start', 'stop', 'status', 'build'])
    parser.add_argument('--dir', default=DEFAULT_DIR, help='state directory (default: .twin)')
    parser.add_argument('--workers', type=int, default=3)
    parser.add_argument('--masters', type=int, default=3)
    parser.add_argument('--hosts', type=int, default=3, help='ESXi hosts per vSphere cluster')
    parser.add_argument('--failure-domains', type=int, default=None,
                        help='vSphere clusters (one OpenShift failure domain each) the node VMs spread over (default: one)')
    parser.add_argument('--probe-interval', type=float, default=1.0, help='OVN-K reachability probe interval, seconds')
    parser.add_argument('--tuned-delay', type=float, default=None, help='seconds before TuneD applies a changed Profile (default 3)')
    parser.add_argument('--random-seed', type=int, default=None, help='seed of the placement tie-breaker')
    parser.add_argument('--nmstate-version', default=None, help='nmstate release of the NMState handler (default 2.2.38)')
    parser.add_argument('--nns-refresh', type=float, default=None, help='seconds between NodeNetworkState refreshes (default 60)')
    parser.add_argument('--carrier-loss', choices=['remove', 'keep'], default=None,
                        help='NetworkManager on carrier loss of the secondary vNIC: remove its address (default) or keep it (ignore-carrier)')
    parser.add_argument('--dual-stack', action='store_true',
                        help='dual-stack cluster: IPv4 and IPv6 node addresses, cluster and service networks, an IPv6 echo target')
    args = parser.parse_args(argv)
    try:
        if args.action == 'build':
            print(build_vcsim())
        elif args.action == 'start':
            settings = start(args.dir, workers=args.workers, masters=args.masters, hosts=args.hosts,
                             probe_interval=args.probe_interval, random_seed=args.random_seed,
                             nmstate_version=args.nmstate_version, nns_refresh=args.nns_refresh, tuned_delay=args.tuned_delay,
                             carrier_loss=args.carrier_loss, failure_domains=args.failure_domains, dual_stack=args.dual_stack)
            _log('vCenter simulator: %s (datacenter %s, cluster %s)'
                 % (settings['TWIN_VCSIM_URL'], settings['TWIN_DATACENTER'], settings['TWIN_CLUSTER']))
            _log('Kubernetes API:    %s (kubeconfig %s)' % (settings['TWIN_KUBE_URL'], settings['KUBECONFIG']))
            _log('environment:       source %s' % os.path.join(os.path.abspath(args.dir), 'env'))
        elif args.action == 'stop':
            _log('stopped: %s' % (', '.join(stop(args.dir)) or 'nothing was running'))
        else:
            running = status(args.dir)
            print('running: %s' % (', '.join(running) or 'none'))
            return 0 if running else 3
    except TwinError as error:
        _log('error: %s' % error)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
