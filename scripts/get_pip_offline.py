"""Offline stand-in for pip's get-pip.py, used by ansible-test's virtualenv bootstrap.

ansible-test downloads get-pip.py from a host that is not reachable from our build machines;
it reads a cached copy first (~/.ansible/test/cache/get_pip_<version>.py). This script takes
its place: it installs pip from the interpreter's own ensurepip, then installs the packages
ansible-test asked for (pip==<version>) from the package index that is reachable.
"""
import subprocess
import sys

GET_PIP_ONLY_OPTIONS = ('--no-setuptools', '--no-wheel')


def main():
    args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]
    subprocess.check_call([sys.executable, '-m', 'ensurepip', '--upgrade', '--default-pip'])
    subprocess.check_call([sys.executable, '-m', 'pip', 'install', '--disable-pip-version-check'] + args)


if __name__ == '__main__':
    main()
