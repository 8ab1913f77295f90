//! Kubernetes names and label syntax (apimachinery `pkg/util/validation`): DNS-1123 labels and
//! subdomains, DNS-1035 labels, qualified names (label and annotation keys) and label values,
//! with apimachinery's own error messages.

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

/// RFC 1123 label, lower case: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 (namespace names).
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// RFC 1123 subdomain: labels joined by `.`, at most 253 (most object names).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label_part)
}

fn is_dns1123_label_part(l: &str) -> bool {
    let b = l.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// RFC 1035 label: `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 (resource names).
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// The name part of a qualified name, and a non-empty label value:
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63.
pub fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// A valid label value: empty, or a qualified name part.
pub fn is_label_value(s: &str) -> bool {
    s.is_empty() || is_qualified_name_part(s)
}

/// `validation.IsQualifiedName` (label and annotation keys): its errors, empty if valid.
pub fn qualified_name_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let name = match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else if !is_dns1123_subdomain(prefix) {
                errs.push(
                    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
                );
            }
            name
        }
        _ => {
            errs.push(format!(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    } else if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{QUALIFIED_NAME_FMT}')"
        ));
    }
    errs
}

/// `validation.IsDNS1123Label` (namespace names, `ValidateNamespaceName`): its errors, empty
/// if valid.
pub fn dns1123_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let label_chars = !v.is_empty() && v.split('.').count() == 1 && is_dns1123_label_part(v);
    if !label_chars {
        if v.len() <= 253 && v.contains('.') && is_dns1123_subdomain(v) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                    .to_string(),
            );
        }
    }
    errs
}

/// `validation.IsValidLabelValue`: its errors, empty if valid.
pub fn label_value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.is_empty() {
        return errs;
    }
    if v.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    let b = v.as_bytes();
    let chars_ok = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric();
    if !chars_ok {
        errs.push(format!(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '{LABEL_VALUE_FMT}')"
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names() {
        assert!(is_dns1123_label("dev-cluster-ingress"));
        assert!(!is_dns1123_label("Dev"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(!is_dns1123_label("-a"));
        assert!(is_dns1123_subdomain("a.b-c"));
        assert!(!is_dns1123_subdomain("a..b"));
        assert!(!is_dns1123_subdomain(&"a".repeat(254)));
        assert!(is_dns1035_label("servicetemplate"));
        assert!(dns1123_label_errors("cert-manager").is_empty());
        assert_eq!(dns1123_label_errors("a.b"), ["must not contain dots"]);
        assert!(dns1123_label_errors("Ab")[0].starts_with("a lowercase RFC 1123 label"));
        assert_eq!(dns1123_label_errors(&"a".repeat(64)).len(), 1);
        assert!(!is_dns1035_label("1abc"));
    }

    #[test]
    fn qualified_names_and_label_values() {
        assert!(qualified_name_errors("example.com/k-1.x_y").is_empty());
        assert!(!qualified_name_errors("bad key").is_empty());
        assert!(!qualified_name_errors("Upper.Prefix/k").is_empty());
        assert_eq!(
            qualified_name_errors("/k"),
            ["prefix part must be non-empty"]
        );
        assert!(qualified_name_errors("a/b/c")[0].starts_with("a qualified name must"));
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("V-1").is_empty());
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
        assert!(is_label_value("") && is_label_value("a.b") && !is_label_value("a!"));
    }
}
