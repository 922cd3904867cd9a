"""The folders of plugins/module_utils/ are layers (CONTRIBUTING.md): a file imports only from its own layer and the
layers before it, and nothing under plugins/ imports a module file. Every import counts, the lazy ones inside
functions too (ast, not text)."""

import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGINS = os.path.join(REPO, 'plugins')
MODULE_UTILS = os.path.join(PLUGINS, 'module_utils')
PACKAGE = 'ansible_collections.ocp.egressip.plugins.'
# pure layers first (no I/O), then the layers that do I/O with them, then what is built on both
LAYERS = ('core', 'model', 'plan', 'clients', 'snapshot', 'checks', 'reports')


def _imports(path):
    with open(path, encoding='utf-8') as handle:
        tree = ast.parse(handle.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def _targets(module, names):
    """The collection paths ('module_utils.core.kinds', 'modules.egressip') an import names."""
    if not module.startswith(PACKAGE):
        return []
    rest = module[len(PACKAGE):]
    if rest in ('module_utils', 'modules') or rest.count('.') == 1 and rest.startswith('module_utils.'):
        return ['%s.%s' % (rest, name) for name in names] or [rest]
    return [rest]


def _python_files(top):
    for folder, _dirs, files in os.walk(top):
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(folder, name)


def test_every_module_util_lives_in_a_layer():
    loose = [name for name in os.listdir(MODULE_UTILS) if name.endswith('.py') and name != '__init__.py']
    folders = sorted(name for name in os.listdir(MODULE_UTILS) if os.path.isdir(os.path.join(MODULE_UTILS, name)) and name != '__pycache__')
    assert loose == [] and folders == sorted(LAYERS)


@pytest.mark.parametrize('layer', LAYERS)
def test_a_layer_imports_only_from_itself_and_the_layers_before_it(layer):
    allowed = LAYERS[:LAYERS.index(layer) + 1]
    wrong = []
    for path in _python_files(os.path.join(MODULE_UTILS, layer)):
        for line, module, names in _imports(path):
            for target in _targets(module, names):
                parts = target.split('.')
                if parts[0] == 'modules' or parts[0] == 'module_utils' and len(parts) > 1 and parts[1] not in allowed:
                    wrong.append('%s:%d imports %s' % (os.path.relpath(path, REPO), line, target))
    assert wrong == [], 'a layer imports from a later one (move the code, or the name, to the layer it belongs to)'


def test_nothing_under_plugins_imports_a_module_file():
    wrong = []
    for path in _python_files(PLUGINS):
        for line, module, names in _imports(path):
            wrong += ['%s:%d imports %s' % (os.path.relpath(path, REPO), line, target)
                      for target in _targets(module, names) if target.startswith('modules')]
    assert wrong == []


def test_the_check_sees_a_violation():
    """The checks above are not vacuous: an import of a later layer and a lazy import of a module file are found."""
    assert _targets(PACKAGE + 'module_utils.checks.permissions', ['RULES']) == ['module_utils.checks.permissions']
    assert _targets(PACKAGE + 'module_utils.plan', ['guard']) == ['module_utils.plan.guard']
    assert _targets(PACKAGE + 'modules.egressip', ['plan_changes']) == ['modules.egressip']
    tree = list(_imports(os.path.join(MODULE_UTILS, 'clients', 'module.py')))
    assert any(module.endswith('module_lock') or 'module_lock' in names for _line, module, names in tree), 'lazy imports are seen'


MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 60


def _too_long(path, source):
    """Files over MAX_FILE_LINES and functions (methods and nested ones too) over MAX_FUNCTION_LINES, decorators left out."""
    found = []
    lines = source.count('\n') + (0 if source.endswith('\n') else 1)
    if lines > MAX_FILE_LINES:
        found.append('%s: %d lines' % (path, lines))
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
            found.append('%s:%d %s(): %d lines' % (path, node.lineno, node.name, node.end_lineno - node.lineno + 1))
    return found


def test_no_file_under_plugins_over_600_lines_and_no_function_over_60():
    """Issue 15's size limits, kept: split the file by concept, or the function into named steps."""
    found = []
    for path in _python_files(PLUGINS):
        with open(path, encoding='utf-8') as handle:
            found += _too_long(os.path.relpath(path, REPO), handle.read())
    assert found == []


def test_the_size_check_sees_a_long_file_and_a_long_method():
    method = 'class A:\n    def long(self):\n' + '        x = 1\n' * MAX_FUNCTION_LINES
    assert _too_long('a.py', method) == ['a.py:2 long(): %d lines' % (MAX_FUNCTION_LINES + 1)]
    assert _too_long('b.py', 'x = 1\n' * (MAX_FILE_LINES + 1)) == ['b.py: %d lines' % (MAX_FILE_LINES + 1)]
    assert _too_long('c.py', 'def short():\n' + '    x = 1\n' * (MAX_FUNCTION_LINES - 1)) == []
