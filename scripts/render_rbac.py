"""Write rbac/<playbook>.yml, the ClusterRole of each playbook, from plugins/module_utils/checks/permissions.py RULES.

Run from the repository root after changing RULES: .venv/bin/python scripts/render_rbac.py
(tests/unit/plugins/module_utils/test_permissions.py fails while a file differs from RULES).
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, '.build'))

from ansible_collections.ocp.egressip.plugins.module_utils.checks import permissions as _permissions


def main():
    for playbook in _permissions.PLAYBOOKS:
        path = os.path.join(ROOT, _permissions.role_file(playbook))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(_permissions.manifest_text(playbook))
        print(path)


if __name__ == '__main__':
    main()
