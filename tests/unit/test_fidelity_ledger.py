"""tests/twin/FIDELITY.md cannot rot: every row names its upstream, its release, a twin file that exists and tests that exist.

A "pinned by" cell names test files (`selftest/test_x.py`, `tests/twin/selftest/test_x.py`, `integration/modules/test_y.py`,
or a file name alone when it is unique under tests/) and test functions, either as `file::test_name` or as `test_name`
after the file they belong to. Each file must exist and each function must be defined in it (a plain or parametrized
test, or a method of a test class). The twin file column must name files that exist under tests/twin.
"""

import ast
import os
import re

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(TESTS)
TWIN = os.path.join(TESTS, 'twin')
LEDGER = os.path.join(TWIN, 'FIDELITY.md')
BEHAVIOUR_HEADER = ['behaviour', 'upstream', 'release / commit', 'twin file', 'pinned by']
FILE_TOKEN = re.compile(r'((?:[\w.-]+/)*(?:\.\.\./)?[\w.-]*test_\w+\.py)(?:::(\w+))?')
TEST_NAME = re.compile(r'(?<![\w/.])(?:::)?(test_\w+)(?![\w.])')
TWIN_FILE = re.compile(r'((?:[\w-]+/)*[\w.-]+\.(?:py|go|yaml)|tests/twin/[\w/]+)')
EMPTY = ('', '-', '—')


def _cells(line):
    return [cell.strip() for cell in line.strip()[1:-1].split('|')]


def ledger_tables(text):
    """[(section, header, [(line number, cells)])] for every Markdown table of the ledger."""
    tables, section, current = [], None, None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith('## '):
            section = line[3:].strip()
        if not line.startswith('|'):
            current = None
            continue
        cells = _cells(line)
        if current is None:
            current = (section, [cell.strip('*').lower() for cell in cells], [])
            tables.append(current)
        elif not all(set(cell) <= set('-: ') for cell in cells):
            current[2].append((number, cells))
    return tables


def _test_files():
    found = {}
    for folder, _dirs, files in os.walk(TESTS):
        for name in files:
            if name.startswith('test_') and name.endswith('.py'):
                found.setdefault(name, []).append(os.path.join(folder, name))
    return found


def resolve(token, files):
    """The test file a ledger token names, or None."""
    if '...' in token:
        head, tail = token.split('...', 1)
        return next((path for paths in files.values() for path in paths
                     if os.path.relpath(path, TESTS).startswith(head.rstrip('/').replace('tests/', '', 1))
                     and path.endswith(tail)), None)
    for base in (REPO, TESTS, TWIN):
        if os.path.isfile(os.path.join(base, token)):
            return os.path.join(base, token)
    matches = files.get(os.path.basename(token), []) if '/' not in token else []
    return matches[0] if len(matches) == 1 else None


def defines(path, name):
    with open(path, encoding='utf-8') as handle:
        return re.search(r'^\s*def %s\(' % re.escape(name), handle.read(), re.M) is not None


def pinned_tests(cell, files):
    """([(file token, path or None)], [(path, test name)]) for one "pinned by" cell."""
    named_files, named_tests, current = [], [], None
    position = 0
    while position < len(cell):
        file_match = FILE_TOKEN.match(cell, position)
        test_match = TEST_NAME.match(cell, position)
        if file_match:
            current = resolve(file_match.group(1), files)
            named_files.append((file_match.group(1), current))
            if file_match.group(2):
                named_tests.append((current, file_match.group(2)))
            position = file_match.end()
        elif test_match and cell[position - 1:position] in ('`', ' ', ',', ':', '(', ''):
            named_tests.append((current, test_match.group(1)))
            position = test_match.end()
        else:
            position += 1
    return named_files, named_tests


def _rows():
    with open(LEDGER, encoding='utf-8') as handle:
        tables = ledger_tables(handle.read())
    return [(section, number, cells) for section, header, rows in tables if header == BEHAVIOUR_HEADER for number, cells in rows]


ROWS = _rows()


def test_the_ledger_has_behaviour_rows_in_each_section():
    sections = {section for section, _number, _cells in ROWS}
    assert len(ROWS) > 40 and {'Kubernetes API server', 'vCenter (vcsim and the twin\'s corrections)'} <= sections


@pytest.mark.parametrize('section,number,cells', ROWS, ids=['line%d' % row[1] for row in ROWS])
def test_every_row_names_upstream_release_twin_file_and_existing_tests(section, number, cells):
    where = 'FIDELITY.md line %d (%s)' % (number, section)
    assert len(cells) == 5, '%s: %d columns, expected 5' % (where, len(cells))
    behaviour, upstream, release, twin_file, pinned = cells
    for column, value in (('behaviour', behaviour), ('upstream', upstream), ('release / commit', release)):
        assert value not in EMPTY, '%s: the %s column is empty (say what was read, or why nothing upstream applies)' % (where, column)
    twin_files = TWIN_FILE.findall(twin_file)
    assert twin_files, '%s: the twin file column names no file' % where
    for token in twin_files:
        candidates = [os.path.join(TWIN, token), os.path.join(REPO, token), os.path.join(TWIN, 'controllers', token),
                      os.path.join(TWIN, 'kube', token), os.path.join(TWIN, 'vcsim', token)]
        assert any(os.path.exists(path) for path in candidates), '%s: twin file %s does not exist' % (where, token)
    files = _test_files()
    named_files, named_tests = pinned_tests(pinned, files)
    assert named_files, '%s: "pinned by" names no test file' % where
    missing_files = [token for token, path in named_files if path is None]
    assert not missing_files, '%s: test files not found: %s' % (where, missing_files)
    missing_tests = [name for path, name in named_tests if path is None or not defines(path, name)]
    assert not missing_tests, '%s: test functions not found in the file named before them: %s' % (where, missing_tests)


def test_the_parser_reads_the_three_ways_rows_name_tests():
    files = _test_files()
    named_files, named_tests = pinned_tests(
        '`selftest/test_controllers_placement.py::test_least_loaded_node_first`, `::test_no_failback`; '
        'test_controllers_failover.py `test_no_failback`, `test_does_not_exist`', files)
    assert [path is not None for _token, path in named_files] == [True, True]
    expected = ['test_least_loaded_node_first', 'test_no_failback', 'test_no_failback', 'test_does_not_exist']
    assert [name for _path, name in named_tests] == expected
    assert not defines(named_tests[1][0], 'test_no_failback')  # `::name` belongs to the file before it: the placement file
    assert defines(named_tests[2][0], 'test_no_failback') and not defines(named_tests[3][0], 'test_does_not_exist')
    assert resolve('test_no_such_file.py', files) is None


def test_every_conformance_test_names_its_upstream_test_and_has_a_ledger_row():
    """A port says which upstream test it follows (file and It() text) and the ledger's Conformance section pins it."""
    folder = os.path.join(TWIN, 'conformance')
    with open(LEDGER, encoding='utf-8') as handle:
        ledger = handle.read()
    ports = []
    for name in sorted(os.listdir(folder)):
        if name.startswith('test_') and name.endswith('.py'):
            with open(os.path.join(folder, name), encoding='utf-8') as handle:
                tree = ast.parse(handle.read())
            ports.extend((name, node) for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith('test_'))
    assert ports
    for name, node in ports:
        doc = ast.get_docstring(node) or ''
        names_upstream = re.search(r'(test/e2e/egressip\.go|egressip_controller_test\.go)', doc) and '"' in doc
        assert names_upstream, '%s::%s does not name the upstream file and It() text it follows' % (name, node.name)
        assert '%s::%s' % (name, node.name) in ledger, '%s::%s has no row in FIDELITY.md' % (name, node.name)
