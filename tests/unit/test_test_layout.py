"""pytest's default import mode (which the suite uses, for the helper modules beside the tests) needs
every test file name to be unique across the test folders."""

import collections
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_test_file_names_are_unique():
    seen = collections.defaultdict(list)
    for folder, _dirs, files in os.walk(TESTS):
        for name in files:
            if name.startswith('test_') and name.endswith('.py'):
                seen[name].append(os.path.relpath(os.path.join(folder, name), TESTS))
    assert not {name: paths for name, paths in seen.items() if len(paths) > 1}
