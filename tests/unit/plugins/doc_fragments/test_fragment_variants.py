"""How a doc fragment variant is made from another (plugin_utils/fragments.py): the options under a dict option with
their references prefixed, the notes kept; a rewrite whose text is gone fails instead of passing silently."""

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import nested_options, only_options, rewritten

FLAT = r'''
options:
  host:
    description:
      - The server; see O(port).
    type: str
  port:
    description: Its port, with O(host).
    type: int
    default: 443


notes:
  - O(host) in a note stays as it is.
'''


def test_nested_options_are_the_flat_ones_under_the_parent_with_prefixed_references():
    nested = yaml.safe_load(nested_options(FLAT, 'server', '''
      - The connection.
'''))
    flat = yaml.safe_load(FLAT)
    assert list(nested['options']) == ['server']
    parent = nested['options']['server']
    assert parent['description'] == ['The connection.'] and parent['type'] == 'dict'
    assert parent['suboptions'] == {
        'host': {'description': ['The server; see O(server.port).'], 'type': 'str'},
        'port': {'description': 'Its port, with O(server.host).', 'type': 'int', 'default': 443},
    }
    assert nested['notes'] == flat['notes']


def test_a_rewrite_replaces_once_and_fails_when_its_text_is_gone():
    assert rewritten('a b a', ('a', 'c'), ('b', 'd')) == 'c d a'
    with pytest.raises(ValueError, match='is not in the text'):
        rewritten('a b', ('x', 'y'))


def test_only_options_keeps_the_named_options_in_order_and_drops_the_rest():
    cut = yaml.safe_load(only_options(FLAT, 'port', 'host'))
    assert list(cut) == ['options'] and list(cut['options']) == ['port', 'host']
    assert cut['options'] == dict((name, yaml.safe_load(FLAT)['options'][name]) for name in ('port', 'host'))
    with pytest.raises(ValueError, match='vlan_id'):
        only_options(FLAT, 'host', 'vlan_id')
