#!/usr/bin/env python3
"""Generate testdata/cel/golden.json from testdata/cel/corpus.yaml.

The oracle is Google's C++ CEL through the `cel-expr-python` wheel, set up the
way kcm sets up cel-go for StateManagementProvider readiness rules: standard
library only, one variable `self` of type map(string, dyn), no optional syntax,
compiled with the type checker on.

Usage:
    python3 scripts/cel_golden.py            # (re)write golden.json
    python3 scripts/cel_golden.py --check    # exit 1 if golden.json is stale

Outcomes per case ("expect"): "true", "false", "compile_error", "eval_error".
An empty rule is "true" without asking the oracle (kcm treats it as ready).
A result that is not a bool is "eval_error" (kcm: "did not return a boolean").

Objects are converted the way Kubernetes decodes JSON into unstructured
content: integers that fit int64 stay int (CEL int), every other number is a
float (CEL double). The corpus is read with YAML 1.2 core-schema scalars so
that `yes`, `on`, `017` or unquoted dates mean what a YAML 1.2 reader (and the
Rust side) takes them to mean.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import sys
from importlib import metadata
from pathlib import Path

import yaml
from cel_expr_python import cel

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO / "testdata" / "cel" / "corpus.yaml"
DEFAULT_GOLDEN = REPO / "testdata" / "cel" / "golden.json"

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
OUTCOMES = ("true", "false", "compile_error", "eval_error")


# --------------------------------------------------------------------------- YAML 1.2 core schema


class CoreLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema implicit scalars.

    PyYAML implements YAML 1.1: `yes`/`on` are booleans, `017` is octal,
    `1e3` is a string and unquoted ISO dates become datetimes. Kubernetes
    (sigs.k8s.io/yaml) and serde_yaml do not read them that way.
    """


CoreLoader.yaml_implicit_resolvers = {}
CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null",
    re.compile(r"^(?:~|null|Null|NULL|)$"),
    ["~", "n", "N", ""],
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # YAML 1.2: a leading zero is still decimal


def _construct_float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith("inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text == ".nan":
        return math.nan
    return float(text)


CoreLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
CoreLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def to_unstructured(value, path: str):
    """Convert parsed YAML to what kcm's unstructured content holds."""
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        # JSON integers that fit int64 decode as int64; the rest as float64.
        return value if INT64_MIN <= value <= INT64_MAX else float(value)
    if isinstance(value, list):
        return [to_unstructured(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise SystemExit(f"corpus: {path}: non-string key {k!r}")
            out[k] = to_unstructured(v, f"{path}.{k}")
        return out
    raise SystemExit(f"corpus: {path}: unsupported YAML value {value!r} ({type(value).__name__})")


# --------------------------------------------------------------------------- corpus


def load_corpus(path: Path):
    with path.open(encoding="utf-8") as f:
        doc = yaml.load(f, Loader=CoreLoader)  # noqa: S506 - CoreLoader is a SafeLoader
    objects = {oid: to_unstructured(obj, oid) for oid, obj in doc["objects"].items()}
    rules = doc["rules"]
    for rid, text in rules.items():
        if not isinstance(text, str):
            raise SystemExit(f"corpus: rule {rid}: not a string")
    cases = expand_cases(doc["cases"], rules, objects)
    unused_rules = sorted(set(rules) - {c["rule"] for c in cases})
    unused_objects = sorted(set(objects) - {c["object"] for c in cases})
    if unused_rules or unused_objects:
        raise SystemExit(f"corpus: unused rules {unused_rules} / objects {unused_objects}")
    return objects, rules, cases


def expand_cases(entries, rules, objects):
    """Pairs and matrices in file order; a repeated (rule, object) keeps its first place."""
    cases: list[dict] = []
    by_id: dict[str, dict] = {}

    def add(rule_id, object_id, expect=None, kcm=None, why=None, where=""):
        if rule_id not in rules:
            raise SystemExit(f"corpus: {where}: unknown rule {rule_id!r}")
        if object_id not in objects:
            raise SystemExit(f"corpus: {where}: unknown object {object_id!r}")
        for key, value in (("expect", expect), ("kcm", kcm)):
            if value is not None and value not in OUTCOMES:
                raise SystemExit(f"corpus: {where}: {key} must be one of {OUTCOMES}, got {value!r}")
        if kcm is not None and not why:
            raise SystemExit(f"corpus: {where}: a `kcm:` pin needs a `why:`")
        case_id = f"{rule_id}@{object_id}"
        if case_id in by_id:
            prev = by_id[case_id]
            for key, value in (("pinned", expect), ("kcm", kcm), ("why", why)):
                if value is not None:
                    if prev[key] is not None and prev[key] != value:
                        raise SystemExit(f"corpus: {case_id}: conflicting {key} verdicts")
                    prev[key] = value
            return
        case = {
            "id": case_id,
            "rule": rule_id,
            "object": object_id,
            "pinned": expect,
            "kcm": kcm,
            "why": why,
        }
        by_id[case_id] = case
        cases.append(case)

    for n, entry in enumerate(entries):
        where = f"cases[{n}]"
        if "matrix" in entry:
            m = entry["matrix"]
            for rule_id in m["rules"]:
                for object_id in m["objects"]:
                    add(rule_id, object_id, where=where)
        else:
            add(
                entry["rule"],
                entry["object"],
                entry.get("expect"),
                entry.get("kcm"),
                entry.get("why"),
                where,
            )
    return cases


# --------------------------------------------------------------------------- oracle


class Oracle:
    def __init__(self):
        self.version = metadata.version("cel-expr-python")
        # kcm: cel.NewEnv(cel.VariableDecls(decls.NewVariable("self",
        #        types.NewMapType(types.StringType, types.DynType))))
        self.env = cel.NewEnv(variables={"self": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)})
        self._compiled: dict[str, object] = {}

    def compile(self, rule: str):
        """Return (expression, None) or (None, error message)."""
        if rule not in self._compiled:
            try:
                self._compiled[rule] = (self.env.compile(rule), None)
            except Exception as e:  # the wheel raises RuntimeError with the checker's issues
                self._compiled[rule] = (None, str(e))
        return self._compiled[rule]

    def evaluate(self, rule: str, obj) -> tuple[str, str]:
        if rule == "":
            return "true", "empty rule: kcm treats it as ready without compiling"
        expr, err = self.compile(rule)
        if expr is None:
            return "compile_error", err
        try:
            value = expr.eval(data={"self": obj})
        except Exception as e:
            return "eval_error", str(e)
        vtype = value.type()
        if vtype == cel.Type.ERROR:
            return "eval_error", str(value.value())
        if vtype == cel.Type.BOOL:
            result = value.value()
            return ("true" if result else "false"), f"bool: {'true' if result else 'false'}"
        return "eval_error", f"result is {vtype.name()}, not bool"


# --------------------------------------------------------------------------- main


def build(corpus_path: Path) -> tuple[dict, list[str]]:
    objects, rules, cases = load_corpus(corpus_path)
    oracle = Oracle()
    out_cases = []
    mismatches = []
    for case in cases:
        rule = rules[case["rule"]]
        expect, message = oracle.evaluate(rule, objects[case["object"]])
        if case["pinned"] is not None and case["pinned"] != expect:
            mismatches.append(
                f"{case['id']}: corpus pins {case['pinned']}, oracle says {expect} ({message})"
            )
        entry = {
            "id": case["id"],
            "rule": rule,
            "object": case["object"],
            "expect": expect,
            "message": message,
        }
        if case["kcm"] is not None and case["kcm"] != expect:
            # kcm runs cel-go; where cel-go differs from the oracle, cel-go wins (see the top
            # of corpus.yaml). The difference is recorded, with its reason, for the test to
            # assert.
            entry["oracle"] = expect
            entry["expect"] = case["kcm"]
            entry["why"] = case["why"]
        out_cases.append(entry)
    return {"oracle": f"cel-expr-python {oracle.version}", "cases": out_cases}, mismatches


def render(golden: dict) -> str:
    return json.dumps(golden, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def summarize(golden: dict) -> str:
    counts = {k: 0 for k in OUTCOMES}
    for c in golden["cases"]:
        counts[c["expect"]] += 1
    parts = ", ".join(f"{k} {v}" for k, v in counts.items())
    return f"{len(golden['cases'])} cases ({parts}); oracle {golden['oracle']}"


def diff_summary(old_text: str, new: dict) -> str:
    lines = []
    try:
        old = json.loads(old_text)
    except ValueError:
        return "golden.json is not valid JSON"
    if old.get("oracle") != new["oracle"]:
        lines.append(f"oracle: {old.get('oracle')!r} -> {new['oracle']!r}")
    old_cases = {c["id"]: c for c in old.get("cases", [])}
    new_cases = {c["id"]: c for c in new["cases"]}
    for cid in new_cases.keys() - old_cases.keys():
        lines.append(f"added   {cid}: {new_cases[cid]['expect']}")
    for cid in old_cases.keys() - new_cases.keys():
        lines.append(f"removed {cid}")
    for cid in new_cases.keys() & old_cases.keys():
        o, n = old_cases[cid], new_cases[cid]
        for key in ("expect", "rule", "object", "message"):
            if o.get(key) != n.get(key):
                lines.append(f"changed {cid}: {key} {o.get(key)!r} -> {n.get(key)!r}")
    if [c["id"] for c in old.get("cases", [])] != [c["id"] for c in new["cases"]] and not lines:
        lines.append("case order changed")
    if not lines:
        lines.append("formatting differs")
    lines.sort()
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if golden.json is stale")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--golden", type=Path, default=DEFAULT_GOLDEN)
    args = ap.parse_args(argv)

    golden, mismatches = build(args.corpus)
    if mismatches:
        print("oracle disagrees with expectations pinned in the corpus:", file=sys.stderr)
        for m in mismatches:
            print(f"  {m}", file=sys.stderr)
        return 2
    text = render(golden)

    if args.check:
        current = args.golden.read_text(encoding="utf-8") if args.golden.exists() else ""
        if current == text:
            print(f"golden up to date: {summarize(golden)}")
            return 0
        if not current:
            print(f"{args.golden} is missing; run scripts/cel_golden.py", file=sys.stderr)
            return 1
        summary = diff_summary(current, golden).splitlines()
        print(f"{args.golden} is stale ({len(summary)} differences); run scripts/cel_golden.py", file=sys.stderr)
        for line in summary[:50]:
            print(f"  {line}", file=sys.stderr)
        if len(summary) > 50:
            print(f"  ... and {len(summary) - 50} more", file=sys.stderr)
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), "golden.json", "regenerated", n=1, lineterm=""))
        print(f"  ({len(diff)} lines of unified diff)", file=sys.stderr)
        return 1

    args.golden.parent.mkdir(parents=True, exist_ok=True)
    args.golden.write_text(text, encoding="utf-8")
    print(f"wrote {args.golden}: {summarize(golden)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
