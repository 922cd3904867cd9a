"""tests/harness/sitecustomize.py: the compile cache of zip imports the module and playbook tests run with.

Each case imports a module from a zip in a fresh interpreter, as an AnsiballZ payload is imported, with the harness on
PYTHONPATH. Proven: the second import of the same source in another zip (another run's tmp dir) is served from the
cache and its traceback names the second zip; a changed source compiles again; without the variable nothing is cached.
"""

import json
import os
import subprocess
import sys
import zipfile

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness')

SOURCE = 'def fail():\n    raise ValueError("from the zip")\nVALUE = %d\n'


def payload(directory, value):
    os.makedirs(directory)
    path = os.path.join(directory, 'AnsiballZ_probe.zip')
    with zipfile.ZipFile(path, 'w') as archive:
        archive.writestr('ansible_collections/__init__.py', '')
        archive.writestr('ansible_collections/probe.py', SOURCE % value)
    return path


def imported(zip_path, cache):
    code = ('import json, sys, traceback\nsys.path.insert(0, %r)\nimport ansible_collections.probe as probe\n'
            'try:\n    probe.fail()\nexcept ValueError:\n    where = traceback.extract_tb(sys.exc_info()[2])[-1].filename\n'
            'print(json.dumps([probe.VALUE, where]))\n' % zip_path)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(HARNESS))
    env.pop('OCP_EGRESSIP_TEST_ZIP_PYCACHE', None)
    if cache:
        env['OCP_EGRESSIP_TEST_ZIP_PYCACHE'] = cache
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def entries(cache):
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


def test_the_same_source_is_compiled_once_and_tracebacks_name_the_importing_zip(tmp_path):
    cache = str(tmp_path / 'cache')
    first = payload(str(tmp_path / 'run-1'), 1)
    assert imported(first, cache) == [1, os.path.join(first, 'ansible_collections', 'probe.py')]
    cached = entries(cache)
    assert len(cached) == 2 and not any(name.endswith('.tmp') for name in cached)   # the package and the module
    second = payload(str(tmp_path / 'run-2'), 1)
    assert imported(second, cache) == [1, os.path.join(second, 'ansible_collections', 'probe.py')]
    assert entries(cache) == cached   # served from the cache: nothing new written


def test_a_changed_source_compiles_again(tmp_path):
    cache = str(tmp_path / 'cache')
    assert imported(payload(str(tmp_path / 'run-1'), 1), cache)[0] == 1
    before = entries(cache)
    assert imported(payload(str(tmp_path / 'run-2'), 2), cache)[0] == 2
    assert len(entries(cache)) == len(before) + 1   # the module again, the unchanged package from the cache


def test_without_the_variable_nothing_is_cached(tmp_path):
    assert imported(payload(str(tmp_path / 'run-1'), 1), None)[0] == 1
    assert not os.path.exists(str(tmp_path / 'cache'))
