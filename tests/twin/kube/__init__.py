"""Kubernetes API emulator of the twin (see tests/twin/README.md, "Process 2")."""
