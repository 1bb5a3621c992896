"""Write every incident of this set into ROOT/<incident-id>/ and print each indicating line."""
import importlib
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)
MODULES = ["inc_hvd", "inc_dns", "inc_rdzv", "inc_c10d", "inc_ibretry", "inc_xid74", "inc_xid79", "inc_nfs"]

if __name__ == "__main__":
    only = sys.argv[1:]
    for name in MODULES:
        if only and name not in only:
            continue
        if not os.path.exists(os.path.join(ROOT, name + ".py")):
            print(f"(skip {name}: not written)")
            continue
        mod = importlib.import_module(name)
        lines, size = mod.build(ROOT)
        print(f"== {mod.ID}  ({size // 1024} KB)")
        for f, n, text in lines:
            print(f"   {f}:{n}: {text[:200]}")
