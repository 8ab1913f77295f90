use super::*;

fn m(pattern: &str, text: &str) -> Result<bool, String> {
    compile(pattern).map(|c| c.re.is_match(text))
}

#[test]
fn accepts_what_go_accepts() {
    assert_eq!(m(r"\Q.*\E", ".*"), Ok(true));
    assert_eq!(m(r"\Q.*\E", "ab"), Ok(false));
    assert_eq!(m("a{", "a{"), Ok(true));
    assert_eq!(m("a{,2}", "a{,2}"), Ok(true));
    assert_eq!(m("x{2,1", "x{2,1"), Ok(true));
    assert_eq!(m(r"\101", "A"), Ok(true));
    assert_eq!(m(r"\0", "\0"), Ok(true));
    assert_eq!(m(r"[\012-\015]", "\r"), Ok(true));
    assert_eq!(m(r"\x41\x{42}", "AB"), Ok(true));
    assert_eq!(m(r"\xff", "a"), Ok(false));
    assert_eq!(m(r"\xff", "ÿ"), Ok(true));
    assert_eq!(m("(?P<x>a)(?<y>b)", "ab"), Ok(true));
    assert_eq!(m("(?U)^a+$", "aaa"), Ok(true));
    assert_eq!(m("(?i)^école$", "ÉCOLE"), Ok(true));
    assert_eq!(m("a|", "x"), Ok(true));
    assert_eq!(m("c\\z", "abc"), Ok(true));
    assert_eq!(m("[[:alpha:]]+", "abc"), Ok(true));
    assert_eq!(m("[[:^alpha:]]", "abc"), Ok(false));
    assert_eq!(m(r"\p{Greek}", "αβγ"), Ok(true));
    assert_eq!(m(r"\p{greek}", "αβγ"), Ok(true));
    assert_eq!(m(r"\pL", "é"), Ok(true));
    assert_eq!(m(r"\p{^L}", "é"), Ok(false));
    assert_eq!(m(r"\PL", "1"), Ok(true));
    assert_eq!(m(r"\p{Letter}", "é"), Ok(true));
    assert_eq!(m(r"\p{Any}", "é"), Ok(true));
    assert_eq!(m(r"\p{ASCII}", "é"), Ok(false));
    assert_eq!(m(r"\p{Canadian_Aboriginal}", "ᐁ"), Ok(true));
    assert_eq!(m("(?:a)", "a"), Ok(true));
    assert_eq!(m("(?i)(?-i:a)", "A"), Ok(false));
    assert_eq!(m("(?i:a)A", "AA"), Ok(true));
    assert_eq!(m("(?i:a)A", "aa"), Ok(false));
    assert_eq!(m("(?:[a-z]{4}){0,250}", "abcd"), Ok(true));
    assert_eq!(m("a*{", "aa{"), Ok(true));
    assert_eq!(m(r"[^\x00-\x{10FFFF}]", "a"), Ok(false));
    assert_eq!(m(r"\_", "_"), Ok(true));
    assert_eq!(m("(?)a", "a"), Ok(true));
}

#[test]
fn ascii_perl_classes_and_boundaries_as_go() {
    assert_eq!(m(r"^\w$", "é"), Ok(false));
    assert_eq!(m(r"^\d$", "٣"), Ok(false));
    assert_eq!(m(r"^\s$", "\u{a0}"), Ok(false));
    assert_eq!(m(r"^\s$", "\u{b}"), Ok(false));
    assert_eq!(m(r"^[[:space:]]$", "\u{b}"), Ok(true));
    assert_eq!(m(r"\bwörld\b", "héllo wörld ✓"), Ok(true));
    assert_eq!(m(r"(?i)\w", "ſ"), Ok(true));
    assert_eq!(m(r"(?i)\W", "ſ"), Ok(false));
    assert_eq!(m(r"(?i)[k]", "\u{212a}"), Ok(true));
    assert_eq!(m("^.$", "🎉"), Ok(true));
    assert_eq!(m("a.b", "a\nb"), Ok(false));
    assert_eq!(m("(?s)a.b", "a\nb"), Ok(true));
    assert_eq!(m("[^a]", "\n"), Ok(true));
    assert_eq!(m("a$", "a\n"), Ok(false));
    assert_eq!(m("(?m)^b$", "a\nb"), Ok(true));
}

#[test]
fn refuses_what_go_refuses_with_its_message() {
    let e = |p: &str| compile(p).err().unwrap_or_else(|| panic!("{p} compiled"));
    assert_eq!(
        e("(?x) a b"),
        "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"
    );
    assert_eq!(
        e("a++"),
        "error parsing regexp: invalid nested repetition operator: `++`"
    );
    assert_eq!(
        e("a**"),
        "error parsing regexp: invalid nested repetition operator: `**`"
    );
    assert_eq!(
        e("a{1001}"),
        "error parsing regexp: invalid repeat count: `{1001}`"
    );
    assert_eq!(
        e(r"\u00e9"),
        "error parsing regexp: invalid escape sequence: `\\u`"
    );
    assert_eq!(
        e(r"(a)\1"),
        "error parsing regexp: invalid escape sequence: `\\1`"
    );
    assert_eq!(
        e(r"c\Z"),
        "error parsing regexp: invalid escape sequence: `\\Z`"
    );
    assert_eq!(
        e("a(?=b)"),
        "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
    );
    assert_eq!(
        e("(?>a)"),
        "error parsing regexp: invalid or unsupported Perl syntax: `(?>`"
    );
    assert_eq!(e("("), "error parsing regexp: missing closing ): `(`");
    assert_eq!(e(")"), "error parsing regexp: unexpected ): `)`");
    assert_eq!(e("[a"), "error parsing regexp: missing closing ]: `[a`");
    assert_eq!(
        e("[z-a]"),
        "error parsing regexp: invalid character class range: `z-a`"
    );
    assert_eq!(
        e("*"),
        "error parsing regexp: missing argument to repetition operator: `*`"
    );
    assert_eq!(
        e("\\"),
        "error parsing regexp: trailing backslash at end of expression: ``"
    );
    assert_eq!(
        e(r"\C"),
        "error parsing regexp: invalid escape sequence: `\\C`"
    );
    assert_eq!(
        e(r"\p{Nope}"),
        "error parsing regexp: invalid character class range: `\\p{Nope}`"
    );
    assert_eq!(
        e("[[:nope:]]"),
        "error parsing regexp: invalid character class range: `[:nope:]`"
    );
    assert_eq!(
        e("(?P<>a)"),
        "error parsing regexp: invalid named capture: `(?P<>`"
    );
    assert_eq!(
        e(r"\Q\E*"),
        "error parsing regexp: missing argument to repetition operator: `*`"
    );
    assert!(compile("((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})").is_err());
    assert!(compile("(?:[a-z]{4}){0,251}").is_err());
    assert!(compile(&format!("{}{}", "(".repeat(1000), ")".repeat(1000))).is_err());
    assert!(compile(&format!("{}{}", "(".repeat(999), ")".repeat(999))).is_ok());
    assert!(compile(r"\p{Garay}").is_err());
    assert!(compile("a{100000}").is_err());
}

#[test]
fn the_cache_compiles_a_pattern_once() {
    let p = "^cache-test-[0-9]+$";
    let (_, miss1) = cached(p);
    let (r, miss2) = cached(p);
    assert!(miss1 && !miss2);
    assert!(r.unwrap().re.is_match("cache-test-42"));
}

#[test]
fn wide_characters_where_a_perl_class_may_start_are_no_panic() {
    // Found by the `cel` fuzz target: a class or escape followed by a multi-byte character
    // was sliced inside that character.
    assert_eq!(m("^[\u{FFFD}a-z]+$", "a\u{FFFD}b"), Ok(true));
    assert_eq!(m("^[é]$", "é"), Ok(true));
    assert_eq!(
        compile("[\\é]").err().as_deref(),
        Some("error parsing regexp: invalid escape sequence: `\\é`")
    );
    assert_eq!(
        compile("\\é").err().as_deref(),
        Some("error parsing regexp: invalid escape sequence: `\\é`")
    );
}
