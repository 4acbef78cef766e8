#!/bin/sh
# The same with a spawned worker (fork + exec, multiprocessing's "spawn"):
# the new image records its segments under its pid; the parent's
# descriptor, close-on-exec, does not reach it.
SHM_WORKER_MODE=spawn exec sh "$(dirname "$0")/t602-shm-worker-killed.sh"
