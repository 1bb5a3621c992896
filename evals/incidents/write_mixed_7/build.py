#!/usr/bin/env python3
"""Builds every IL incident bundle beside this file: /work/venv/bin/python build.py [module ...]"""
import importlib
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)

MODULES = ["inc_xid79", "inc_xid74", "inc_ibflap", "inc_straggler", "inc_nodecrash", "inc_xid94", "inc_slowlink",
           "inc_cpuload"]


def main(argv):
    want = set(argv) or None
    done = 0
    for name in MODULES:
        if want and name not in want:
            continue
        if not os.path.exists(os.path.join(ROOT, name + ".py")):
            print(f"-- {name}: not written yet")
            continue
        mod = importlib.import_module(name)
        print(mod.build(os.path.join(ROOT, mod.ID)))
        done += 1
    print(f"built {done} bundle(s)")


if __name__ == "__main__":
    main(sys.argv[1:])
