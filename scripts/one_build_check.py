#!/usr/bin/env python3
"""The README's two commands share one build: after `cargo build --locked` (what
`cargo run --locked` builds), `cargo test --locked --no-run` must not compile again any crate
the first build compiled. A crate compiled twice means the tests' dependencies turn on features
the binary's build lacks (Cargo.toml lists them under "One build").

Usage: scripts/one_build_check.py  (run from the repository; prints what it rebuilt)
"""
import json
import subprocess
import sys


def artifacts(args):
    out = subprocess.run(
        ["cargo", *args, "--locked", "--message-format=json"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact":
            yield msg


def main():
    built = {(a["package_id"], a["target"]["name"]) for a in artifacts(["build"])}
    rebuilt = sorted(
        a["package_id"].split("#")[-1] + " " + a["target"]["name"]
        for a in artifacts(["test", "--no-run"])
        if not a["fresh"]
        and not a["profile"]["test"]
        and (a["package_id"], a["target"]["name"]) in built
    )
    if rebuilt:
        print("the test build compiled again what `cargo build` had built:")
        print("\n".join("  " + r for r in rebuilt))
        print("turn the features the dev-dependencies enable on in [dependencies] too")
        return 1
    print(f"one build: {len(built)} artifacts of `cargo build` reused by the tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
