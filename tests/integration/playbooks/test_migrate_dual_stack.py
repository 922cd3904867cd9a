"""playbooks/migrate.yml adopting a hand-made dual-stack egress network (issue 18) on the dual-stack twin.

_by_hand.prepare(ipv6=True): the egress NICs hold an IPv4 and an IPv6 base address, each family with its default route,
forwarding of both families from a hand-made Tuned, and an EgressIP with one IP of each family. Migrate with
migrate_adopt discovers both families into one egressip_network, enable adopts it and the adoption check finds that no
egress IP of either family moved; a rerun changes nothing. The IPv4-only adoption, check mode and the refusals are
test_migrate.py's; the discovery cases are unit tests (tests/unit/plugins/module_utils/test_migrate_ipv6.py).
"""

import json
import os
import sys

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _by_hand as bh  # noqa: E402  pylint: disable=wrong-import-order,wrong-import-position

TWIN_OPTIONS = {'workers': 4, 'dual_stack': True}
pytestmark = pytest.mark.slow


hand_made, out = bh.module_fixtures('migrate-dual-stack', ipv6=True)


def test_adoption_of_a_dual_stack_setup_moves_no_egress_ip(twin, hand_made, run_playbook, out):
    assert ('reports', 'fd00:30::210') in hand_made['assignments'], hand_made['assignments']
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out, migrate_adopt=True))
    assert run.rc == 0, run
    assert run.changed > 0, run
    variables = yaml.safe_load((out / 'egressip-variables.yml').read_text())
    assert variables['egressip_network'] == {
        'cidr': bh.CIDR, 'gateway': bh.GATEWAY, 'route_metric': bh.METRIC, 'ip_forwarding': 'per_interface',
        'node_address_range': '%s-%s' % (bh.ADDRESSES[bh.EGRESS_NODES[0]], bh.ADDRESSES[bh.EGRESS_NODES[-1]]),
        'ipv6': {'cidr': bh.CIDR6, 'gateway': bh.GATEWAY6, 'route_metric': bh.METRIC6,
                 'node_address_range': '%s-%s' % (bh.ADDRESSES6[bh.EGRESS_NODES[0]], bh.ADDRESSES6[bh.EGRESS_NODES[-1]])}}
    objects = dict((entry['name'], entry['egress_ips']) for entry in variables['egressip_objects'])
    assert objects == {'payments': bh.OBJECTS['payments']['egressIPs'], 'reports': bh.IPV6_OBJECTS['reports']}
    assert bh.assignments(twin) == hand_made['assignments']
    after = bh.all_host_cidrs(twin)
    for node, addresses in hand_made['host_cidrs'].items():
        assert set(addresses) <= set(after[node]), node
    policies = dict((item['metadata']['name'], item) for item in twin.custom_objects().list_cluster_custom_object(**bh.NNCP)['items'])
    for node in bh.EGRESS_NODES:
        state = policies['egressip-%s' % node]['spec']['desiredState']
        assert state['interfaces'][0]['ipv6'] == {'enabled': True, 'dhcp': False, 'autoconf': False,
                                                  'address': [{'ip': bh.ADDRESSES6[node], 'prefix-length': 64}]}
        assert [(route['destination'], route['next-hop-address'], route['metric']) for route in state['routes']['config']] == [
            ('0.0.0.0/0', bh.GATEWAY, bh.METRIC), ('::/0', bh.GATEWAY6, bh.METRIC6)]
    tuned = twin.custom_objects().get_namespaced_custom_object(name='egressip-forwarding', **bh.TUNED)
    data = '\n'.join(profile['data'] for profile in tuned['spec']['profile'])
    assert 'net.ipv4.conf.ens224.forwarding=1' in data and 'net.ipv6.conf.ens224.forwarding=1' in data
    report = json.loads((out / 'migrate.json').read_text())
    assert report['adoption_check']['ok'] and report['summary']['ok'], report['findings']


def test_rerun_changes_nothing(twin, hand_made, run_playbook, out):
    bh.adoption_rerun(twin, run_playbook, out, hand_made)
