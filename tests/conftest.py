"""Shared pytest fixtures: the twin, and running the collection's modules and playbooks against it.

- `twin` (module scope): a fresh twin for each test module; a module may set
  `TWIN_OPTIONS = {'workers': 5, 'nmstate_version': '2.2.43', ...}` (arguments of tests/twin/ctl.py start;
  `nns_refresh` defaults to 2 s here; `dual_stack: True` for a dual-stack twin).
- `run_module(name, args, check=False, diff=False, env=None)`: runs a module of this
  collection as Ansible does (a separate Python process reading an args file) and returns
  its result dict.
- `run_playbook(playbook, extra_vars=None, check=False, diff=False, env=None)`: runs
  ansible-playbook with this collection on the collections path; returns a `PlaybookRun`.
- `closed_port` (unit tests too): a TCP port on 127.0.0.1 that nothing listens on, for "cannot reach" cases.

OCP_EGRESSIP_TEST_RUN_LOG=<file> appends one JSON line per module and playbook run: the test, what ran, check mode, wall
seconds and CPU seconds (the run's process and everything it waited for).
"""

import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import time

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TESTS_DIR)
COLLECTIONS_DIR = os.path.join(REPO_ROOT, '.build')
COLLECTION_LINK = os.path.join(COLLECTIONS_DIR, 'ansible_collections', 'ocp', 'egressip')
# tests/harness/sitecustomize.py: a compile cache for the AnsiballZ payloads the module and playbook tests run (a third
# of a module run's CPU is zipimport compiling source); OCP_EGRESSIP_TEST_ZIP_PYCACHE=off turns it off.
HARNESS_DIR = os.path.join(TESTS_DIR, 'harness')
ZIP_PYCACHE = os.path.join(REPO_ROOT, '.cache', 'zip-pycache')
# tests/harness/ansiballz_cache.py: the module_utils each module's payload carries, kept across ansible-playbook runs
# (building them is half a second of CPU per module and run); OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE=off turns it off.
ANSIBALLZ_CACHE = os.path.join(REPO_ROOT, '.cache', 'ansiballz')

# The collection is imported as ansible_collections.ocp.egressip (a link to the repo root made
# here and by scripts/bootstrap.sh); the twin is the package `twin` under tests/.
if not os.path.lexists(COLLECTION_LINK):
    os.makedirs(os.path.dirname(COLLECTION_LINK), exist_ok=True)
    os.symlink(REPO_ROOT, COLLECTION_LINK)
for path in (COLLECTIONS_DIR, TESTS_DIR):
    if path not in sys.path:
        sys.path.insert(0, path)

# the helper modules beside the integration tests assert too: pytest explains their failures as it does a test's
pytest.register_assert_rewrite('_by_hand', '_egress_cluster', '_prepare', '_render_setup', '_twin_reads', '_vsphere_objects')

from twin import ctl  # noqa: E402  pylint: disable=wrong-import-position
from twin.fixture import Twin  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def browser(tmp_path):
    """Open a report file in headless Chromium (Debian's chromium, installed by scripts/bootstrap.sh) as a person would:
    a PNG of the page, the DOM after loading it, and what the page logged to the console."""
    def render(path):
        binary = shutil.which('chromium') or shutil.which('chromium-browser')
        assert binary, 'chromium is not installed (scripts/bootstrap.sh installs it)'
        png = tmp_path / (os.path.basename(str(path)) + '.png')
        common = [binary, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--enable-logging=stderr', '--v=0',
                  '--user-data-dir=%s' % (tmp_path / 'chromium-profile')]
        url = 'file://' + os.path.abspath(str(path))
        shot = subprocess.run(common + ['--window-size=1280,1600', '--screenshot=%s' % png, url], capture_output=True, text=True,
                              timeout=120, check=False)
        dom = subprocess.run(common + ['--dump-dom', url], capture_output=True, text=True, timeout=120, check=False)
        console = [line for line in (shot.stderr + dom.stderr).splitlines() if 'CONSOLE' in line or 'Uncaught' in line]
        return {'png': png, 'png_ok': shot.returncode == 0 and png.exists() and png.stat().st_size > 10000, 'dom': dom.stdout,
                'console': console}
    return render


@pytest.fixture
def closed_port():
    """A TCP port on 127.0.0.1 that nothing listens on: bound to get a free one, then closed, so a connection is refused."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture(scope='session')
def vcsim_binary():
    return ctl.build_vcsim()


@pytest.fixture(scope='module')
def twin(request, tmp_path_factory, vcsim_binary):
    options = dict(getattr(request.module, 'TWIN_OPTIONS', {}))
    # NodeNetworkState refreshes every 2 s here instead of a cluster's minute (tests/twin/README.md): never instant, so a
    # module that reads it right after a vCenter change must wait, but short enough for the suite
    options.setdefault('nns_refresh', 2.0)
    handle = Twin.start(str(tmp_path_factory.mktemp('twin')), binary=vcsim_binary, **options)
    yield handle
    handle.stop()


def _environment(request, env):
    merged = dict(os.environ)
    merged.pop('KUBECONFIG', None)
    merged.update({'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS_DIR, 'PYTHONPATH': COLLECTIONS_DIR,
                   'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0'})
    # the harness caches (each OCP_EGRESSIP_TEST_... variable =off turns its cache off)
    for variable, default in (('OCP_EGRESSIP_TEST_ZIP_PYCACHE', ZIP_PYCACHE), ('OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE', ANSIBALLZ_CACHE)):
        if merged.get(variable, default) == 'off':
            merged.pop(variable, None)
        else:
            merged.update({'PYTHONPATH': os.pathsep.join((COLLECTIONS_DIR, HARNESS_DIR)), variable: merged.get(variable, default)})
    if 'twin' in request.fixturenames or env is None:
        merged.update(request.getfixturevalue('twin').env)
    merged.update(env or {})
    return {key: str(value) for key, value in merged.items() if value is not None}


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _log_run(request, kind, what, started, cpu, check):
    log = os.environ.get('OCP_EGRESSIP_TEST_RUN_LOG')
    if log:
        with open(log, 'a') as handle:
            handle.write(json.dumps({'test': request.node.nodeid, 'kind': kind, 'what': what, 'check': check,
                                     'wall': round(time.monotonic() - started, 2), 'cpu': round(_children_cpu() - cpu, 2)}) + '\n')


@pytest.fixture
def run_module(request, tmp_path):
    def run(name, args, check=False, diff=False, env=None):
        module_args = dict(args, _ansible_check_mode=check, _ansible_diff=diff, _ansible_no_log=False)
        args_file = tmp_path / ('%s-args.json' % name)
        args_file.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': module_args}))
        started, cpu = time.monotonic(), _children_cpu()
        proc = subprocess.run([sys.executable, '-m', 'ansible_collections.ocp.egressip.plugins.modules.%s' % name, str(args_file)],
                              env=_environment(request, env), capture_output=True, text=True, timeout=600, check=False)
        _log_run(request, 'module', name, started, cpu, check)
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            pytest.fail('module %s printed no JSON result (rc %s):\nstdout:\n%s\nstderr:\n%s' % (name, proc.returncode, proc.stdout, proc.stderr))
        result['_rc'] = proc.returncode
        result['_stderr'] = proc.stderr
        return result
    return run


class PlaybookRun:
    """The outcome of one ansible-playbook run: rc, output and the PLAY RECAP per host."""

    RECAP = re.compile(r'^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)

    def __init__(self, proc):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.recap = {match.group(1): {'ok': int(match.group(2)), 'changed': int(match.group(3)),
                                       'unreachable': int(match.group(4)), 'failed': int(match.group(5))}
                      for match in self.RECAP.finditer(proc.stdout)}

    @property
    def changed(self):
        return sum(host['changed'] for host in self.recap.values())

    def __repr__(self):
        return 'PlaybookRun(rc=%s, recap=%s)\n--- stdout ---\n%s\n--- stderr ---\n%s' % (self.rc, self.recap, self.stdout[-6000:], self.stderr[-3000:])


PLAYBOOK_PROGRESS_INTERVAL = 30


@pytest.fixture
def run_playbook(request):
    def run(playbook, extra_vars=None, check=False, diff=False, env=None, extra_args=()):
        if not os.path.isabs(playbook):
            playbook = os.path.join(REPO_ROOT, playbook)
        argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), playbook]
        # The twin's NodeNetworkState lists a new NIC up to a minute later, as a real one does, so most enables wait for
        # it; in tries of 30 s rather than the default 10 s that is fewer module runs (each a second of CPU) over the
        # suite. A test's own -e comes later and wins; test_progress_lines.py and the demo keep the default.
        argv += ['-e', json.dumps({'node_network_progress_interval': PLAYBOOK_PROGRESS_INTERVAL})]
        for extra in ([extra_vars] if isinstance(extra_vars, (dict, str)) else extra_vars or []):
            argv += ['-e', json.dumps(extra) if isinstance(extra, dict) else extra]
        argv += (['--check'] if check else []) + (['--diff'] if diff else []) + list(extra_args)
        started, cpu = time.monotonic(), _children_cpu()
        proc = subprocess.run(argv, env=_environment(request, env), capture_output=True, text=True, timeout=1200, check=False, cwd=REPO_ROOT)
        _log_run(request, 'playbook', os.path.relpath(playbook, REPO_ROOT), started, cpu, check)
        return PlaybookRun(proc)
    return run


# Longest first: with `--dist loadfile` (scripts/test.sh) each file runs on one worker, in collection order, so a long
# playbook file collected last would run alone at the end while the other workers idle. The order of the tests inside a
# file is kept (several files build on the state their earlier tests leave).
_LONGEST_FIRST = (  # by their measured time (the summary below, a full run on 2 cores, 2026-12-07), longest first
    'integration/playbooks/test_migrate.py', 'integration/playbooks/test_disable.py', 'integration/playbooks/test_render.py',
    'integration/playbooks/test_unowned_untouched.py', 'integration/playbooks/test_upgrade.py', 'integration/playbooks/test_dual_stack.py',
    'integration/roles/test_verify_and_drill_playbooks.py', 'integration/playbooks/test_rbac_playbooks.py',
    'integration/playbooks/test_enable.py', 'integration/playbooks/test_cluster_lock_playbooks.py', 'integration/modules/test_egressip_plan.py',
    'integration/playbooks/test_enable_bad_input.py', 'integration/playbooks/test_fleet.py', 'integration/playbooks/test_enable_guard.py',
    'integration/playbooks/test_enable_nic_identity.py', 'integration/playbooks/test_migrate_vcenter_only_nics.py',
    'integration/playbooks/test_guard_remediation.py', 'integration/playbooks/test_guard.py', 'integration/playbooks/test_disable_distributed.py',
    'integration/playbooks/test_support_report_playbook.py', 'integration/playbooks/test_migrate_dual_stack.py',
    'integration/modules/test_egressips_role.py', 'integration/modules/test_progress_lines.py',
    'integration/playbooks/test_failure_domains.py', 'integration/playbooks/test_render_guard.py',
    'integration/modules/test_node_nic_address_concurrency.py',
)
_BY_FOLDER = ('integration/playbooks/', 'integration/roles/', 'integration/lifecycle/', 'integration/',
              'twin/conformance/', 'twin/selftest/', 'unit/')


def _schedule_rank(item):
    path = os.path.relpath(str(item.fspath), TESTS_DIR).replace(os.sep, '/')
    if path in _LONGEST_FIRST:
        return (0, _LONGEST_FIRST.index(path))
    return (1, next((index for index, folder in enumerate(_BY_FOLDER) if path.startswith(folder)), len(_BY_FOLDER)))


def pytest_collection_modifyitems(session, config, items):  # pylint: disable=unused-argument
    items.sort(key=_schedule_rank)  # stable: the order inside each file stays


# seconds per test file (setup, call and teardown of its tests: its time on the one worker that runs it), for the summary
_FILE_SECONDS = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split('::', 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + (report.duration or 0.0)


def pytest_terminal_summary(terminalreporter):
    """The longest files of this run, to keep _LONGEST_FIRST in step with what CI measures."""
    if len(_FILE_SECONDS) < 2:
        return
    terminalreporter.write_sep('-', 'the 15 longest test files, seconds on their worker (_LONGEST_FIRST in tests/conftest.py)')
    for path, seconds in sorted(_FILE_SECONDS.items(), key=lambda item: -item[1])[:15]:
        terminalreporter.write_line('%7.1f  %s' % (seconds, path))
