"""The AnsibleModule methods the report file writers call (reports/files.py, reports/fleet_files.py), as the real
ones behave: ``atomic_move`` renames, ``set_mode_if_different`` reports a changed mode, ``fail_json`` raises."""

import os


class Failed(Exception):
    pass


class FileModule:
    def __init__(self, check_mode=False):
        self.check_mode = check_mode

    @staticmethod
    def atomic_move(src, dest):
        os.rename(src, dest)

    @staticmethod
    def set_mode_if_different(path, mode, changed):
        if (os.stat(path).st_mode & 0o777) != int(mode, 8):
            os.chmod(path, int(mode, 8))
            return True
        return changed

    @staticmethod
    def fail_json(msg, **_kwargs):
        raise Failed(msg)
