"""enable's closing summary: one line per step that changed something, names truncated at scale."""

from ansible_collections.ocp.egressip.plugins.filter.enable_summary import enable_summary

WORKERS = ['ocp1-worker-%d' % i for i in range(200)]


def test_a_first_run_names_what_each_step_changed():
    lines = enable_summary({
        'portgroup': {'changed': True, 'portgroup': {'name': 'ocp-egress-120', 'hosts': [
            {'host': 'esxi-%d' % i, 'action': 'create'} for i in range(3)] + [{'host': 'esxi-3', 'action': 'none'}]}},
        'nics': {'changed': True, 'vms': [{'name': vm, 'action': 'add'} for vm in WORKERS[:3]] + [{'name': 'm', 'action': 'none'}]},
        'machine_api': {'changed': True, 'machinesets': [{'name': 'ocp1-worker', 'action': 'append'}]},
        'addresses': {'changed': True, 'created': ['egressip-' + w for w in WORKERS[:3]], 'updated': [], 'deleted': []},
        'forwarding': {'changed': True, 'tuned': 'ns/egressip-forwarding', 'interfaces': [
            {'node': w, 'forwarding_before': False, 'forwarding_after': True} for w in WORKERS[:3]]},
        'labels': {'changed': True, 'added': WORKERS[:3], 'removed': []},
        'egressips': {'changed': True, 'egressips': [{'name': 'team-a', 'action': 'create'}, {'name': 'team-b', 'action': 'none'}]},
    })
    assert lines == [
        'This run changed:',
        '- port group ocp-egress-120: create 3 (esxi-0, esxi-1, esxi-2)',
        '- VM NICs: add 3 (ocp1-worker-0, ocp1-worker-1, ocp1-worker-2)',
        '- MachineSets: append 1 (ocp1-worker)',
        '- NMState policies: created 3 (egressip-ocp1-worker-0, egressip-ocp1-worker-1, egressip-ocp1-worker-2)',
        '- IP forwarding: on for 3 node(s) (ocp1-worker-0, ocp1-worker-1, ocp1-worker-2)',
        '- egress-assignable: label added on 3 node(s) (ocp1-worker-0, ocp1-worker-1, ocp1-worker-2)',
        '- EgressIP objects: create 1 (team-a)',
    ]


def test_at_scale_names_are_truncated_and_counted():
    lines = enable_summary({'labels': {'added': WORKERS, 'removed': WORKERS[:2]}}, names=3)
    assert lines[1] == ('- egress-assignable: label added on 200 node(s) (ocp1-worker-0, ocp1-worker-1, ocp1-worker-2 and 197 more); '
                        'label removed from 2 node(s) (ocp1-worker-0, ocp1-worker-1)')


def test_a_no_op_run_and_skipped_steps_and_check_mode():
    results = {'nics': {'changed': False, 'vms': [{'name': 'a', 'action': 'none'}]}, 'egressips': {'skipped': True, 'egressips': [
        {'name': 'x', 'action': 'create'}]}, 'addresses': None}
    assert enable_summary(results) == ['Nothing changed: every step was already as the variables ask.']
    expected = ['A real run would change:', '- egress-assignable: label added on 1 node(s) (w)']
    assert enable_summary({'labels': {'added': ['w']}}, check_mode=True) == expected


def test_the_in_cluster_guard_line_counts_its_objects_by_action():
    objects = [{'id': 'Namespace ocp-egressip-guard', 'action': 'create'}, {'id': 'CronJob ocp-egressip-guard/egressip-guard', 'action': 'update'},
               {'id': 'ClusterRole egressip-guard', 'action': 'none'}]
    lines = enable_summary({'guard': {'changed': True, 'objects': objects}})
    assert lines == ['This run changed:',
                     '- in-cluster guard: create 1 (Namespace ocp-egressip-guard); update 1 (CronJob ocp-egressip-guard/egressip-guard)']
    assert enable_summary({'guard': {'skipped': True}}) == ['Nothing changed: every step was already as the variables ask.']


def test_every_failure_domain_s_port_group_is_named():
    """With failure domains the module's `portgroup` is the first domain's only: each domain gets its line."""
    first = {'name': 'egress-a', 'hosts': [{'host': 'esxi-a-0', 'action': 'create'}, {'host': 'esxi-a-1', 'action': 'none'}]}
    second = {'name': 'egress-b', 'action': 'create'}   # distributed: one port group, no hosts
    third = {'name': 'egress-c', 'hosts': [{'host': 'esxi-c-0', 'action': 'none'}]}
    lines = enable_summary({'portgroup': {'changed': True, 'portgroup': first, 'domains': [
        {'name': 'zone-a', 'portgroup': first}, {'name': 'zone-b', 'portgroup': second}, {'name': 'zone-c', 'portgroup': third}]}})
    assert lines == ['This run changed:',
                     '- port group egress-a (failure domain zone-a): create 1 (esxi-a-0); port group egress-b (failure domain zone-b): create']
