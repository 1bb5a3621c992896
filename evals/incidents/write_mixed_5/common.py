"""Shared helpers for the hand-made incident bundles (stdlib only)."""
import json, os, shutil


class Ind(str):
    """Marks a line as an indicating line of the truth."""


class Bundle:
    def __init__(self, root, iid):
        self.root, self.iid = root, iid
        self.dir = os.path.join(root, iid)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.ind = []  # (relpath, 1-based line)

    def write(self, rel, lines, trailing_newline=True):
        """Write lines joined by \\n; record the line number of every Ind line from the text itself."""
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = "\n".join(lines) + ("\n" if trailing_newline else "")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        for i, l in enumerate(lines):
            assert "\n" not in l, (rel, l)
            if isinstance(l, Ind):
                self.ind.append((rel, i + 1))

    def job(self, text):
        with open(os.path.join(self.dir, "job.yaml"), "w") as f:
            f.write(text.lstrip("\n"))

    def truth(self, **kw):
        t = dict(kw)
        t["indicating_lines"] = [{"file": f, "line": n} for f, n in self.ind]
        assert 1 <= len(self.ind) <= 6, (self.iid, len(self.ind))
        with open(os.path.join(self.dir, "truth.json"), "w") as f:
            json.dump(t, f, indent=2)
            f.write("\n")

    def check(self):
        size = 0
        for dp, _, fs in os.walk(self.dir):
            for fn in fs:
                size += os.path.getsize(os.path.join(dp, fn))
        t = json.load(open(os.path.join(self.dir, "truth.json")))
        print(f"== {self.iid}  ({size/1024:.1f} KB)  fault={t['fault']} nodes={t['faulty_nodes']} "
              f"stage={t['stage']} iter={t['iteration']}")
        assert size < 150 * 1024, "bundle too large"
        for il in t["indicating_lines"]:
            with open(os.path.join(self.dir, il["file"]), encoding="utf-8", newline="") as f:
                lines = f.read().split("\n")
            txt = lines[il["line"] - 1]
            assert txt.strip(), il
            assert "\r" not in "\n".join(lines[:il["line"]]), ("\\r before indicating line", il)
            print(f"   {il['file']}:{il['line']}: {txt[:220]}")
        return size


def hms(sec):
    sec = int(sec) % 86400
    return f"{sec//3600:02d}:{sec%3600//60:02d}:{sec%60:02d}"


def frac(sec, digits=6):
    return f"{int((sec % 1) * 10**digits):0{digits}d}"
