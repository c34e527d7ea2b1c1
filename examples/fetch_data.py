"""Put the papers' data sets (datasets.txt) under a directory: link them from
$LINSVM_DATA when it holds them with the right checksum, else download them
from the URL in datasets.txt and keep them only if the sha256 matches.

    python examples/fetch_data.py [--datasets datasets.txt] [--dest examples/data]

Exit status 1 when some data set could be neither linked nor downloaded (each
is named on stderr); the others are still put in place.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import sys
import tempfile
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]


def entries(path):
    """(file, url, size, sha256) per data line of datasets.txt (comments and blanks skipped)."""
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 5 and parts[4]:
            yield parts[1], parts[2], int(parts[3]), parts[4]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(rel, url, digest, src_root, dest):
    """Link or download one file; returns an error string or None."""
    target = dest / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and sha256(target) == digest:
        return None
    src = src_root / rel
    if src.is_file() and sha256(src) == digest:
        if target.exists() or target.is_symlink():
            target.unlink()
        target.symlink_to(src.resolve())
        return None
    try:
        with urllib.request.urlopen(url, timeout=30) as resp, \
                tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
            for block in iter(lambda: resp.read(1 << 20), b""):
                tmp.write(block)
        if sha256(tmp.name) != digest:
            os.unlink(tmp.name)
            return f"{rel}: downloaded file has the wrong sha256"
        os.replace(tmp.name, target)
        return None
    except OSError as exc:
        return f"{rel}: not in $LINSVM_DATA and cannot download {url} ({exc})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=str(REPO / "datasets.txt"))
    ap.add_argument("--dest", default=str(REPO / "examples" / "data"))
    args = ap.parse_args(argv)
    src_root = pathlib.Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))
    dest = pathlib.Path(args.dest)
    errors = [e for e in (fetch(rel, url, digest, src_root, dest)
                          for rel, url, size, digest in entries(args.datasets)) if e]
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{dest}: data sets in place, {len(errors)} missing", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
