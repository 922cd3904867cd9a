"""migrate on a hand-made setup whose NICs were added in vCenter only (the Machines still list one device).

Machine API then reports `invalid network count` for those Machines, and enable's preflight stops on
`machine_nic_count_mismatch` (an error in plan mode), although the vSphere step's align_machines would fix exactly that.
Migrate finds the same error in its discovery and stops before adopting: nothing is written, nothing moves. This test
pins today's behaviour; when preflight treats the fixable case as a notice, adoption goes through like test_migrate.py.
"""

import pytest
import yaml

from twin.fixture import kube_writes, vcsim_writes

import _by_hand as bh  # pylint: disable=wrong-import-order

TWIN_OPTIONS = {'workers': 4}
pytestmark = pytest.mark.slow


def test_adoption_stops_before_any_write_on_machine_nic_count_mismatch(twin, run_playbook, tmp_path):
    bh.prepare(twin, machines=False)
    before = bh.assignments(twin)
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook('playbooks/migrate.yml', extra_vars={'migrate_dest': str(tmp_path), 'migrate_acknowledge_unsupported': True,
                                                            'migrate_adopt': True})
    assert run.rc != 0, run
    assert 'machine_nic_count_mismatch' in run.stdout and 'nothing was written to the cluster or vCenter' in run.stdout, run
    assert kube_writes(twin) == 0 and not vcsim_writes(twin)
    assert bh.assignments(twin) == before
    variables = yaml.safe_load((tmp_path / 'egressip-variables.yml').read_text())
    assert variables['egressip_network']['cidr'] == '10.30.0.0/24'
    assert 'Machine ocp1-worker-0 lists 1 network device(s), its VM ocp1-worker-0 has 2 NIC(s)' in (tmp_path / 'migrate.md').read_text()
