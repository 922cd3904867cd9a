"""The files of the fleet report (reports/fleet_files.py) and the egressip_fleet_report module: the record written
atomically, the lock that makes concurrent writers take turns, older runs removed, nothing written in check mode, a
second identical run (or the next run finding the same) changes nothing, bad input refused naming the option."""

import fcntl
import json
import os
import sys
import threading
import time

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet
from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet_files

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils'))
from _file_module import Failed, FileModule as FakeModule  # noqa: E402  pylint: disable=wrong-import-position,wrong-import-order

T1, T2 = '2026-12-03T10:00:01Z', '2026-12-03T11:30:00Z'
ALL = ('cluster-a', 'cluster-b', 'cluster-c')


def verify(errors=()):
    return {'kind': 'verify', 'cluster': {'name': 'ocp', 'id': 'id-1'}, 'findings': [
        {'id': item, 'severity': 'error', 'message': item} for item in errors],
        'summary': {'ok': not errors, 'egress_ips': 2, 'assigned': 2, 'healthy': 2 - len(errors), 'blackholed': len(errors)}}


def update(dest, cluster, record, run_id='run-1', check_mode=False, time_stamp=T1, clusters=ALL, running=None):
    row = fleet.row(cluster, record, time_stamp)
    return fleet_files.update(FakeModule(check_mode), str(dest), run_id, cluster, row, clusters, running=running)


def tree(dest):
    return sorted(os.path.relpath(os.path.join(folder, name), str(dest)) for folder, _dirs, names in os.walk(str(dest)) for name in names)


def report_texts(dest):
    return dict((name, (dest / name).read_text()) for name in ('fleet_report.json', 'fleet_report.md', 'fleet_report.html'))


def test_each_cluster_adds_its_record_and_the_report_holds_every_record_of_the_run(tmp_path):
    dest = tmp_path / 'reports'
    first = update(dest, 'cluster-a', {'playbook': 'verify', 'verify': verify()})
    assert first['changed'] and first['record_written'] and first['report']['not_run'] == ['cluster-b', 'cluster-c']
    assert first['record'] == str(dest / '.fleet' / 'run-1' / 'cluster-a.json')
    update(dest, 'cluster-b', {'playbook': 'verify', 'verify': verify(['egressip_blackhole'])})
    last = update(dest, 'cluster-c', {'playbook': 'verify', 'failure': {'task': 'Log in', 'message': 'HTTP 401'}})
    assert tree(dest) == ['.fleet/lock', '.fleet/run-1/cluster-a.json', '.fleet/run-1/cluster-b.json', '.fleet/run-1/cluster-c.json',
                          'fleet_report.html', 'fleet_report.json', 'fleet_report.md']  # no temporary file left
    written = json.loads((dest / 'fleet_report.json').read_text())
    assert written == last['report'] and [row['verdict'] for row in written['clusters']] == ['ok', 'error', 'failed']
    assert written['not_run'] == [] and written['totals']['failed'] == 1
    assert json.loads((dest / '.fleet' / 'run-1' / 'cluster-b.json').read_text())['verdict'] == 'error'
    assert '| cluster-c | - | verify | Log in | HTTP 401 |' in (dest / 'fleet_report.md').read_text()


def test_the_same_input_twice_and_the_next_run_finding_the_same_change_nothing(tmp_path):
    dest = tmp_path / 'reports'
    for name in ALL:
        update(dest, name, {'verify': verify()})
    before = report_texts(dest)
    again = update(dest, 'cluster-b', {'verify': verify()}, time_stamp=T2)
    assert not again['changed'] and not again['record_written'] and report_texts(dest) == before
    # the next run: each cluster finds the same, at another time - the files stay, the old run's records go
    results = [update(dest, name, {'verify': verify()}, run_id='run-2', time_stamp=T2) for name in ALL]
    assert [result['changed'] for result in results] == [False, False, False]
    assert results[0]['removed_runs'] == ['run-1'] and report_texts(dest) == before
    assert tree(dest)[:4] == ['.fleet/lock', '.fleet/run-2/cluster-a.json', '.fleet/run-2/cluster-b.json', '.fleet/run-2/cluster-c.json']
    # one cluster finds something else: the report is rewritten, with a diff
    changed = update(dest, 'cluster-a', {'verify': verify(['egressip_blackhole'])}, run_id='run-3', time_stamp=T2)
    assert changed['changed'] and report_texts(dest) != before
    assert [os.path.basename(item['after_header']) for item in changed['diffs']] == ['fleet_report.json', 'fleet_report.md', 'fleet_report.html']
    assert json.loads((dest / 'fleet_report.json').read_text())['not_run'] == ['cluster-b', 'cluster-c']


def test_check_mode_writes_nothing_and_says_what_would_change(tmp_path):
    dest = tmp_path / 'reports'
    result = update(dest, 'cluster-a', {'verify': verify()}, check_mode=True)
    assert result['changed'] and not dest.exists() and result['report']['totals']['ran'] == 1
    assert [os.path.basename(item['after_header']) for item in result['diffs']] == ['fleet_report.json', 'fleet_report.md', 'fleet_report.html']
    update(dest, 'cluster-a', {'verify': verify()}, run_id='run-0')
    before = tree(dest), report_texts(dest)
    result = update(dest, 'cluster-b', {'verify': verify(['egressip_blackhole'])}, check_mode=True)
    assert result['changed'] and result['removed_runs'] == ['run-0'] and (tree(dest), report_texts(dest)) == before


def test_a_failed_move_leaves_the_previous_record_whole_and_no_temporary_file(tmp_path):
    dest = tmp_path / 'reports'
    update(dest, 'cluster-a', {'verify': verify()})
    record = dest / '.fleet' / 'run-1' / 'cluster-a.json'
    before = record.read_text()

    class Broken(FakeModule):
        @staticmethod
        def atomic_move(src, dest):
            raise OSError(28, 'No space left on device', dest)

    row = fleet.row('cluster-a', {'verify': verify(['egressip_blackhole'])}, T2)
    with pytest.raises(Failed, match='dest=.* cannot hold the fleet report: No space left on device'):
        fleet_files.update(Broken(), str(dest), 'run-1', 'cluster-a', row, ALL)
    assert record.read_text() == before and sorted(os.listdir(str(record.parent))) == ['cluster-a.json']


def test_writers_take_turns_under_the_lock(tmp_path):
    dest = tmp_path / 'reports'
    update(dest, 'cluster-a', {'verify': verify()})
    done = []
    with open(str(dest / '.fleet' / 'lock'), 'a') as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        writer = threading.Thread(target=lambda: done.append(update(dest, 'cluster-b', {'verify': verify()})))
        writer.start()
        time.sleep(0.5)
        assert not done and not (dest / '.fleet' / 'run-1' / 'cluster-b.json').exists()
        assert json.loads((dest / 'fleet_report.json').read_text())['totals']['ran'] == 1  # the report waits for the lock
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    writer.join(10)
    assert done and json.loads((dest / 'fleet_report.json').read_text())['totals']['ran'] == 2


def test_concurrent_writers_all_land_in_the_report(tmp_path):
    dest = tmp_path / 'reports'
    names = ['cluster-%02d' % index for index in range(12)]
    pids = []
    for name in names:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            status = 1
            try:
                update(dest, name, {'verify': verify()}, clusters=names)
                status = 0
            finally:
                os._exit(status)  # pylint: disable=protected-access
        pids.append(pid)
    assert [os.waitpid(pid, 0)[1] for pid in pids] == [0] * len(names)   # no writer failed (a directory made twice, ...)
    written = json.loads((dest / 'fleet_report.json').read_text())
    assert [row['inventory'] for row in written['clusters']] == names and written['not_run'] == []


def test_bad_input_is_refused_naming_the_option_and_the_fix(tmp_path):
    for bad in ('', '../x', '.hidden', 'a/b', 'x' * 200):
        assert 'run_id=%r is not a plain name. Fix:' % bad in fleet_files.run_id_problem(bad)
    assert fleet_files.run_id_problem('ansible-playbook-4242-8812345') is None and fleet_files.run_id_problem('1234') is None
    for bad in ('', 'a/b', '..', '.fleet'):
        assert 'cluster=%r cannot name a record file. Fix:' % bad in fleet_files.cluster_problem(bad)
    assert fleet_files.cluster_problem('cluster-a.example.com') is None
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(Failed, match='dest=%s cannot hold the fleet report: it exists and is not a directory. Fix:' % blocker):
        update(blocker, 'cluster-a', {})


def test_the_module_derives_no_run_id_outside_ansible_playbook_and_refuses_bad_options(run_module, tmp_path):
    dest = str(tmp_path / 'reports')
    result = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'cluster-a', 'record': {}}, env={})
    assert result.get('failed') and 'run_id is not set and no ansible-playbook process was found' in result['msg']
    result = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'a', 'run_id': 'r/1'}, env={})
    assert result.get('failed') and "run_id='r/1' is not a plain name" in result['msg']
    result = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'a', 'run_id': 'r1', 'record': {'time': 'yesterday'}}, env={})
    assert result.get('failed') and "record.time='yesterday' is not a time. Fix:" in result['msg']
    assert not os.path.exists(dest)
    record = {'playbook': 'verify', 'verify': verify(), 'time': T1}
    first = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'a', 'run_id': 'r1', 'record': record}, diff=True, env={})
    assert first['changed'] and first['verdict'] == 'ok' and first['run_id'] == 'r1' and first['diff'][0]['after_header'].endswith('.md')
    second = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'a', 'run_id': 'r1', 'record': record}, env={})
    assert not second['changed'] and second['report'] == first['report']
    template = tmp_path / 'page.j2'
    template.write_text('{{ rows | length }} {{ no_such_variable }}')
    bad = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'a', 'run_id': 'r1', 'record': record,
                                               'html_template': str(template)}, env={})
    assert bad.get('failed') and 'html_template=%s cannot be rendered' % template in bad['msg']


def test_the_records_of_a_run_that_still_runs_are_kept(tmp_path):
    """Two runs into one dest at once: the records of the one still running stay (its report would lose its clusters),
    those of a run that ended go."""
    dest = tmp_path / 'reports'
    asked = []

    def running(name):
        asked.append(name)
        return name == 'run-live'
    update(dest, 'cluster-a', {'verify': verify()}, run_id='run-live')
    update(dest, 'cluster-a', {'verify': verify()}, run_id='run-ended', running=running)
    del asked[:]
    result = update(dest, 'cluster-b', {'verify': verify()}, run_id='run-new', time_stamp=T2, running=running)
    assert sorted(asked) == ['run-ended', 'run-live'], 'only the other runs are asked about'
    assert result['kept_runs'] == ['run-live'] and result['removed_runs'] == ['run-ended']
    assert (dest / '.fleet' / 'run-live' / 'cluster-a.json').exists() and not (dest / '.fleet' / 'run-ended').exists()
    assert [item['inventory'] for item in result['report']['clusters']] == ['cluster-b'], 'the report is of this run only'


def test_a_derived_run_id_is_running_while_its_process_with_that_start_time_lives():
    from ansible_collections.ocp.egressip.plugins.module_utils.clients import lease
    from ansible_collections.ocp.egressip.plugins.modules import egressip_fleet_report as module
    me = lease._stat(os.getpid())  # pylint: disable=protected-access
    assert module.still_running('ansible-playbook-%d-%s' % (os.getpid(), me[3]))
    assert not module.still_running('ansible-playbook-%d-%d' % (os.getpid(), int(me[3]) + 1)), 'a reused pid is another process'
    assert not module.still_running('ansible-playbook-999999999-1'), 'a process that is gone'
    assert not module.still_running('4242'), 'a job ID (AAP) or a name given by hand tells nothing'


def test_the_module_keeps_a_live_runs_records_and_warns(run_module, tmp_path):
    from ansible_collections.ocp.egressip.plugins.module_utils.clients import lease
    dest = str(tmp_path / 'reports')
    live = 'ansible-playbook-%d-%s' % (os.getpid(), lease._stat(os.getpid())[3])  # pylint: disable=protected-access
    record = {'playbook': 'verify', 'verify': verify(), 'time': T1}
    for run in (live, 'ended'):
        run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'a', 'run_id': run, 'record': record}, env={})
    result = run_module('egressip_fleet_report', {'dest': dest, 'cluster': 'b', 'run_id': 'new', 'record': record}, env={})
    assert result['kept_runs'] == [live] and result['removed_runs'] == ['ended']
    texts = [item if isinstance(item, str) else (item.get('event') or {}).get('msg', '') for item in result.get('warnings') or []]
    assert [text.startswith('Another ansible-playbook run (%s) still records into dest=%s' % (live, dest)) for text in texts] == [True]
    assert sorted(os.listdir(os.path.join(dest, '.fleet'))) == [live, 'lock', 'new']
