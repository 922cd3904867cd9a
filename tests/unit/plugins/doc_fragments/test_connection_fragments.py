"""The nested variant of the connection and lock doc fragments is made from the flat one (plugin_utils/fragments.py;
the flat one stays a literal string, which ansible-test's yamllint reads from the AST): it must stay the flat one placed
under its parent option (the lock: the flat one but for where lock_timeout says the Lease is read)."""

import re

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.doc_fragments import cluster_lock, k8s_auth, vsphere_auth


def _nested(flat_options, parent):
    """The flat options as the suboptions of `parent`, with O(name) references written O(parent.name)."""
    names = list(flat_options)
    text = yaml.safe_dump(flat_options, sort_keys=True)
    text = re.sub(r'O\((%s)\)' % '|'.join(names), r'O(%s.\1)' % parent, text)
    return yaml.safe_load(text)


@pytest.mark.parametrize('fragment, parent', [(k8s_auth, 'kubernetes'), (vsphere_auth, 'vsphere')])
def test_the_nested_connection_options_are_the_flat_ones_under_their_parent(fragment, parent):
    flat = yaml.safe_load(fragment.ModuleDocFragment.DOCUMENTATION)
    nested = yaml.safe_load(fragment.ModuleDocFragment.NESTED)
    assert list(nested['options']) == [parent]
    assert nested['options'][parent]['type'] == 'dict'
    assert nested['options'][parent]['suboptions'] == _nested(flat['options'], parent)
    assert nested.get('notes') == flat.get('notes')


def test_the_lock_options_differ_only_in_how_lock_timeout_says_where_the_lease_is_read():
    flat = yaml.safe_load(cluster_lock.ModuleDocFragment.DOCUMENTATION)['options']
    nested = yaml.safe_load(cluster_lock.ModuleDocFragment.NESTED)['options']
    assert set(flat) == set(nested) and len(flat) >= 4
    others = dict((name, value) for name, value in flat.items() if name != 'lock_timeout')
    assert others == dict((name, value) for name, value in nested.items() if name != 'lock_timeout')
    assert 'O(kubernetes)' in ' '.join(nested['lock_timeout']['description'])
    assert flat['lock_timeout']['default'] == nested['lock_timeout']['default'] == 120
