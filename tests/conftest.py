"""Shared pytest fixtures: the twin, and running the collection's modules and playbooks against it.

- `twin` (module scope): a fresh twin for each test module; a module may set
  `TWIN_OPTIONS = {'workers': 5, 'nmstate_version': '2.2.43', ...}` (arguments of tests/twin/ctl.py start;
  `nns_refresh` defaults to 2 s here).
- `run_module(name, args, check=False, diff=False, env=None)`: runs a module of this
  collection as Ansible does (a separate Python process reading an args file) and returns
  its result dict (OCP_EGRESSIP_TEST_FORK=1: forked from the test worker instead, faster but
  not isolated from the worker's state; see _forkable).
- `run_playbook(playbook, extra_vars=None, check=False, diff=False, env=None)`: runs
  ansible-playbook with this collection on the collections path; returns a `PlaybookRun`.
"""

import atexit
import importlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import traceback

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TESTS_DIR)
COLLECTIONS_DIR = os.path.join(REPO_ROOT, '.build')
COLLECTION_LINK = os.path.join(COLLECTIONS_DIR, 'ansible_collections', 'ocp', 'egressip')

# The collection is imported as ansible_collections.ocp.egressip (a link to the repo root made
# here and by scripts/bootstrap.sh); the twin is the package `twin` under tests/.
if not os.path.lexists(COLLECTION_LINK):
    os.makedirs(os.path.dirname(COLLECTION_LINK), exist_ok=True)
    os.symlink(REPO_ROOT, COLLECTION_LINK)
for path in (COLLECTIONS_DIR, TESTS_DIR):
    if path not in sys.path:
        sys.path.insert(0, path)

from twin import ctl  # noqa: E402  pylint: disable=wrong-import-position
from twin.fixture import Twin  # noqa: E402  pylint: disable=wrong-import-position


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
    if 'twin' in request.fixturenames or env is None:
        merged.update(request.getfixturevalue('twin').env)
    merged.update(env or {})
    return {key: str(value) for key, value in merged.items() if value is not None}


MODULE_PACKAGE = 'ansible_collections.ocp.egressip.plugins.modules.'
# Variables that change what a module process imports: a run that sets them differently from this process is spawned.
_IMPORT_VARIABLES = ('PYTHONPATH', 'PYTHONHOME', 'PYTHONSAFEPATH', 'PYTHONNOUSERSITE', 'PYTHONSTARTUP')


def _spawn_module(name, args_file, env):
    """`python -m <module> <args file>`: the module as Ansible runs it, a fresh interpreter that imports everything."""
    proc = subprocess.run([sys.executable, '-m', MODULE_PACKAGE + name, str(args_file)],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _fork_module(module, args_file, env, out_dir):
    """The same run in a child forked from this process, which has already imported the module and its libraries.

    The child is still a process of its own (it reads the args file, sees only `env`, writes its JSON to its stdout and
    ends with the module's exit status), so nothing a module run changes reaches the test or the next run; what it saves
    is the interpreter start and the imports, most of a module test's CPU. The parent imports but never runs a module,
    so each child starts from a module's import-time state, as a fresh process does.
    """
    out_path, err_path = os.path.join(out_dir, 'stdout'), os.path.join(out_dir, 'stderr')
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 1
        try:
            signal.alarm(600)  # the subprocess timeout: the child ends itself
            out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            # new stream objects: a lock another thread of the parent held at the fork must not block the child
            sys.stdout = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8', write_through=True)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', write_through=True)
            os.environ.clear()
            os.environ.update(env)
            sys.argv = [module.__file__, str(args_file)]
            atexit._clear()  # pylint: disable=protected-access  # the test worker's handlers are not the module's
            try:
                module.main()
                status = 0
            except SystemExit as exit_:
                code = exit_.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
            except BaseException:  # pylint: disable=broad-except
                traceback.print_exc()
                status = 1
            # what an interpreter does at its end: join the threads the run left, then run its atexit handlers
            # (vCenter logout, the lock's release, the kubeconfig temp directory)
            threading._shutdown()  # pylint: disable=protected-access
            atexit._run_exitfuncs()  # pylint: disable=protected-access
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(status)  # pylint: disable=protected-access
    wait_status = os.waitpid(pid, 0)[1]
    with open(out_path, encoding='utf-8', errors='replace') as out, open(err_path, encoding='utf-8', errors='replace') as err:
        return os.waitstatus_to_exitcode(wait_status), out.read(), err.read()


def _forkable(name, env):
    """The module, imported here, when a forked run would start exactly as a spawned one; None otherwise.

    Opt-in (OCP_EGRESSIP_TEST_FORK=1): the test worker's own state (ansible's warning de-duplication, args a unit test
    left in ansible.module_utils.basic) reaches the child, so three module tests fail after unit tests in the same worker;
    the default spawns a fresh interpreter each time, as Ansible does."""
    if os.environ.get('OCP_EGRESSIP_TEST_FORK') != '1' or not hasattr(os, 'fork'):
        return None
    # this process imports from COLLECTIONS_DIR too (sys.path above), as the spawned run does with PYTHONPATH set to it
    if env.get('PYTHONPATH') != COLLECTIONS_DIR or any(env.get(key) != os.environ.get(key) for key in _IMPORT_VARIABLES[1:]):
        return None
    try:
        module = importlib.import_module(MODULE_PACKAGE + name)
        # the libraries the modules import on first use (clients/pyvmomi.py), imported here once for every child
        importlib.import_module('pyVmomi')
        importlib.import_module('pyVim.connect')
    except Exception:  # pylint: disable=broad-except
        return None  # the spawned run shows the import error as Ansible would
    return module if callable(getattr(module, 'main', None)) else None


@pytest.fixture
def run_module(request, tmp_path):
    def run(name, args, check=False, diff=False, env=None):
        module_args = dict(args, _ansible_check_mode=check, _ansible_diff=diff, _ansible_no_log=False)
        args_file = tmp_path / ('%s-args.json' % name)
        args_file.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': module_args}))
        environment = _environment(request, env)
        module = _forkable(name, environment)
        if module is None:
            returncode, stdout, stderr = _spawn_module(name, args_file, environment)
        else:
            returncode, stdout, stderr = _fork_module(module, args_file, environment, str(tmp_path))
        try:
            result = json.loads(stdout)
        except ValueError:
            pytest.fail('module %s printed no JSON result (rc %s):\nstdout:\n%s\nstderr:\n%s' % (name, returncode, stdout, stderr))
        result['_rc'] = returncode
        result['_stderr'] = stderr
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


@pytest.fixture
def run_playbook(request):
    def run(playbook, extra_vars=None, check=False, diff=False, env=None, extra_args=()):
        if not os.path.isabs(playbook):
            playbook = os.path.join(REPO_ROOT, playbook)
        argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), playbook]
        for extra in ([extra_vars] if isinstance(extra_vars, (dict, str)) else extra_vars or []):
            argv += ['-e', json.dumps(extra) if isinstance(extra, dict) else extra]
        argv += (['--check'] if check else []) + (['--diff'] if diff else []) + list(extra_args)
        proc = subprocess.run(argv, env=_environment(request, env), capture_output=True, text=True, timeout=1200, check=False, cwd=REPO_ROOT)
        return PlaybookRun(proc)
    return run


# Longest first: with `--dist loadfile` (scripts/test.sh) each file runs on one worker, in collection order, so a long
# playbook file collected last would run alone at the end while the other workers idle. The order of the tests inside a
# file is kept (several files build on the state their earlier tests leave).
_LONGEST_FIRST = (
    'integration/playbooks/test_migrate.py', 'integration/playbooks/test_upgrade.py',
    'integration/playbooks/test_unowned_untouched.py', 'integration/playbooks/test_disable.py',
    'integration/playbooks/test_rbac_playbooks.py', 'integration/playbooks/test_cluster_lock_playbooks.py',
    'integration/playbooks/test_render.py', 'integration/playbooks/test_migrate_vcenter_only_nics.py',
    'integration/roles/test_verify_and_drill_playbooks.py', 'integration/playbooks/test_enable.py',
    'integration/playbooks/test_disable_distributed.py',
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
