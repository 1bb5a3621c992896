#!/usr/bin/env python3
"""Driver: builds every IK incident bundle beside this file. Run with /work/venv/bin/python build.py [name ...]."""
import importlib, os, random, sys

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)

MODULES = ["inc_mdsoom", "inc_hfloss", "inc_composer", "inc_titan", "inc_hvdspark", "inc_mpijob", "inc_kuberay",
           "inc_nemoxid"]


def main(argv):
    want = set(argv) or None
    done = 0
    for name in MODULES:
        if want and name not in want:
            continue
        if not os.path.exists(os.path.join(ROOT, name + ".py")):
            print(f"-- {name}: not written yet")
            continue
        random.seed(name)
        importlib.import_module(name).build()
        done += 1
    print(f"built {done} bundle(s)")


if __name__ == "__main__":
    main(sys.argv[1:])
