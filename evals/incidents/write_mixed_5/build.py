"""Driver: builds every incident module (inc_*.py) beside this file into ROOT/<incident-id>/.
Run: /work/venv/bin/python build.py"""
import importlib, os, sys, traceback
ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)
MODULES = sorted(f[:-3] for f in os.listdir(ROOT) if f.startswith("inc_") and f.endswith(".py"))
ok = True
for m in MODULES:
    try:
        b = importlib.import_module(m).build(ROOT)
        b.check()
    except Exception:
        ok = False
        print(f"!! {m} failed")
        traceback.print_exc()
print("modules:", MODULES)
sys.exit(0 if ok else 1)
