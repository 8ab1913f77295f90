//! Escapes and classes as Go reads them: `\d \w \s` and POSIX classes in ASCII, Unicode
//! classes by Go's table names (categories, their aliases and scripts).

use super::syntax::*;
use super::*;

pub(super) fn parse_class_char<'s>(s: &'s str, whole: &str) -> Result<(u32, &'s str), String> {
    if s.is_empty() {
        return Err(error(ERR_MISSING_BRACKET, whole));
    }
    if s.starts_with('\\') {
        return parse_escape(s);
    }
    let c = s.chars().next().unwrap_or('\0');
    Ok((c as u32, &s[c.len_utf8()..]))
}

/// Go's `parseEscape`: the code point of an ordinary escape sequence.
pub(super) fn parse_escape(s: &str) -> Result<(u32, &str), String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(error(ERR_TRAILING_BACKSLASH, ""));
    };
    let mut t = &t[c.len_utf8()..];
    let invalid = |t: &str| error(ERR_INVALID_ESCAPE, &s[..s.len() - t.len()]);
    match c {
        '1'..='7' | '0' => {
            // A single non-zero digit would be a backreference: not supported.
            if c != '0' && !t.starts_with(|d: char| ('0'..='7').contains(&d)) {
                return Err(invalid(t));
            }
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                match t.as_bytes().first() {
                    Some(&d @ b'0'..=b'7') => {
                        r = r * 8 + (d - b'0') as u32;
                        t = &t[1..];
                    }
                    _ => break,
                }
            }
            Ok((r, t))
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return Err(invalid(t));
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                let mut r: u32 = 0;
                let mut nhex = 0;
                loop {
                    let Some(c) = t.chars().next() else {
                        return Err(invalid(t));
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return Err(invalid(t));
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return Err(invalid(t));
                    }
                    nhex += 1;
                }
                if nhex == 0 {
                    return Err(invalid(t));
                }
                return Ok((r, t));
            }
            let x = c.to_digit(16);
            let Some(c2) = t.chars().next() else {
                return Err(invalid(t));
            };
            t = &t[c2.len_utf8()..];
            match (x, c2.to_digit(16)) {
                (Some(x), Some(y)) => Ok((x * 16 + y, t)),
                _ => Err(invalid(t)),
            }
        }
        'a' => Ok((7, t)),
        'f' => Ok((12, t)),
        'n' => Ok((10, t)),
        'r' => Ok((13, t)),
        't' => Ok((9, t)),
        'v' => Ok((11, t)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c as u32, t)),
        _ => Err(invalid(t)),
    }
}

/// `\d \D \s \S \w \W`: ASCII classes, as in Go.
pub(super) fn perl_class(s: &str) -> Option<ClassItem> {
    let (body, negated) = match s {
        "\\d" => ("0-9", false),
        "\\D" => ("0-9", true),
        "\\s" => ("\\t\\n\\x0C\\r ", false),
        "\\S" => ("\\t\\n\\x0C\\r ", true),
        "\\w" => ("0-9A-Za-z_", false),
        "\\W" => ("0-9A-Za-z_", true),
        _ => return None,
    };
    Some(ClassItem::Set(body.to_string(), negated))
}

/// `[:alpha:]` and `[:^alpha:]`: Go's ASCII POSIX classes.
pub(super) fn posix_class(name: &str) -> Option<ClassItem> {
    let (negated, key) = match name.strip_prefix("[:^") {
        Some(rest) => (true, rest.strip_suffix(":]")?),
        None => (false, name.strip_prefix("[:")?.strip_suffix(":]")?),
    };
    let body = match key {
        "alnum" => "0-9A-Za-z",
        "alpha" => "A-Za-z",
        "ascii" => "\\x00-\\x7F",
        "blank" => "\\t ",
        "cntrl" => "\\x00-\\x1F\\x7F",
        "digit" => "0-9",
        "graph" => "!-~",
        "lower" => "a-z",
        "print" => " -~",
        "punct" => "!-/:-@\\[-`{-~",
        "space" => "\\t\\n\\x0B\\x0C\\r ",
        "upper" => "A-Z",
        "word" => "0-9A-Za-z_",
        "xdigit" => "0-9A-Fa-f",
        _ => return None,
    };
    Some(ClassItem::Set(body.to_string(), negated))
}

/// Go's `canonicalName`: a leading capital, the rest lower case, without `_`, `-` or spaces.
pub(super) fn canonical_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b == b'_' || b == b'-' || b == b' ' {
            continue;
        }
        if out.is_empty() {
            out.push(b.to_ascii_uppercase() as char);
        } else {
            out.push(b.to_ascii_lowercase() as char);
        }
    }
    out
}

/// Go's `unicodeTable` (Go 1.25 and later: names matched ignoring case, `_`, `-` and spaces,
/// with `Any`, `Assigned`, `ASCII`, `LC`, `Cn` and the general category aliases), as the
/// body of a `regex` class and whether it is inverted.
pub(super) fn unicode_table(name: &str) -> Option<(String, bool)> {
    let canon = canonical_name(name);
    match canon.as_str() {
        "Any" => return Some(("\\x{0}-\\x{10FFFF}".into(), false)),
        "Assigned" => return Some(("\\p{gc=Cn}".into(), true)),
        "Ascii" => return Some(("\\x{0}-\\x{7F}".into(), false)),
        "Lc" => return Some(("\\p{gc=LC}".into(), false)),
        _ => {}
    }
    if let Some(c) = CATEGORIES.iter().find(|c| canonical_name(c) == canon) {
        return Some((format!("\\p{{gc={c}}}"), false));
    }
    if let Some(s) = SCRIPTS.iter().find(|s| canonical_name(s) == canon) {
        return Some((format!("\\p{{sc={s}}}"), false));
    }
    if let Some((_, c)) = CATEGORY_ALIASES
        .iter()
        .find(|(alias, _)| canonical_name(alias) == canon)
    {
        return Some((format!("\\p{{gc={c}}}"), false));
    }
    None
}

/// Go's `unicode.Categories`.
pub(super) const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Cn", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn",
    "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm",
    "So", "Z", "Zl", "Zp", "Zs",
];

/// Go's `unicode.CategoryAliases` (Unicode's PropertyValueAliases for gc).
pub(super) const CATEGORY_ALIASES: &[(&str, &str)] = &[
    ("Cased_Letter", "LC"),
    ("Close_Punctuation", "Pe"),
    ("Combining_Mark", "M"),
    ("Connector_Punctuation", "Pc"),
    ("Control", "Cc"),
    ("Currency_Symbol", "Sc"),
    ("Dash_Punctuation", "Pd"),
    ("Decimal_Number", "Nd"),
    ("Enclosing_Mark", "Me"),
    ("Final_Punctuation", "Pf"),
    ("Format", "Cf"),
    ("Initial_Punctuation", "Pi"),
    ("Letter", "L"),
    ("Letter_Number", "Nl"),
    ("Line_Separator", "Zl"),
    ("Lowercase_Letter", "Ll"),
    ("Mark", "M"),
    ("Math_Symbol", "Sm"),
    ("Modifier_Letter", "Lm"),
    ("Modifier_Symbol", "Sk"),
    ("Nonspacing_Mark", "Mn"),
    ("Number", "N"),
    ("Open_Punctuation", "Ps"),
    ("Other", "C"),
    ("Other_Letter", "Lo"),
    ("Other_Number", "No"),
    ("Other_Punctuation", "Po"),
    ("Other_Symbol", "So"),
    ("Paragraph_Separator", "Zp"),
    ("Private_Use", "Co"),
    ("Punctuation", "P"),
    ("Separator", "Z"),
    ("Space_Separator", "Zs"),
    ("Spacing_Mark", "Mc"),
    ("Surrogate", "Cs"),
    ("Symbol", "S"),
    ("Titlecase_Letter", "Lt"),
    ("Unassigned", "Cn"),
    ("Uppercase_Letter", "Lu"),
    ("cntrl", "Cc"),
    ("digit", "Nd"),
    ("punct", "P"),
];

/// Go's `unicode.Scripts` (Unicode 15.0).
pub(super) const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];
