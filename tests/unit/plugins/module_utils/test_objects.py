"""core/objects.py: the one home of the small readers over Kubernetes objects."""

from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import condition_status, dig, labels, meta, name, node_ready

NODE = {'metadata': {'name': 'worker-0', 'labels': {'k8s.ovn.org/egress-assignable': ''}},
        'status': {'conditions': [{'type': 'MemoryPressure', 'status': 'False'}, {'type': 'Ready', 'status': 'True'}]}}


def test_dig_returns_the_nested_value_or_none_where_a_step_is_missing_or_not_a_mapping():
    assert dig(NODE, 'metadata', 'name') == 'worker-0'
    assert dig(NODE, 'metadata', 'annotations', 'x') is None
    assert dig(NODE, 'status', 'conditions', 0) is None  # a list is not walked into
    assert dig(None, 'metadata') is None
    assert dig(NODE) is NODE


def test_meta_name_and_labels_of_objects_with_and_without_metadata():
    assert meta(NODE)['name'] == 'worker-0' and meta(None) == {} and meta({'metadata': None}) == {}
    assert name(NODE) == 'worker-0' and name({}) == '' and name(None) == ''
    assert labels(NODE) == {'k8s.ovn.org/egress-assignable': ''} and labels({'metadata': {'labels': None}}) == {}


def test_node_ready_only_when_the_ready_condition_is_true():
    assert node_ready(NODE)
    assert condition_status(NODE, 'MemoryPressure') == 'False' and condition_status(NODE, 'DiskPressure') is None
    not_ready = {'status': {'conditions': [{'type': 'Ready', 'status': 'Unknown'}]}}
    assert not node_ready(not_ready) and not node_ready({}) and not node_ready({'status': {'conditions': ['bad']}})
