"""Forwarding and the Node Tuning Operator's Profiles: ip_forwarding's wait, its removal guard, verify's check (pure code)."""

import ipaddress

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as _verify_path
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw

OURS = 'egressip-forwarding-node-ens224'
TARGETS = [{'node': 'w0', 'hostname': 'w0', 'interface': 'ens224', 'parent': 'openshift-node'},
           {'node': 'w1', 'hostname': 'w1', 'interface': 'ens224', 'parent': 'openshift-node'}]


def profile(node='w0', recommended=OURS, running=OURS, applied='True', degraded='False', message='TuneD profile applied.',
            degraded_message='No warning or error messages observed applying the TuneD daemon profile.'):
    return {'metadata': {'name': node, 'generation': 2},
            'spec': {'config': {'tunedProfile': recommended}},
            'status': {'tunedProfile': running, 'conditions': [
                {'type': 'Applied', 'status': applied, 'message': message},
                {'type': 'Degraded', 'status': degraded, 'message': degraded_message}]}}


def test_expected_profile_names_follow_the_desired_tuned():
    tuned = fw.desired_tuned(TARGETS, 20)
    assert fw.expected_profiles(TARGETS) == {'w0': OURS, 'w1': OURS}
    assert [item['name'] for item in tuned['spec']['profile']] == [OURS]


@pytest.mark.parametrize('item, state, text', [
    (None, fw.FORWARDING_PENDING, 'no Profile'),
    (profile(recommended='openshift-node', running='openshift-node'), fw.FORWARDING_PENDING, 'recommends profile openshift-node'),
    (profile(running='openshift-node'), fw.FORWARDING_PENDING, 'TuneD still runs profile openshift-node'),
    (profile(applied='False', message='The TuneD daemon profile not yet applied, or application failed.'), fw.FORWARDING_PENDING,
     'not yet applied'),
    (profile(degraded='True', degraded_message='TuneD daemon issued one or more error message(s) ... ERROR x'), fw.FORWARDING_DEGRADED,
     'ERROR x'),
    (profile(applied='False', degraded='True', degraded_message='ERROR y'), fw.FORWARDING_DEGRADED, 'ERROR y'),
    (profile(), fw.FORWARDING_APPLIED, 'TuneD profile applied.'),
])
def test_forwarding_progress(item, state, text):
    got, message = fw.forwarding_progress(item, OURS)
    assert got == state and text in message


def test_a_stale_degraded_of_another_profile_is_pending_not_degraded():
    assert fw.forwarding_progress(profile(running='openshift-node', degraded='True'), OURS)[0] == fw.FORWARDING_PENDING


def test_observed_generation_behind_is_accepted_when_the_profile_and_conditions_say_applied():
    item = profile()
    item['status']['observedGeneration'] = 1  # TuneD does not rewrite an unchanged status
    assert fw.forwarding_progress(item, OURS)[0] == fw.FORWARDING_APPLIED


def nodes(*names):
    return [{'metadata': {'name': name, 'labels': {'kubernetes.io/hostname': name}}} for name in names]


def test_removals_absent_and_a_node_left_out():
    before = fw.desired_tuned(TARGETS, 20)
    assert fw.forwarding_removals(nodes('w0', 'w1'), before, None) == {'w0': {4: ['ens224']}, 'w1': {4: ['ens224']}}
    assert fw.forwarding_removals(nodes('w0', 'w1'), before, fw.desired_tuned(TARGETS[:1], 20)) == {'w1': {4: ['ens224']}}
    assert fw.forwarding_removals(nodes('w0', 'w1'), None, before) == {}
    assert fw.forwarding_removals(nodes('w0', 'w1'), before, before) == {}


def test_removals_count_ipv6_forwarding_too():
    both = fw.desired_tuned(TARGETS, 20, ipv6=True)
    assert fw.forwarded_interfaces(both, 6) == {'w0': {'ens224'}, 'w1': {'ens224'}}
    assert fw.forwarded_interfaces(both) == fw.forwarded_interfaces(both, 4) == {'w0': {'ens224'}, 'w1': {'ens224'}}
    assert fw.forwarded_interfaces(fw.desired_tuned(TARGETS, 20), 6) == {'w0': set(), 'w1': set()}
    # absent: both families go; shrinking to IPv4 only: the IPv6 sysctl goes, IPv4 stays
    assert fw.forwarding_removals(nodes('w0', 'w1'), both, None) == {'w0': {4: ['ens224'], 6: ['ens224']},
                                                                     'w1': {4: ['ens224'], 6: ['ens224']}}
    assert fw.forwarding_removals(nodes('w0', 'w1'), both, fw.desired_tuned(TARGETS, 20)) == {'w0': {6: ['ens224']},
                                                                                              'w1': {6: ['ens224']}}
    assert fw.forwarding_removals(nodes('w0', 'w1'), both, fw.desired_tuned(TARGETS[:1], 20, ipv6=True)) == {
        'w1': {4: ['ens224'], 6: ['ens224']}}
    assert fw.forwarding_removals(nodes('w0', 'w1'), fw.desired_tuned(TARGETS, 20), both) == {}


def egressip(name, items):
    return {'metadata': {'name': name}, 'status': {'items': [{'egressIP': ip, 'node': node} for ip, node in items]}}


def state(node, addresses, addresses6=()):
    def entries(items):
        return [{'ip': a.split('/')[0], 'prefix-length': int(a.split('/')[1])} for a in items]
    return {'metadata': {'name': node}, 'status': {'currentState': {'interfaces': [
        {'name': 'ens224', 'type': 'ethernet', 'ipv4': {'address': entries(addresses)}, 'ipv6': {'address': entries(addresses6)}}]}}}


def test_stranded_counts_only_the_secondary_network():
    removed = {'w0': {4: ['ens224']}, 'w1': {4: ['ens224']}}
    eips = [egressip('payments', [('10.20.0.200', 'w0'), ('192.168.10.50', 'w1')])]
    states = {'w0': state('w0', ['10.20.0.10/24']), 'w1': state('w1', ['10.20.0.11/24'])}
    # without cidr: the subnets of the addresses on the forwarded NIC; the primary-network IP on w1 does not count
    assert fw.forwarding_stranded(removed, states, eips, None) == [('w0', 4, ['ens224'], [('payments', '10.20.0.200')])]
    assert fw.forwarding_stranded(removed, states, eips, [ipaddress.ip_network('10.30.0.0/24')]) == []
    assert fw.forwarding_stranded(removed, {}, eips, [ipaddress.ip_network('10.20.0.0/24')]) == [
        ('w0', 4, ['ens224'], [('payments', '10.20.0.200')])]
    assert fw.forwarding_stranded(removed, states, None, None) == []  # no EgressIP API: nothing hosted


V6_EIPS = [egressip('payments', [('10.20.0.200', 'w0'), ('fd00:20::200', 'w0'), ('fd00:20::201', 'w1')])]
V6_STATES = {'w0': state('w0', ['10.20.0.10/24'], ['fd00:20::10/64']), 'w1': state('w1', ['10.20.0.11/24'], ['fd00:20::11/64'])}


def test_stranded_per_family_an_ipv6_removal_strands_the_ipv6_egress_ips_only():
    only6 = {'w0': {6: ['ens224']}, 'w1': {6: ['ens224']}}
    assert fw.forwarding_stranded(only6, V6_STATES, V6_EIPS, None) == [
        ('w0', 6, ['ens224'], [('payments', 'fd00:20::200')]), ('w1', 6, ['ens224'], [('payments', 'fd00:20::201')])]
    # the network given for IPv6 decides for IPv6 IPs
    assert fw.forwarding_stranded(only6, V6_STATES, V6_EIPS, [ipaddress.ip_network('fd00:30::/64')]) == []
    # an IPv4-only network (the IPv6 part dropped from the variables): the IPv6 IPs on the NIC's IPv6 subnet still count
    assert fw.forwarding_stranded(only6, V6_STATES, V6_EIPS, [ipaddress.ip_network('10.20.0.0/24')]) == [
        ('w0', 6, ['ens224'], [('payments', 'fd00:20::200')]), ('w1', 6, ['ens224'], [('payments', 'fd00:20::201')])]
    # removing IPv4 forwarding strands the IPv4 egress IP, not the IPv6 ones
    only4 = {'w0': {4: ['ens224']}, 'w1': {4: ['ens224']}}
    assert fw.forwarding_stranded(only4, V6_STATES, V6_EIPS, None) == [('w0', 4, ['ens224'], [('payments', '10.20.0.200')])]
    both = {'w0': {4: ['ens224'], 6: ['ens224']}}
    assert fw.forwarding_stranded(both, {}, V6_EIPS, [ipaddress.ip_network('10.20.0.0/24'), ipaddress.ip_network('fd00:20::/64')]) == [
        ('w0', 4, ['ens224'], [('payments', '10.20.0.200')]), ('w0', 6, ['ens224'], [('payments', 'fd00:20::200')])]


TUNEDS = [{'spec': {'profile': [
    {'name': 'base', 'data': '[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'},
    {'name': OURS, 'data': '[main]\ninclude=openshift-node\n\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'},
    {'name': 'vlan', 'data': '[sysctl]\nnet.ipv4.conf.ens224/100.forwarding=1\n'},
    {'name': 'all', 'data': '[sysctl]\nnet.ipv4.ip_forward=1\n'},
    {'name': 'child-off', 'data': '[main]\ninclude=base\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=0\n'},
    {'name': 'child', 'data': '[main]\ninclude=base\n'}]}}]


@pytest.mark.parametrize('name, interface, expected', [
    (OURS, 'ens224', True), (OURS, 'ens256', False), ('vlan', 'ens224.100', True), ('all', 'ens256', True),
    ('child-off', 'ens224', False), ('child', 'ens224', True), ('openshift-node', 'ens224', False), (None, 'ens224', False)])
def test_forwarding_in_profile(name, interface, expected):
    assert fw.forwarding_in_profile(name, TUNEDS, interface) is expected


def facts(*profiles, global_forwarding=False):
    operator = {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Global'}}}}} if global_forwarding else {}
    return _verify_path.forwarding_facts(list(profiles), TUNEDS, operator)


def test_node_forwarding_from_the_profile_status():
    assert _verify_path.node_forwarding(facts(profile()), 'w0', 'ens224')[0] is True
    off, why = _verify_path.node_forwarding(facts(profile(running='openshift-node')), 'w0', 'ens224')
    assert off is False and 'profile openshift-node, which TuneD runs on node w0, does not set net.ipv4.conf.ens224.forwarding=1' in why
    off, why = _verify_path.node_forwarding(facts(profile(degraded='True', degraded_message='ERROR z')), 'w0', 'ens224')
    assert off is False and 'Profile w0 is Degraded' in why and 'ERROR z' in why
    off, why = _verify_path.node_forwarding(facts(profile(applied='False', message='not yet')), 'w0', 'ens224')
    assert off is False and 'has not applied' in why
    assert _verify_path.node_forwarding(facts(), 'w0', 'ens224')[0] is None
    assert _verify_path.node_forwarding(facts(global_forwarding=True), 'w0', 'ens224')[0] is True


def row(interface='ens224', path=_verify_path.PATH_OK):
    return {'exists': True, 'interface': interface, 'path': path, 'problems': [], 'notes': [], 'blackhole_kinds': []}


def test_apply_forwarding_marks_the_path_broken_with_the_named_kind():
    rows = {'w0': row(), 'w1': row(interface=None), 'w2': row(path=_verify_path.PATH_NO_ADDRESS)}
    _verify_path.apply_forwarding(facts(profile(running='openshift-node')), rows)
    assert rows['w0']['path'] == _verify_path.PATH_BROKEN and rows['w0']['forwarding'] is False
    assert rows['w0']['blackhole_kinds'] == [_verify_path.FORWARDING_OFF] and 'IP forwarding is off on ens224' in rows['w0']['problems'][0]
    assert 'forwarding' not in rows['w1'] and 'forwarding' not in rows['w2']  # no known NIC; no address (capacity loss)
    untouched = {'w0': row()}
    _verify_path.apply_forwarding(None, untouched)  # Profiles not read
    assert untouched['w0']['path'] == _verify_path.PATH_OK and 'forwarding' not in untouched['w0']


def ipv6_facts(*profiles, ipv6=True):
    """Facts whose Tuned is what ip_forwarding writes (with or without its IPv6 sysctl), every Profile running it."""
    return _verify_path.forwarding_facts(list(profiles), [fw.desired_tuned(TARGETS, 20, ipv6=ipv6)], {})


@pytest.mark.parametrize('ipv6', [True, False])
def test_verify_reads_ipv6_forwarding_on_whether_or_not_ip_forwarding_writes_the_per_interface_key(ipv6):
    """The per-interface IPv6 key ip_forwarding writes only switches the link to router behaviour: IPv6 is on either way."""
    tuned = fw.desired_tuned(TARGETS, 20, ipv6=ipv6)
    assert fw.forwarding_in_profile(OURS, [tuned], 'ens224', 4) is True
    assert fw.forwarding_in_profile(OURS, [tuned], 'ens224', 6) is ipv6
    assert fw.ipv6_all_forwarding_in_profile(OURS, [tuned]) is None
    on, why = _verify_path.node_forwarding(ipv6_facts(profile(), ipv6=ipv6), 'w0', 'ens224', 6)
    assert on is True and why.startswith('ovnkube-node sets net.ipv6.conf.all.forwarding=1 on clusters with IPv6'), why


V6_TUNEDS = [{'spec': {'profile': [
    {'name': 'v6off', 'data': '[main]\ninclude=openshift-node\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\nnet.ipv6.conf.all.forwarding=0\n'},
    {'name': 'v6off-child', 'data': '[main]\ninclude=v6off\n'},
    {'name': 'v6on-child', 'data': '[main]\ninclude=v6off\n[sysctl]\nnet.ipv6.conf.all.forwarding=1\n'},
    {'name': 'v6link-off', 'data': '[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\nnet.ipv6.conf.ens224.forwarding=0\n'},
    {'name': 'v6slash-off', 'data': '[sysctl]\nnet/ipv6/conf/all/forwarding = 0\n'},
    {'name': 'v4only', 'data': '[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'}]}}]


@pytest.mark.parametrize('name, expected', [
    ('v6off', False), ('v6off-child', False), ('v6on-child', True), ('v6link-off', None), ('v6slash-off', False), ('v4only', None),
    ('openshift-node', None), (None, None)])
def test_ipv6_all_forwarding_in_profile(name, expected):
    assert fw.ipv6_all_forwarding_in_profile(name, V6_TUNEDS) is expected


def v6_facts(*profiles, global_forwarding=False):
    operator = {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Global'}}}}} if global_forwarding else {}
    return _verify_path.forwarding_facts(list(profiles), V6_TUNEDS, operator)


@pytest.mark.parametrize('running', ['v4only', 'v6link-off', 'v6on-child'])
def test_ipv6_forwarding_is_on_without_a_node_wide_zero(running):
    on, why = _verify_path.node_forwarding(v6_facts(profile(recommended=running, running=running)), 'w0', 'ens224', 6)
    assert on is True and 'ovnkube-node sets net.ipv6.conf.all.forwarding=1 on clusters with IPv6' in why, why
    assert 'net.ipv6.conf.<if>.forwarding does not forward' in why


@pytest.mark.parametrize('running', ['v6off', 'v6off-child', 'v6slash-off'])
def test_ipv6_forwarding_is_off_when_the_applied_profile_sets_the_node_wide_switch_to_zero(running):
    off, why = _verify_path.node_forwarding(v6_facts(profile(recommended=running, running=running)), 'w0', 'ens224', 6)
    assert off is False, why
    assert why.startswith('profile %s, which TuneD applied on node w0, sets net.ipv6.conf.all.forwarding=0: that turns off the '
                          'node-wide switch' % running), why
    # IPv4 is still read per link from the same profile
    assert _verify_path.node_forwarding(v6_facts(profile(recommended=running, running=running)), 'w0', 'ens224', 4)[0] is (
        running != 'v6slash-off')


def test_ipv6_forwarding_global_wins_over_a_profile_that_sets_zero():
    assert _verify_path.node_forwarding(v6_facts(profile(running='v6off'), global_forwarding=True), 'w0', 'ens224', 6) == (
        True, 'gatewayConfig.ipForwarding is Global')


def test_ipv6_forwarding_without_a_profile_is_on():
    on, why = _verify_path.node_forwarding(v6_facts(), 'w0', 'ens224', 6)
    assert on is True and 'node w0 has no Profile in openshift-cluster-node-tuning-operator, so no TuneD profile turns it off' in why
    assert _verify_path.node_forwarding(v6_facts(), 'w0', 'ens224', 4)[0] is None  # IPv4 unchanged: cannot tell


@pytest.mark.parametrize('state', [{'degraded': 'True', 'degraded_message': 'ERROR z'}, {'applied': 'False', 'message': 'not yet'}])
def test_ipv6_forwarding_stays_on_with_a_degraded_or_unapplied_profile_ipv4_reports_it(state):
    item = profile(running='v4only', **state)
    on, why = _verify_path.node_forwarding(v6_facts(item), 'w0', 'ens224', 6)
    assert on is True and 'it stays on although' in why and ('ERROR z' in why or 'has not applied' in why), why
    off, why4 = _verify_path.node_forwarding(v6_facts(item), 'w0', 'ens224', 4)
    assert off is False and ('Profile w0 is Degraded' in why4 or 'has not applied' in why4)


def test_ipv6_forwarding_cannot_be_told_when_a_zero_profile_is_not_cleanly_applied():
    unknown, why = _verify_path.node_forwarding(v6_facts(profile(running='v6off', degraded='True', degraded_message='ERROR z')),
                                                'w0', 'ens224', 6)
    assert unknown is None and 'profile v6off, which TuneD runs on node w0, sets net.ipv6.conf.all.forwarding=0' in why
    assert 'ERROR z' in why and 'not known' in why


def test_ipv6_forwarding_keys_vlan_and_all():
    tuneds = [{'spec': {'profile': [
        {'name': 'v6vlan', 'data': '[sysctl]\nnet.ipv6.conf.ens224/100.forwarding=1\n'},
        {'name': 'v6all', 'data': '[sysctl]\nnet.ipv6.conf.all.forwarding=1\n'},
        {'name': 'v4all', 'data': '[sysctl]\nnet.ipv4.ip_forward=1\nnet.ipv4.conf.all.forwarding=1\n'}]}}]
    assert fw.forwarding_in_profile('v6vlan', tuneds, 'ens224.100', 6) is True
    assert fw.forwarding_in_profile('v6vlan', tuneds, 'ens224.100', 4) is False
    assert fw.forwarding_in_profile('v6all', tuneds, 'ens256', 6) is True
    assert fw.forwarding_in_profile('v4all', tuneds, 'ens256', 6) is False  # IPv4's switches do not forward IPv6


def test_subnet_families():
    assert _verify_path.subnet_families(['10.20.0.0/24', 'fd00:20::/64', 'junk']) == [4, 6]
    assert _verify_path.subnet_families([]) == []


def test_apply_forwarding_checks_each_family_and_names_it():
    rows = {'w0': row(), 'w1': row()}
    # the applied profile sets net.ipv6.conf.all.forwarding=0: the dual-stack node w0 is broken for IPv6, the IPv4-only node w1 is fine
    _verify_path.apply_forwarding(v6_facts(profile(running='v6off'), profile(node='w1', running='v6off')), rows, {'w0': [4, 6], 'w1': [4]})
    assert rows['w0']['forwarding'] is False and rows['w0']['forwarding_families'] == {'ipv4': True, 'ipv6': False}
    assert rows['w0']['path'] == _verify_path.PATH_BROKEN and rows['w0']['blackhole_kinds'] == [_verify_path.FORWARDING_OFF]
    assert rows['w0']['problems'] == ['IP forwarding is off node-wide on w0, so also on ens224 (IPv6): profile v6off, which TuneD '
                                      'applied on node w0, sets net.ipv6.conf.all.forwarding=0: that turns off the node-wide switch '
                                      'Linux forwards IPv6 by (ovnkube-node sets it to 1); gatewayConfig.ipForwarding is not Global']
    assert rows['w1']['forwarding'] is True and rows['w1']['path'] == _verify_path.PATH_OK
    # what ip_forwarding writes without its IPv6 key (IPv4 only): both families on
    fine = {'w0': row()}
    _verify_path.apply_forwarding(ipv6_facts(profile(), ipv6=False), fine, {'w0': [4, 6]})
    assert fine['w0']['forwarding_families'] == {'ipv4': True, 'ipv6': True} and fine['w0']['problems'] == []
    assert fine['w0']['path'] == _verify_path.PATH_OK and fine['w0']['notes'] == []
    # Degraded: IPv4 reports it, IPv6 stays on
    degraded = {'w0': row()}
    _verify_path.apply_forwarding(ipv6_facts(profile(degraded='True')), degraded, {'w0': [4, 6]})
    assert degraded['w0']['blackhole_kinds'] == [_verify_path.FORWARDING_OFF] and len(degraded['w0']['problems']) == 1
    assert degraded['w0']['forwarding_families'] == {'ipv4': False, 'ipv6': True} and '(IPv4)' in degraded['w0']['problems'][0]
    # an IPv6-only node: no IPv4 check reports the Degraded Profile, so a note does; the path stays ok
    only6 = {'w0': row()}
    _verify_path.apply_forwarding(ipv6_facts(profile(degraded='True', degraded_message='ERROR z')), only6, {'w0': [6]})
    assert only6['w0']['forwarding'] is True and only6['w0']['path'] == _verify_path.PATH_OK and only6['w0']['problems'] == []
    assert len(only6['w0']['notes']) == 1 and 'IP forwarding (IPv6) on ens224 is on' in only6['w0']['notes'][0]
    assert 'ERROR z' in only6['w0']['notes'][0]
    # no Profiles: IPv4 cannot be told, IPv6 is ovnkube-node's
    unknown = {'w0': row()}
    _verify_path.apply_forwarding(ipv6_facts(), unknown, {'w0': [4, 6]})
    assert unknown['w0']['forwarding'] is None and unknown['w0']['forwarding_families'] == {'ipv4': None, 'ipv6': True}
    assert [note.split(':')[0] for note in unknown['w0']['notes']] == ['IP forwarding (IPv4) on ens224 not checked']
    # a zero profile not cleanly applied: cannot tell
    unsure = {'w0': row()}
    _verify_path.apply_forwarding(v6_facts(profile(running='v6off', applied='False')), unsure, {'w0': [6]})
    assert unsure['w0']['forwarding'] is None and 'IP forwarding (IPv6) on ens224 not checked' in unsure['w0']['notes'][0]
    everywhere = {'w0': row()}
    _verify_path.apply_forwarding(facts(global_forwarding=True), everywhere, {'w0': [4, 6]})
    assert everywhere['w0']['forwarding_families'] == {'ipv4': True, 'ipv6': True}
