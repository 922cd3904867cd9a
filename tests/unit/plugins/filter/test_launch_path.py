import os

from ansible_collections.ocp.egressip.plugins.filter.launch_path import FilterModule, launch_path


def test_relative_path_is_taken_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert launch_path('reports') == os.path.join(str(tmp_path), 'reports')


def test_absolute_and_empty_paths_are_unchanged():
    assert launch_path('/var/tmp/reports') == '/var/tmp/reports'
    assert launch_path('') == ''


def test_filter_is_registered():
    assert FilterModule().filters()['launch_path'] is launch_path
