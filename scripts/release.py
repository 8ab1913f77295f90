#!/usr/bin/env python3
"""Release archives and the krew manifest of kubectl-ksm.

  scripts/release.py build --base-url URL [--homepage URL] [--binary PATH] [--out dist]
      Builds the archive of this host (kubectl-ksm, LICENSE, kubectl_complete-ksm) as
      kubectl-ksm_vVERSION_OS_ARCH.tar.gz with its .sha256, then fills plugins/ksm.yaml into
      OUT/ksm.yaml: the version, each platform's URL (BASE-URL/ARCHIVE) and the sha256 of each
      archive found in OUT (archives of other platforms, built on their hosts, may be copied
      there first). Platforms without an archive are left out, with a warning; --all requires
      all four. Without --binary it runs `cargo build --release --locked`.

  scripts/release.py verify MANIFEST ARCHIVE
      Checks the manifest's required fields and that the archive installs as krew installs it:
      its sha256 is the manifest's, the files named in `files` are there and `bin` runs
      `version`.

The manifest is read with PyYAML for `verify` (scripts/requirements.txt).
"""
import argparse
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "plugins", "ksm.yaml")
PLATFORMS = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")]
# What the archive holds: (name in the archive, path in the repository, mode).
CONTENTS = [
    ("kubectl-ksm", None, 0o755),
    ("kubectl_complete-ksm", "completions/kubectl_complete-ksm", 0o755),
    ("LICENSE", "LICENSE", 0o644),
]


def fail(msg):
    print(f"release: {msg}", file=sys.stderr)
    sys.exit(2)


def cargo_field(field):
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    package = text.split("\n[", 1)[0]
    m = re.search(rf'^{field}\s*=\s*"([^"]*)"', package, re.M)
    return m.group(1) if m else None


def host_platform():
    os_name = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if not os_name or not arch:
        fail(f"no krew platform for {platform.system()}/{platform.machine()}")
    return os_name, arch


def archive_name(version, os_name, arch):
    return f"kubectl-ksm_v{version}_{os_name}_{arch}.tar.gz"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_archive(path, binary):
    """A reproducible tar.gz: fixed owner, mode and mtime, files in a fixed order."""
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, rel, mode in CONTENTS:
            src = binary if rel is None else os.path.join(ROOT, rel)
            data = open(src, "rb").read()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    import gzip

    with open(path, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=mtime) as gz:
        gz.write(raw.getvalue())


def platform_blocks(text):
    """The template split into (head, [platform block text], tail)."""
    head, sep, rest = text.partition("  platforms:\n")
    if not sep:
        fail(f"{TEMPLATE}: no spec.platforms")
    blocks = re.split(r"(?m)^(?=  - selector:)", rest)
    return head + sep, [b for b in blocks if b.strip()]


def fill(version, homepage, base_url, out, require_all):
    text = open(TEMPLATE, encoding="utf-8").read()
    head, blocks = platform_blocks(text)
    kept, missing = [], []
    for block in blocks:
        m = re.search(r"\{\{URI (\w+) (\w+)\}\}", block)
        if not m:
            fail(f"{TEMPLATE}: a platform without a {{{{URI os arch}}}} field")
        os_name, arch = m.groups()
        name = archive_name(version, os_name, arch)
        path = os.path.join(out, name)
        if not os.path.exists(path):
            missing.append(f"{os_name}/{arch}")
            continue
        block = block.replace(f"{{{{URI {os_name} {arch}}}}}", f"{base_url.rstrip('/')}/{name}")
        block = block.replace(f"{{{{SHA256 {os_name} {arch}}}}}", sha256(path))
        kept.append(block)
    if missing and require_all:
        fail(f"no archive in {out} for {', '.join(missing)}")
    if missing:
        print(f"release: warning: left out of the manifest (no archive): {', '.join(missing)}")
    filled = head + "".join(kept)
    filled = filled.replace("{{VERSION}}", f"v{version}").replace("{{HOMEPAGE}}", homepage)
    # The template's own comment is not the published manifest's.
    filled = re.sub(r"\A(#[^\n]*\n)+", "", filled)
    left = re.findall(r"\{\{[^}]*\}\}", filled)
    if left:
        fail(f"unfilled fields: {left}")
    path = os.path.join(out, "ksm.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(filled)
    return path


def build(args):
    version = cargo_field("version")
    homepage = args.homepage or cargo_field("homepage") or cargo_field("repository")
    if not homepage:
        fail("give --homepage (Cargo.toml has no homepage or repository)")
    binary = args.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)
        binary = os.path.join(ROOT, "target", "release", "kubectl-ksm")
    if not os.access(binary, os.X_OK):
        fail(f"{binary}: not an executable")
    os.makedirs(args.out, exist_ok=True)
    os_name, arch = host_platform()
    archive = os.path.join(args.out, archive_name(version, os_name, arch))
    write_archive(archive, binary)
    digest = sha256(archive)
    with open(archive + ".sha256", "w", encoding="utf-8") as f:
        f.write(f"{digest}  {os.path.basename(archive)}\n")
    manifest = fill(version, homepage, args.base_url, args.out, args.all)
    print(f"{archive}\n{archive}.sha256 ({digest})\n{manifest}")


REQUIRED = ["apiVersion", "kind", "metadata.name", "spec.version", "spec.homepage",
            "spec.shortDescription", "spec.description", "spec.platforms"]


def get(doc, dotted):
    for key in dotted.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def check_manifest(doc, where, template=False):
    """Problems of a krew manifest (empty when it is complete)."""
    problems = [f"{where}: no {f}" for f in REQUIRED if get(doc, f) in (None, "", [])]
    if doc.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2":
        problems.append(f"{where}: apiVersion is not krew.googlecontainertools.github.com/v1alpha2")
    if doc.get("kind") != "Plugin":
        problems.append(f"{where}: kind is not Plugin")
    if not template and not re.fullmatch(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", str(get(doc, "spec.version"))):
        problems.append(f"{where}: spec.version is not v-prefixed semver")
    seen = set()
    for i, p in enumerate(get(doc, "spec.platforms") or []):
        at = f"{where}: spec.platforms[{i}]"
        labels = get(p, "selector.matchLabels") or {}
        seen.add((labels.get("os"), labels.get("arch")))
        for f in ["uri", "sha256", "bin"]:
            if not p.get(f):
                problems.append(f"{at}: no {f}")
        if not template:
            if not str(p.get("uri", "")).startswith("https://"):
                problems.append(f"{at}: uri is not https")
            if not re.fullmatch(r"[0-9a-f]{64}", str(p.get("sha256", ""))):
                problems.append(f"{at}: sha256 is not 64 hex digits")
        files = {(f.get("from"), f.get("to")) for f in p.get("files") or []}
        for name, _, _ in CONTENTS:
            if (name, ".") not in files:
                problems.append(f"{at}: files does not extract {name}")
    if template:
        for os_name, arch in PLATFORMS:
            if (os_name, arch) not in seen:
                problems.append(f"{where}: no platform {os_name}/{arch}")
    return problems


def verify(args):
    import yaml

    problems = check_manifest(yaml.safe_load(open(TEMPLATE, encoding="utf-8")), TEMPLATE, True)
    doc = yaml.safe_load(open(args.manifest, encoding="utf-8"))
    problems += check_manifest(doc, args.manifest)
    os_name, arch = host_platform()
    mine = [p for p in get(doc, "spec.platforms") or []
            if get(p, "selector.matchLabels") == {"os": os_name, "arch": arch}]
    if not mine:
        problems.append(f"{args.manifest}: no platform {os_name}/{arch}")
    if problems:
        fail("\n  ".join(["the manifest is incomplete:"] + problems))
    p = mine[0]
    if os.path.basename(p["uri"]) != os.path.basename(args.archive):
        fail(f"the manifest's uri names {os.path.basename(p['uri'])}, not {args.archive}")
    digest = sha256(args.archive)
    if digest != p["sha256"]:
        fail(f"sha256 of {args.archive} is {digest}, the manifest says {p['sha256']}")
    with tempfile.TemporaryDirectory() as tmp:
        unpacked, installed = os.path.join(tmp, "unpacked"), os.path.join(tmp, "installed")
        with tarfile.open(args.archive) as tar:
            tar.extractall(unpacked, filter="data")
        os.makedirs(installed)
        for f in p["files"]:
            src = os.path.join(unpacked, f["from"])
            if not os.path.exists(src):
                fail(f"the archive has no {f['from']}")
            shutil.copy2(src, os.path.join(installed, f["to"], os.path.basename(f["from"])))
        out = subprocess.run([os.path.join(installed, p["bin"]), "version", "-o", "json"],
                             capture_output=True, text=True)
        if out.returncode != 0 or f'"gitVersion": "{doc["spec"]["version"]}"' not in out.stdout:
            fail(f"{p['bin']} version: exit {out.returncode}\n{out.stdout}{out.stderr}")
    print(f"{args.manifest}: complete; {os.path.basename(args.archive)} installs "
          f"({os_name}/{arch}, sha256 {digest[:12]}…, version {doc['spec']['version']})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the host's archive and fill the manifest")
    b.add_argument("--base-url", required=True, help="where the archives are downloaded from")
    b.add_argument("--homepage", help="the plugin's homepage (default: Cargo.toml's)")
    b.add_argument("--binary", help="a kubectl-ksm already built (default: a release build)")
    b.add_argument("--out", default=os.path.join(ROOT, "dist"))
    b.add_argument("--all", action="store_true", help="require the archives of all four platforms")
    v = sub.add_parser("verify", help="check a manifest and install an archive by it")
    v.add_argument("manifest")
    v.add_argument("archive")
    args = ap.parse_args()
    build(args) if args.cmd == "build" else verify(args)


if __name__ == "__main__":
    main()
