"""tests/harness/ansiballz_cache.py: the module_utils of each module's payload, kept across ansible-playbook runs.

Each case runs ansible-playbook on a tiny collection of its own (one module importing one module_utils file, the playbook's only task) with the
harness on PYTHONPATH, as tests/conftest.py does. The module reports every file of its own payload (name and a digest
of its content). Proven: the second run is served from the cache and carries the same files with the same content as
a run without the cache; a changed module_utils file builds anew and the module runs the new code; without the variable
nothing is cached.
"""

import json
import os
import subprocess
import sys

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness')

MODULE = '''
import hashlib
import json
import zipfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.probe.one.plugins.module_utils import helper


def main():
    module = AnsibleModule(argument_spec={'out': {'type': 'path', 'required': True}})
    with zipfile.ZipFile(helper.__loader__.archive) as payload:
        # sitecustomize.py: the AnsiballZ wrapper adds it when it runs (it names the run's tmp dir), not a built file
        files = dict((name, hashlib.sha256(payload.read(name)).hexdigest()) for name in payload.namelist() if name != 'sitecustomize.py')
    with open(module.params['out'], 'w') as handle:
        json.dump({'value': helper.VALUE, 'files': files}, handle)
    module.exit_json(changed=False)


if __name__ == '__main__':
    main()
'''

PLAYBOOK = '''
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - probe.one.probe:
        out: "{{ out }}"
'''


def collection(root, value):
    base = os.path.join(root, 'ansible_collections', 'probe', 'one')
    for folder in ('plugins/modules', 'plugins/module_utils', 'meta'):
        os.makedirs(os.path.join(base, folder), exist_ok=True)
    files = {'galaxy.yml': 'namespace: probe\nname: one\nversion: 1.0.0\n', 'meta/runtime.yml': 'requires_ansible: ">=2.16"\n',
             'plugins/modules/probe.py': MODULE, 'plugins/module_utils/helper.py': 'VALUE = %d\n' % value}
    for name, text in files.items():
        with open(os.path.join(base, name), 'w') as handle:
            handle.write(text)
    playbook = os.path.join(root, 'probe.yml')
    with open(playbook, 'w') as handle:
        handle.write(PLAYBOOK)
    return playbook


def run(root, cache):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(root), PYTHONPATH=os.path.abspath(HARNESS), ANSIBLE_LOCALHOST_WARNING='0')
    for variable in ('OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE', 'OCP_EGRESSIP_TEST_ZIP_PYCACHE'):
        env.pop(variable, None)
    if cache:
        env['OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE'] = cache
    out = os.path.join(str(root), 'result.json')
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), os.path.join(str(root), 'probe.yml'),
                           '-e', json.dumps({'out': out})], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(out) as handle:
        return json.load(handle)


def entries(cache):
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


def test_the_second_run_is_served_from_the_cache_with_the_same_payload(tmp_path):
    cache = str(tmp_path / 'cache')
    collection(str(tmp_path), 1)
    uncached = run(tmp_path, None)
    first = run(tmp_path, cache)
    cached = entries(cache)
    assert len(cached) == 1 and not cached[0].endswith('.tmp')   # one module: one entry
    second = run(tmp_path, cache)
    assert entries(cache) == cached                            # served from the cache: nothing new written
    assert first['value'] == second['value'] == uncached['value'] == 1
    assert second['files'] == first['files'] == uncached['files']
    assert 'ansible_collections/probe/one/plugins/module_utils/helper.py' in second['files']


def test_a_changed_module_utils_file_builds_anew(tmp_path):
    cache = str(tmp_path / 'cache')
    collection(str(tmp_path), 1)
    assert run(tmp_path, cache)['value'] == 1
    before = entries(cache)
    collection(str(tmp_path), 22)   # another size: the fingerprint changes even within the file system's time resolution
    assert run(tmp_path, cache)['value'] == 22
    assert len(entries(cache)) == len(before) + 1


def test_without_the_variable_nothing_is_cached(tmp_path):
    collection(str(tmp_path), 1)
    assert run(tmp_path, None)['value'] == 1
    assert not os.path.exists(str(tmp_path / 'cache'))
