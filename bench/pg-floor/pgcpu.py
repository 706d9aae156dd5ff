#!/usr/bin/env python3
"""CPU ticks of a PostgreSQL server, as herald-bench's CPUMeter counts them (Sources/HeraldStubs/CPUMeter.swift):
the postmaster and every live descendant, utime + stime + cutime + cstime (/proc/PID/stat fields 14-17,
clock ticks). A backend that exits between two readings leaves its ticks in the postmaster's cutime/cstime,
so a difference of two readings counts every process that ran in between, born or exited.

Usage: pgcpu.py POSTMASTER_PID DBNAME
Prints: total own_db other_db aux reaped machine_busy (clock ticks). own_db: live backends (and
autovacuum workers) of DBNAME; other_db: live backends of other databases (noise from other users of
the server); aux: checkpointer, walwriter, background writer, launchers; reaped: the postmaster's own
time plus its exited children's; machine_busy: /proc/stat busy ticks of all CPUs."""
import os
import sys


def stat(pid):
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state): field n is fields[n - 3]
    return int(fields[1]), int(fields[11]), int(fields[12]), max(int(fields[13]), 0), max(int(fields[14]), 0)


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def main():
    root, db = int(sys.argv[1]), sys.argv[2]
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            s = stat(int(entry))
            if s:
                table[int(entry)] = s
    children = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    if root not in table:
        sys.exit(f"postmaster {root} not found")
    total = own = other = aux = 0
    stack, seen = [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen or pid not in table:
            continue
        seen.add(pid)
        _, ut, st, cut, cst = table[pid]
        total += ut + st + cut + cst
        if pid == root:
            reaped = ut + st + cut + cst
        else:
            line = cmdline(pid)
            words = line.split()
            # "postgres: USER DB HOST(PORT) STATE" or "postgres: autovacuum worker DB" (PG 15)
            if line.startswith("postgres: autovacuum worker"):
                if words[-1] == db:
                    own += ut + st + cut + cst
                else:
                    other += ut + st + cut + cst
            elif len(words) >= 4 and ("(" in words[3] or words[3] == "[local]"):
                if words[2] == db:
                    own += ut + st + cut + cst
                else:
                    other += ut + st + cut + cst
            else:
                aux += ut + st + cut + cst
        stack.extend(children.get(pid, []))
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + cpu[7]
    print(total, own, other, aux, reaped, busy)


main()
