#!/usr/bin/env python3
"""Turns the CONFORMANCE_REPORT file of a tests/boringssl/ run into the
Markdown tables of docs/conformance.md.

    rm -f /tmp/conformance.tsv
    CONFORMANCE_REPORT=/tmp/conformance.tsv scripts/conformance.sh
    scripts/conformance-table.py /tmp/conformance.tsv
"""
import collections
import sys


def main(path):
    matrix, adversarial, backends = [], [], []
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            {"matrix": matrix, "adversarial": adversarial, "backends": backends}[cols[0]].append(cols[1:])

    for b in backends:
        print("Backends on this CPU: " + "; ".join(b))
    print()
    print("| suite | direction | backend | group | records c2s / s2c | BoringSSL KeyUpdates sent / received | explicit nonces | time |")
    print("|---|---|---|---|---|---|---|---|")
    for m in sorted(matrix):
        suite, direction, backend, group, _ok, _bytes, records, ku, nonces, _close, secs = m
        rec = records.replace("records ", "").replace("c2s=", "").replace(" s2c=", " / ")
        ku = ku.replace("keyupdates bssl sent=", "").replace(" received=", " / ")
        nonces = nonces.replace("nonces: ", "")
        print(f"| {suite} | {direction} | {backend} | {group} | {rec} | {ku} | {nonces} | {secs} |")
    print()

    rows = collections.OrderedDict()
    for a in sorted(adversarial, key=lambda a: (a[0], a[4], a[5])):
        suite, _topo, _dir, backend, fault, receiver, delivered, err, alert, sender = a
        key = (suite, fault, receiver.split("=")[1], delivered.split("=")[1], err.split("=", 1)[1], alert.split("=")[1], sender.split("=", 1)[1])
        runs = rows.setdefault(key, [set(), 0])
        runs[0].add(backend)
        runs[1] += 1
    print("| suite | fault | receiver | bytes delivered after A | receiver error | alert (as BoringSSL saw it) | sender then saw | runs (backends) |")
    print("|---|---|---|---|---|---|---|---|")
    for (suite, fault, receiver, delivered, err, alert, sender), (bk, n) in rows.items():
        print(f"| {suite} | {fault} | {receiver} | {delivered} | {err} | {alert} | {sender} | {n} ({', '.join(sorted(bk))}) |")


if __name__ == "__main__":
    main(sys.argv[1])
