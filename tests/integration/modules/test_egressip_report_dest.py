"""egressip_report with a dest that cannot hold the reports (issue 13): a message naming dest and the fix, never a bare
errno, and in check mode too where that can be known without writing."""

import pytest

from test_egressip_report import NO_TWIN, VERIFY  # pylint: disable=import-error


def _report(run_module, dest, check=False):
    return run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': dest}, check=check, env=NO_TWIN)


def test_dest_under_proc_names_dest_and_the_fix(run_module):
    result = _report(run_module, '/proc/egress')
    assert result['_rc'] != 0 and result['failed'], result
    assert result['msg'].startswith('dest=/proc/egress cannot hold the reports: '), result['msg']
    assert 'Fix: give a writable directory (egressip_report_dir' in result['msg']
    assert 'Traceback' not in result['_stderr'] and not result['msg'].startswith('[Errno')


@pytest.mark.parametrize('check', [False, True])
def test_dest_that_is_a_file_is_refused_in_check_mode_too(run_module, tmp_path, check):
    target = tmp_path / 'reports'
    target.write_text('not a directory')
    result = _report(run_module, str(target), check=check)
    assert result['failed'] and 'it exists and is not a directory' in result['msg'], result
    assert target.read_text() == 'not a directory'
