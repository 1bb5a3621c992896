"""Builds every incident of this set into ROOT/<incident-id>/ and prints each indicating line."""
import importlib
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)
MODULES = ["inc_k8s_hostoom", "inc_torchx_cudaoom", "inc_det_nan", "inc_sky_keyerror",
           "inc_accel_ckptkeys", "inc_fairseq_enospc", "inc_fabric_preempt", "inc_ray_mismatch"]


def main(only=None):
    for name in MODULES:
        if only and name not in only:
            continue
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                print(f"-- {name}: not written yet")
                continue
            raise
        out = os.path.join(ROOT, mod.ID)
        if os.path.isdir(out):
            shutil.rmtree(out)
        truth = mod.build(out)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
        print(f"== {mod.ID}  fault={truth['fault']}  nodes={truth['faulty_nodes']}  it={truth['iteration']}  {size // 1024} KB")
        assert size < 150 * 1024, size
        for il in truth["indicating_lines"]:
            with open(os.path.join(out, il["file"]), encoding="utf-8") as f:
                text = f.read().split("\n")[il["line"] - 1]
            print(f"   {il['file']}:{il['line']}: {text[:220]}")


if __name__ == "__main__":
    main(sys.argv[1:])
