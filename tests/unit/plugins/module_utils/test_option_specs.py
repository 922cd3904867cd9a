"""The option specs several modules share (core/option_specs.py) and their input checks, and the progress options the
module base adds (clients/module.py): PROGRESS_TRIES only progress_interval, PROGRESS_NOTES the notes options too."""

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.ocp.egressip.plugins.doc_fragments import progress as progress_fragment
from ansible_collections.ocp.egressip.plugins.module_utils.clients import module as base
from ansible_collections.ocp.egressip.plugins.module_utils.core import option_specs
from ansible_collections.ocp.egressip.plugins.module_utils.core import progress


def test_the_objects_option_requires_what_the_module_names_besides_the_name():
    spec = option_specs.objects_argument_spec()
    assert spec['type'] == 'list' and spec['elements'] == 'dict' and 'default' not in spec
    assert sorted(spec['options']) == ['egress_ips', 'name', 'namespace_selector', 'pod_selector']
    assert [key for key, entry in spec['options'].items() if entry.get('required')] == ['name']
    strict = option_specs.objects_argument_spec(required=('egress_ips', 'namespace_selector'), default=[])
    assert strict['default'] == []
    assert sorted(key for key, entry in strict['options'].items() if entry.get('required')) == ['egress_ips', 'name', 'namespace_selector']
    assert not option_specs.objects_argument_spec()['options']['egress_ips'].get('required'), 'each call builds its own spec'


def test_the_portgroup_option_is_the_variables_files_portgroup():
    spec = option_specs.portgroup_argument_spec()
    assert spec['type'] == 'dict' and sorted(spec['options']) == ['name', 'switch', 'switch_type', 'vlan_id']
    assert spec['options']['switch_type'] == dict(type='str', choices=['standard', 'distributed'], default='standard')


def test_a_distributed_port_group_needs_its_switch():
    assert option_specs.portgroup_problems(None) == []
    assert option_specs.portgroup_problems({'name': 'pg', 'switch_type': 'standard', 'switch': None}) == []
    assert option_specs.portgroup_problems({'name': 'pg', 'switch_type': 'distributed', 'switch': 'DSwitch1'}) == []
    assert option_specs.portgroup_problems({'name': 'pg', 'switch_type': 'distributed', 'switch': None}) == [
        'portgroup.switch is not set for the distributed port group pg; give its distributed switch.']


def test_waits_and_poll_intervals_must_be_above_zero():
    params = {'wait_timeout': 0, 'poll_interval': 0.5, 'other': -1}
    assert option_specs.not_positive(params, ('wait_timeout', 'poll_interval')) == ['wait_timeout=0 must be above 0.']


class _Built(Exception):
    pass


@pytest.fixture
def spec_of(monkeypatch):
    """The argument spec EgressModule hands to AnsibleModule for the given keyword arguments."""
    def init(_self, argument_spec=None, **_kwargs):
        raise _Built(argument_spec)
    monkeypatch.setattr(basic.AnsibleModule, '__init__', init)

    def build(**kwargs):
        with pytest.raises(_Built) as built:
            base.EgressModule('the_step', argument_spec=dict(name=dict(type='str')), connection=base.NONE, **kwargs)
        return built.value.args[0]
    return build


def test_the_progress_options_follow_how_the_action_plugin_shows_progress(spec_of):
    assert sorted(spec_of()) == ['name']
    tries = spec_of(progress=base.PROGRESS_TRIES)
    assert sorted(tries) == ['name', 'progress_interval']
    assert tries['progress_interval'] == progress.argument_spec()['progress_interval']
    documented = yaml.safe_load(progress_fragment.ModuleDocFragment.DOCUMENTATION)['options']
    assert sorted(documented) == ['progress_interval'] and documented['progress_interval']['default'] == tries['progress_interval']['default']
    notes = spec_of(progress=base.PROGRESS_NOTES)
    assert sorted(notes) == sorted(['name'] + list(progress.argument_spec()))
    assert spec_of(progress=True) == notes
