//! KSM001 and KSM002: problems found while reading a source (the checks live in
//! `core::objects::load`, shared by every subcommand).

use crate::core::lint::RuleInfo;
use crate::core::objects::{CODE_NOT_OBJECT, CODE_SYNTAX};
use crate::diag::Severity;

pub static UNREADABLE: RuleInfo = RuleInfo {
    code: "KSM000",
    name: "unreadable-input",
    severity: Severity::Error,
    title: "An input cannot be read as text",
    docs: "\
## What it finds
A path that does not exist or cannot be read, a directory without manifests, a binary file,
a file that is not UTF-8, or a file over the size limit (32 MiB).

## Why it matters
Nothing in it can be checked; `lint` exits with code 2 so that CI does not pass silently.

## Example
```text
kubectl ksm lint smp.yml.gz
```

## Fix
Point `lint` at YAML or JSON text files (decompress archives first, save files as UTF-8, split
very large manifests).
",
};

pub static SYNTAX: RuleInfo = RuleInfo {
    code: CODE_SYNTAX,
    name: "yaml-syntax",
    severity: Severity::Error,
    title: "The file is not valid YAML or JSON",
    docs: "\
## What it finds
A YAML or JSON syntax error, or a document that expands to an unreasonable size through
anchors and aliases (a \"billion laughs\" document).

## Why it matters
kubectl refuses the whole file, and nothing after the error can be checked. `lint` exits with
code 2 for such a file.

## Example
```yaml
metadata:
  labels: {app: [}
```

## Fix
Correct the syntax at the position shown. Expand aliases by hand if a document relies on
deeply nested anchors.
",
};

pub static NOT_OBJECT: RuleInfo = RuleInfo {
    code: CODE_NOT_OBJECT,
    name: "not-an-object",
    severity: Severity::Error,
    title: "A document is not a Kubernetes object",
    docs: "\
## What it finds
A document that is not a mapping (a list, a string), or a mapping without `apiVersion` or
`kind`, and List items that are not objects.

## Why it matters
`kubectl apply` rejects it (`Object 'Kind' is missing`), and no check can run on it.

## Example
```yaml
- apiVersion: k0rdent.mirantis.com/v1beta1
  kind: StateManagementProvider
```

## Fix
Make each document a mapping with `apiVersion`, `kind` and `metadata`; wrap several objects
in separate documents (`---`) or in a `kind: List` with `items`.
",
};
