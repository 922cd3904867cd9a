"""egressip_discover's hints: the module option, the migrate role's argument spec and the keys the discovery reads are the
same (the ipv6 part too), and hints as AnsibleModule hands them over (every suboption, None when unset) change nothing."""

import os
import sys

import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate as _migrate
from ansible_collections.ocp.egressip.plugins.modules import egressip_discover

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils'))
import _hand_made_snapshots as hm  # noqa: E402  pylint: disable=wrong-import-position,wrong-import-order

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def _role_hints():
    with open(os.path.join(REPO_ROOT, 'roles', 'migrate', 'meta', 'argument_specs.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)['argument_specs']['main']['options']['migrate_hints']


def test_module_role_and_discovery_know_the_same_hints():
    option = egressip_discover.argument_spec()['hints']
    role = _role_hints()
    assert set(option['options']) == set(role['options']) == set(_migrate.HINT_KEYS)
    assert set(option['options']['ipv6']['options']) == set(role['options']['ipv6']['options']) == set(_migrate.FAMILY_HINT_KEYS)
    documented = yaml.safe_load(egressip_discover.DOCUMENTATION)['options']['hints']['suboptions']
    assert set(documented) == set(option['options']) and set(documented['ipv6']['suboptions']) == set(_migrate.FAMILY_HINT_KEYS)


def test_unset_hints_as_the_module_passes_them_change_nothing():
    unset = dict((key, None) for key in _migrate.HINT_KEYS)
    unset['ipv6'] = dict((key, None) for key in _migrate.FAMILY_HINT_KEYS)
    assert _migrate.discover(hm.hand_made(), unset, True)['variables'] == _migrate.discover(hm.hand_made(), {}, True)['variables']
