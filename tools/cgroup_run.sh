#!/bin/sh
# Run a command in a memory cgroup of its own, limited to BYTES, and print its peak.
#
#   tools/cgroup_run.sh BYTES COMMAND [ARG...]
#
# cgroup v2 (the unified hierarchy at /sys/fs/cgroup with the memory controller: the
# cgroup is a child of its root, where the controller is enabled for children if it is
# not) or, where the memory controller is v1's (/sys/fs/cgroup/memory), a child of this
# script's own memory cgroup, so that whatever limits that one has still hold.  Swap is
# limited too where the kernel counts it (v2 memory.swap.max = 0, v1 memsw = BYTES), so
# the limit binds.  Needs root (tests/test_streaming.py skips without it).
#
# The page cache of a file the command reads counts against the limit as the kernel
# charges it: pages already cached by another cgroup stay charged there, so drop a
# data file's pages (posix_fadvise DONTNEED, `dd of=FILE oflag=nocache conv=notrunc
# count=0`) before the run when the limit is to bind on them.
#
# The command's exit status is the script's.  One line goes to stderr at the end:
#   cgroup_run: v1 limit 94371840 peak 93437952 oom_kills 0
# peak being the cgroup's maximal usage (page cache included: memory.peak in v2,
# memory.max_usage_in_bytes in v1; "n/a" where the kernel has none) and oom_kills the
# times the kernel killed a process of the cgroup for memory.  The cgroup is removed
# afterwards.
set -u

usage() { echo "usage: $0 BYTES COMMAND [ARG...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
limit=$1
shift
case $limit in ''|*[!0-9]*) echo "cgroup_run: BYTES must be a whole number, not '$limit'" >&2; exit 2;; esac

name="linsvm-run-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
    version=v2
    dir=/sys/fs/cgroup/$name
    grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
        echo +memory > /sys/fs/cgroup/cgroup.subtree_control || exit 1
    mkdir "$dir" || exit 1
    echo "$limit" > "$dir/memory.max" || { rmdir "$dir"; exit 1; }
    [ -f "$dir/memory.swap.max" ] && echo 0 > "$dir/memory.swap.max"
elif [ -d /sys/fs/cgroup/memory ]; then
    version=v1
    rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
    dir=/sys/fs/cgroup/memory${rel%/}/$name
    mkdir "$dir" || exit 1
    echo "$limit" > "$dir/memory.limit_in_bytes" || { rmdir "$dir"; exit 1; }
    [ -f "$dir/memory.memsw.limit_in_bytes" ] && echo "$limit" > "$dir/memory.memsw.limit_in_bytes" 2>/dev/null
else
    echo "cgroup_run: no memory cgroup controller (v1 or v2) under /sys/fs/cgroup" >&2
    exit 1
fi

cleanup() {
    # the cgroup empties once its last process has gone; wait a little for that
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        rmdir "$dir" 2>/dev/null && return
        sleep 0.2
    done
    echo "cgroup_run: could not remove $dir" >&2
}
trap 'cleanup; exit 130' INT TERM

# the child joins the cgroup, then becomes the command
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' cgroup_run "$dir" "$@"
status=$?

if [ "$version" = v2 ]; then
    peak=$(cat "$dir/memory.peak" 2>/dev/null || echo n/a)
    kills=$(awk '$1 == "oom_kill" { print $2 }' "$dir/memory.events" 2>/dev/null)
else
    peak=$(cat "$dir/memory.max_usage_in_bytes" 2>/dev/null || echo n/a)
    kills=$(awk '$1 == "oom_kill" { print $2 }' "$dir/memory.oom_control" 2>/dev/null)
fi
echo "cgroup_run: $version limit $limit peak $peak oom_kills ${kills:-n/a}" >&2
cleanup
exit $status
