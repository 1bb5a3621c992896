#!/usr/bin/env python3
"""Write every incident bundle of this batch into ROOT/<incident-id>/ and print each indicating line."""
import importlib
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)

MODULES = ["inc_lightning", "inc_titan", "inc_nemo", "inc_deepspeed", "inc_hydra", "inc_megatron", "inc_jax", "inc_ray"]


def main(only=None):
    for name in MODULES:
        if only and name not in only:
            continue
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                print("-- %s: not written yet" % name)
                continue
            raise
        out = os.path.join(ROOT, mod.ID)
        shown, size = mod.build(out)
        print("== %s  (%s, %.1f KB)" % (mod.ID, name, size / 1024))
        for rel, n, text in shown:
            print("   %s:%d: %s" % (rel, n, text[:220]))


if __name__ == "__main__":
    main(sys.argv[1:] or None)
