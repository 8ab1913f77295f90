//! Text filled into a width exactly as textwrap's `fill` does it with the options of the human
//! report (first fit; words split after a hyphen between letters; a word wider than a line
//! broken; lines broken where Unicode's line-breaking algorithm, UAX #14, allows), the common
//! case without textwrap: printable ASCII, whose break opportunities follow from the classes
//! UAX #14 gives those 95 characters. Any other text goes to textwrap itself (its Unicode
//! segmenter costs about 10 ns a character, most of a report's wrapping).
//!
//! The unit tests hold both paths to textwrap on generated text.

/// An indent of the first or of the following lines: its text (which may hold colour escapes)
/// and the columns it takes.
#[derive(Debug, Clone, Copy)]
pub struct Indent<'a> {
    pub text: &'a str,
    pub width: usize,
}

impl<'a> Indent<'a> {
    /// An indent without escapes, as wide as it is long (ASCII and box-drawing characters).
    pub fn plain(text: &'a str) -> Indent<'a> {
        Indent {
            text,
            width: text.chars().count(),
        }
    }
}

/// Appends `text` filled into `width` columns to `out`: the first line after `first`, every
/// other after `rest`; lines joined by `\n`, no newline after the last.
pub fn fill(out: &mut String, text: &str, width: usize, first: Indent, rest: Indent) {
    // Folded without stopping early: the compiler checks many bytes at once.
    let unprintable = text.bytes().fold(false, |any, b| {
        any | (b != b'\n' && !(b' '..=b'~').contains(&b))
    });
    if unprintable {
        let options = textwrap::Options::new(width)
            .initial_indent(first.text)
            .subsequent_indent(rest.text)
            .break_words(true);
        out.push_str(&textwrap::fill(text, options));
        return;
    }
    let mut rows = 0usize;
    let mut fragments = Vec::new();
    for line in text.split('\n') {
        let indent = if rows == 0 { first } else { rest };
        if line.len() < width && indent.text.is_empty() {
            if rows > 0 {
                out.push('\n');
            }
            out.push_str(line.trim_end_matches(' '));
            rows += 1;
            continue;
        }
        let widths = [
            width.saturating_sub(first.width),
            width.saturating_sub(rest.width),
        ];
        let words_end = line.trim_end_matches(' ').len();
        if words_end <= widths[0] && (words_end > 0 || !first.text.is_empty()) {
            // It fits: first fit breaks before a fragment only where the fragment would end
            // past the row, and no fragment ends past the line's last word.
            if rows > 0 {
                out.push('\n');
            }
            out.push_str(indent.text);
            out.push_str(&line[..words_end]);
            rows += 1;
            continue;
        }
        fragments.clear();
        split(line, widths[1], &mut fragments);
        if !first.text.is_empty() {
            fragments.insert(0, Fragment::default());
        }
        // A row: its fragments (contiguous in `line`), without the spaces after the last.
        let mut emit = |row: &[Fragment]| {
            if rows > 0 {
                out.push('\n');
            }
            if let (Some(head), Some(last)) = (row.first(), row.last()) {
                out.push_str(if rows == 0 { first.text } else { rest.text });
                out.push_str(&line[head.start..last.word_end]);
            }
            rows += 1;
        };
        // First fit: a row takes fragments until the next would end past its room.
        let (mut row_start, mut used, mut line_rows) = (0, 0, 0);
        for (i, fragment) in fragments.iter().enumerate() {
            let room = widths[usize::from(line_rows > 0)];
            if used + fragment.width() > room && i > row_start {
                emit(&fragments[row_start..i]);
                line_rows += 1;
                row_start = i;
                used = 0;
            }
            used += fragment.end - fragment.start;
        }
        emit(&fragments[row_start..]);
    }
}

/// A piece of a line that wrapping keeps whole: `start..word_end` its text, `word_end..end`
/// the spaces after it (dropped at the end of a row). Printable ASCII: a byte a column.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Fragment {
    start: usize,
    word_end: usize,
    end: usize,
}

impl Fragment {
    fn width(&self) -> usize {
        self.word_end - self.start
    }
}

/// The fragments of one line of printable ASCII: words between break opportunities, each split
/// after a hyphen between two alphanumerics, and each wider than `room` broken into pieces of
/// `room` columns.
fn split(line: &str, room: usize, out: &mut Vec<Fragment>) {
    let bytes = line.as_bytes();
    let mut push = |start: usize, word_end: usize, end: usize| {
        // Hyphen splitting: after each '-' with an alphanumeric on both sides.
        let mut from = start;
        for i in start..word_end {
            if bytes[i] == b'-'
                && i > start
                && bytes[i - 1].is_ascii_alphanumeric()
                && i + 1 < word_end
                && bytes[i + 1].is_ascii_alphanumeric()
            {
                broken(from, i + 1, i + 1, room, out);
                from = i + 1;
            }
        }
        broken(from, word_end, end, room, out);
    };
    let mut start = 0;
    for at in words(bytes) {
        let word_end = start + line[start..at].trim_end_matches(' ').len();
        push(start, word_end, at);
        start = at;
    }
}

/// Where the words of a line end, as textwrap's Unicode separator cuts them: at each break
/// opportunity not after a '-' (textwrap leaves those to hyphen splitting), the last
/// opportunity taken to be the end of the line (it is, unless the line ends with '-': then
/// the one before it is dropped too), and the end of the line.
fn words(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut ends = Vec::new();
    // The class of the last byte that is not a space, and whether spaces follow it.
    let mut before_spaces = None;
    for (at, pair) in bytes.windows(2).enumerate() {
        if pair[0].is_ascii_alphanumeric() && pair[1].is_ascii_alphanumeric() {
            // Letters and digits hold together (LB23, LB28), and none is a space.
            before_spaces = Some(class(pair[0]));
            continue;
        }
        let (a, b) = (class(pair[0]), class(pair[1]));
        if a != Class::Sp {
            before_spaces = Some(a);
        }
        if pair[0] != b'-' && breaks(a, b, before_spaces) {
            ends.push(at + 1);
        }
    }
    if bytes.last().is_some_and(|&b| b != b'-') {
        ends.push(bytes.len());
    }
    ends.pop();
    ends.into_iter()
        .chain((!bytes.is_empty()).then_some(bytes.len()))
}

/// A fragment wider than `room` cut into pieces of `room` columns, the spaces on the last.
fn broken(start: usize, word_end: usize, end: usize, room: usize, out: &mut Vec<Fragment>) {
    let mut from = start;
    if word_end - start > room {
        while word_end - from > room.max(1) {
            let cut = from + room.max(1);
            out.push(Fragment {
                start: from,
                word_end: cut,
                end: cut,
            });
            from = cut;
        }
    }
    out.push(Fragment {
        start: from,
        word_end,
        end,
    });
}

/// UAX #14's line-breaking classes of printable ASCII.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Space.
    Sp,
    /// Exclamation or interrogation: `!` `?`.
    Ex,
    /// Quotation: `"` `'`.
    Qu,
    /// Alphabetic (letters and most symbols).
    Al,
    /// Prefix numeric: `$` `+` `\`.
    Pr,
    /// Postfix numeric: `%`.
    Po,
    /// Opening punctuation: `(` `[` `{`.
    Op,
    /// Closing parenthesis: `)` `]`.
    Cp,
    /// Closing punctuation: `}`.
    Cl,
    /// Infix numeric separator: `,` `.` `:` `;`.
    Is,
    /// Hyphen: `-`.
    Hy,
    /// Symbol allowing break after: `/`.
    Sy,
    /// Numeric: digits.
    Nu,
    /// Break after: `|`.
    Ba,
}

/// The class of each printable ASCII byte (others are never asked for).
const CLASSES: [Class; 128] = {
    let mut table = [Class::Al; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b' ' => Class::Sp,
            b'!' | b'?' => Class::Ex,
            b'"' | b'\'' => Class::Qu,
            b'$' | b'+' | b'\\' => Class::Pr,
            b'%' => Class::Po,
            b'(' | b'[' | b'{' => Class::Op,
            b')' | b']' => Class::Cp,
            b'}' => Class::Cl,
            b',' | b'.' | b':' | b';' => Class::Is,
            b'-' => Class::Hy,
            b'/' => Class::Sy,
            b'0'..=b'9' => Class::Nu,
            b'|' => Class::Ba,
            _ => Class::Al,
        };
        b += 1;
    }
    table
};

fn class(b: u8) -> Class {
    CLASSES[usize::from(b & 0x7f)]
}

/// Whether UAX #14 allows a break between two adjacent characters of classes `a` and `b`;
/// `before_spaces` is the class of the last character before `b` that is not a space.
fn breaks(a: Class, b: Class, before_spaces: Option<Class>) -> bool {
    use Class::*;
    if b == Sp {
        return false; // LB7
    }
    if matches!(b, Cl | Cp | Ex | Sy | Is) {
        // LB13 (as in Unicode 15.1, which the segmenter follows: no break before a
        // separator, even one that starts a number).
        return false;
    }
    if a == Sp {
        return before_spaces != Some(Op); // LB14, LB18
    }
    PAIRS[a as usize][b as usize]
}

/// Whether a break is allowed between two adjacent characters, neither a space, where no
/// rule about what follows applies (LB14 to LB31 on pairs).
const PAIRS: [[bool; 14]; 14] = {
    use Class::*;
    const ALL: [Class; 14] = [Sp, Ex, Qu, Al, Pr, Po, Op, Cp, Cl, Is, Hy, Sy, Nu, Ba];
    let mut table = [[true; 14]; 14];
    let mut i = 0;
    while i < 14 {
        let mut j = 0;
        while j < 14 {
            let (a, b) = (ALL[i], ALL[j]);
            table[a as usize][b as usize] = !matches!(a, Op | Qu) // LB14, LB19
                && !matches!(b, Qu | Ba | Hy) // LB19, LB21
                && !matches!(
                    (a, b),
                    (Al, Nu) | (Nu, Al) // LB23
                        | (Pr | Po, Al) | (Al, Pr | Po) // LB24
                        | (Cl | Cp | Nu, Po | Pr) | (Po | Pr, Op | Nu) | (Hy | Is | Nu | Sy, Nu) // LB25
                        | (Al, Al) // LB28
                        | (Is, Al) // LB29
                        | (Al | Nu, Op) | (Cp, Al | Nu) // LB30
                );
            j += 1;
        }
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(text: &str, width: usize, first: &str, rest: &str) -> String {
        let mut out = String::new();
        fill(
            &mut out,
            text,
            width,
            Indent::plain(first),
            Indent::plain(rest),
        );
        out
    }

    fn theirs(text: &str, width: usize, first: &str, rest: &str) -> String {
        textwrap::fill(
            text,
            textwrap::Options::new(width)
                .initial_indent(first)
                .subsequent_indent(rest)
                .break_words(true),
        )
    }

    /// Words as textwrap's Unicode separator finds them, and as ours does.
    fn words_theirs(line: &str) -> Vec<String> {
        textwrap::WordSeparator::UnicodeBreakProperties
            .find_words(line)
            .map(|w| format!("{}{}", w.word, w.whitespace))
            .collect()
    }

    fn words_ours(line: &str) -> Vec<String> {
        let mut start = 0;
        words(line.as_bytes())
            .map(|at| {
                let word = line[start..at].to_string();
                start = at;
                word
            })
            .collect()
    }

    /// Printable ASCII strings, weighted towards what messages hold.
    fn samples(n: usize, seed: u64) -> Vec<String> {
        const ALPHABET: &[u8] =
            b"aaaaabbbcdeexyzAZ0019    --//..,,::;;''\"\"()[]{}!?$%+\\|#&*<=>@^_`~";
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..n)
            .map(|_| {
                let len = (next() % 60) as usize;
                (0..len)
                    .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn break_opportunities_are_unicodes_for_every_triple() {
        let printable: Vec<char> = (b' '..=b'~').map(char::from).collect();
        let mut text = String::new();
        for &a in &printable {
            for &b in &printable {
                for &c in &printable {
                    text.clear();
                    text.extend([a, b, c]);
                    assert_eq!(words_ours(&text), words_theirs(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn break_opportunities_are_unicodes_on_generated_text() {
        for text in samples(20_000, 0x9e37_79b9_7f4a_7c15) {
            assert_eq!(words_ours(&text), words_theirs(&text), "{text:?}");
        }
    }

    #[test]
    fn fill_is_textwraps() {
        let mut texts = samples(4_000, 42);
        texts.extend(
            [
                "",
                " ",
                "a\n\nb",
                "\n",
                "trailing   ",
                "spec.unknownField: unknown field \"unknownField\"",
                "remove `spec.unknownField` or move it where the CRD defines it: the API server drops unknown fields silently",
                "guard the rule:\n  has(self.status.availableReplicas) && has(self.status.replicas) && self.status.availableReplicas == self.status.replicas",
                "ingress-nginx/ingress-nginx-controller-with-a-very-long-name-that-does-not-fit-anywhere-at-all is claimed twice",
                "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w",
                "--flag--with--doubled--hyphens and x-1 and 1-x and -lead trail-",
            ]
            .map(String::from),
        );
        // Non-ASCII goes to textwrap: the same answer by construction, still checked.
        texts.push("Größe überschritten: 字段 ist nicht erlaubt, entferne es bitte".into());
        texts.push("tab\tand\rcarriage".into());
        for text in &texts {
            for width in [0, 1, 5, 10, 20, 38, 78, 98, 200] {
                for (first, rest) in [
                    ("  × ", "  │ "),
                    ("  help: ", "        "),
                    ("", ""),
                    ("", "  "),
                ] {
                    assert_eq!(
                        ours(text, width, first, rest),
                        theirs(text, width, first, rest),
                        "{text:?} at {width} after {first:?}/{rest:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_escaped_indent_counts_its_columns_only() {
        let red = "  \x1b[31m×\x1b[0m ";
        let bar = "  \x1b[31m│\x1b[0m ";
        let text = "a message long enough to need a second line at this narrow width";
        let mut out = String::new();
        fill(
            &mut out,
            text,
            30,
            Indent {
                text: red,
                width: 4,
            },
            Indent {
                text: bar,
                width: 4,
            },
        );
        assert_eq!(out, theirs(text, 30, red, bar));
    }
}
