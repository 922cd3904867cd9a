"""core/progress.py: what a module notes for its action plugin's progress lines (the file it writes, and nothing
without one)."""

import os

from ansible_collections.ocp.egressip.plugins.module_utils.core import progress


def test_names_beyond_six_are_counted():
    assert progress.shown(['a', 'b']) == 'a, b'
    assert progress.shown('n%d' % i for i in range(8)) == 'n0, n1, n2, n3, n4, n5 and 2 more'
    assert progress.shown([]) == ''


def test_a_note_replaces_the_last_one_in_one_line(tmp_path):
    path = str(tmp_path / 'notes')
    notes = progress.Notes()
    notes.configure(path)
    notes.note('Node w0 to be Ready\n (wait_timeout 120 s)')
    assert open(path).read() == 'Node w0 to be Ready (wait_timeout 120 s)'
    notes.note('the vCenter tasks of VM w0')
    assert open(path).read() == 'the vCenter tasks of VM w0'
    assert os.listdir(str(tmp_path)) == ['notes']   # the partial file is renamed, never left behind


def test_the_same_note_again_writes_nothing(tmp_path):
    path = str(tmp_path / 'notes')
    notes = progress.Notes()
    notes.configure(path)
    notes.note('a')
    os.remove(path)
    notes.note('a')
    assert not os.path.exists(path)
    notes.note('b')
    assert open(path).read() == 'b'


def test_without_a_file_or_with_one_that_cannot_be_written_a_note_does_nothing(tmp_path):
    notes = progress.Notes()
    notes.note('nobody reads this')           # a module run by hand: no progress_file
    assert notes.last is None
    notes.configure(str(tmp_path / 'missing-directory' / 'notes'))
    notes.note('cannot be written')           # never fails the module's run
    assert notes.last is None and not os.path.exists(str(tmp_path / 'missing-directory'))


def test_the_options_are_those_of_the_doc_fragment():
    import yaml
    from ansible_collections.ocp.egressip.plugins.doc_fragments import progress as fragment
    documented = yaml.safe_load(fragment.ModuleDocFragment.NOTES)['options']
    spec = progress.argument_spec()
    assert set(spec) == set(documented)
    for name, option in spec.items():
        assert option['type'] == documented[name]['type'] and option.get('default') == documented[name].get('default')
