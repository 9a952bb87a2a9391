"""Team memory: the shared part of a memory directory and what guards it.

``secrets`` (credential scanner), ``keys`` (hardened team path validation) and ``guard`` (the
write guard that keeps credentials out of shared memory) need nothing beyond the core; the sync
client, server and watcher live beside them and need the ``team`` extra.
"""
