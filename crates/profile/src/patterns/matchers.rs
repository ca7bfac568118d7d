//! Hand-written matchers for the named patterns, exactly equivalent to the reference regular
//! expressions of [`Pattern::matches`] (tested against them below), at a fraction of the cost.
//! URLs, IPv6 addresses and JSON are rare: cheap necessary conditions select the values that the
//! reference matcher then decides.

use autocoder_schema::Pattern;

/// Classes of bytes, a bit each: which characters a value has decides which patterns it may
/// match, before any matcher runs.
const DIGIT: u16 = 1;
/// `a`-`d`, `f` and upper case.
const HEX_LETTER: u16 = 1 << 1;
/// `e`, `E`: a hex digit and an exponent.
const EXPONENT: u16 = 1 << 2;
/// `x`, `X`.
const HEX_MARK: u16 = 1 << 3;
const OTHER_LETTER: u16 = 1 << 4;
/// `+`, `-`.
const SIGN: u16 = 1 << 5;
const DOT: u16 = 1 << 6;
const SPACE: u16 = 1 << 7;
/// `(`, `)`.
const PAREN: u16 = 1 << 8;
const PERCENT: u16 = 1 << 9;
const DOLLAR: u16 = 1 << 10;
const COLON: u16 = 1 << 11;
const AT: u16 = 1 << 12;
const NON_ASCII: u16 = 1 << 13;
const OTHER: u16 = 1 << 14;

const fn class_of(c: u8) -> u16 {
    match c {
        b'0'..=b'9' => DIGIT,
        b'e' | b'E' => EXPONENT,
        b'a'..=b'f' | b'A'..=b'F' => HEX_LETTER,
        b'x' | b'X' => HEX_MARK,
        b'a'..=b'z' | b'A'..=b'Z' => OTHER_LETTER,
        b'+' | b'-' => SIGN,
        b'.' => DOT,
        b' ' => SPACE,
        b'(' | b')' => PAREN,
        b'%' => PERCENT,
        b'$' => DOLLAR,
        b':' => COLON,
        b'@' => AT,
        0x80..=0xFF => NON_ASCII,
        _ => OTHER,
    }
}

static CLASSES: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut c = 0;
    while c < 256 {
        #[allow(clippy::cast_possible_truncation)] // c < 256
        let byte = c as u8;
        table[c] = class_of(byte);
        c += 1;
    }
    table
};

/// Whether every byte of a value with `classes` is in `allowed`.
fn only(classes: u16, allowed: u16) -> bool {
    classes & !allowed == 0
}

/// The patterns `value` matches, a bit per pattern (`1 << pattern as u32`).
pub(crate) fn matching(value: &str) -> u32 {
    let b = value.as_bytes();
    let Some(&first) = b.first() else {
        return 0;
    };
    let classes = b.iter().fold(0u16, |acc, &c| acc | CLASSES[usize::from(c)]);
    let mut out = 0u32;
    let mut set = |p: Pattern, yes: bool| {
        if yes {
            out |= 1 << p as u32;
        }
    };
    if only(classes, DIGIT | SIGN | DOT | EXPONENT) {
        set(Pattern::IntegerText, integer_text(b));
        set(Pattern::DecimalText, decimal_text(b));
    }
    set(Pattern::BooleanText, b.len() <= 5 && boolean_text(b));
    if only(classes, DIGIT | HEX_LETTER | EXPONENT | HEX_MARK) {
        set(Pattern::Hex, hex(b));
    }
    if classes & PERCENT != 0 {
        set(Pattern::Percent, percent(b));
    }
    if classes & (DOLLAR | NON_ASCII) != 0 {
        set(Pattern::Currency, currency(b));
    }
    if only(classes, DIGIT | SIGN | SPACE | PAREN | DOT) {
        set(Pattern::Phone, phone(b));
        set(Pattern::Ipv4, only(classes, DIGIT | DOT) && ipv4(b));
    }
    if first.is_ascii_digit() && b.len() >= 10 {
        set(Pattern::IsoDate, b.len() == 10 && iso_date(b));
        set(Pattern::IsoDatetime, iso_datetime(b));
    }
    set(Pattern::Uuid, b.len() == 36 && uuid(b));
    if classes & AT != 0 {
        set(Pattern::Email, email(b));
    }
    if classes & COLON != 0 {
        if matches!(first, b'h' | b'H' | b'f' | b'F') {
            set(Pattern::Url, Pattern::Url.matches(value));
        }
        if only(classes, DIGIT | HEX_LETTER | EXPONENT | COLON) {
            set(Pattern::Ipv6, Pattern::Ipv6.matches(value));
        }
    }
    if matches!(first, b'{' | b'[') || value.trim_start().starts_with(['{', '[']) {
        set(Pattern::Json, Pattern::Json.matches(value));
    }
    out
}

/// `b` without one leading `+` or `-`.
fn unsigned(b: &[u8]) -> &[u8] {
    match b.first() {
        Some(b'+' | b'-') => &b[1..],
        _ => b,
    }
}

/// The number of ASCII digits at the start of `b`.
fn digit_run(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

fn all_digits(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().all(u8::is_ascii_digit)
}

/// `^[-+]?[0-9]+$`
fn integer_text(b: &[u8]) -> bool {
    all_digits(unsigned(b))
}

/// `^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+)$`
fn decimal_text(b: &[u8]) -> bool {
    let d = unsigned(b);
    let whole = digit_run(d);
    let mut i = whole;
    let mut dot = false;
    let mut fraction = 0;
    if d.get(i) == Some(&b'.') {
        dot = true;
        fraction = digit_run(&d[i + 1..]);
        i += 1 + fraction;
    }
    match d.get(i) {
        None => dot && (whole > 0 || fraction > 0),
        Some(b'e' | b'E') if whole > 0 => all_digits(unsigned(&d[i + 1..])),
        Some(_) => false,
    }
}

/// `^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|[YyNnTtFf01]|[Oo][Nn]|[Oo][Ff][Ff])$`
fn boolean_text(b: &[u8]) -> bool {
    match b.len() {
        1 => b"YyNnTtFf01".contains(&b[0]),
        2..=5 => ["true", "false", "yes", "no", "on", "off"]
            .iter()
            .any(|w| b.eq_ignore_ascii_case(w.as_bytes())),
        _ => false,
    }
}

/// `^(?:0[xX][0-9A-Fa-f]+|[0-9A-Fa-f]{8,})$`
fn hex(b: &[u8]) -> bool {
    let all_hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
    (b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') && all_hex(&b[2..]))
        || (b.len() >= 8 && all_hex(b))
}

/// A number of a percentage: `[0-9]+(?:\.[0-9]*)?|\.[0-9]+`.
fn plain_number(b: &[u8]) -> bool {
    let whole = digit_run(b);
    match b.get(whole) {
        None => whole > 0,
        Some(b'.') => {
            let fraction = digit_run(&b[whole + 1..]);
            whole + 1 + fraction == b.len() && (whole > 0 || fraction > 0)
        }
        Some(_) => false,
    }
}

/// `^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+) ?%$`
fn percent(b: &[u8]) -> bool {
    let Some(body) = unsigned(b).strip_suffix(b"%") else {
        return false;
    };
    plain_number(body.strip_suffix(b" ").unwrap_or(body))
}

/// The length in bytes of the currency symbol (`$`, `€`, `£`, `¥`, `₹`) that `b` starts with.
fn symbol_at_start(b: &[u8]) -> usize {
    match b {
        [b'$', ..] => 1,
        [0xC2, 0xA3 | 0xA5, ..] => 2,
        [0xE2, 0x82, 0xAC | 0xB9, ..] => 3,
        _ => 0,
    }
}

/// The length in bytes of the currency symbol that `b` ends with.
fn symbol_at_end(b: &[u8]) -> usize {
    match b {
        [.., b'$'] => 1,
        [.., 0xC2, 0xA3 | 0xA5] => 2,
        [.., 0xE2, 0x82, 0xAC | 0xB9] => 3,
        _ => 0,
    }
}

/// An amount: `[0-9]{1,3}(?:,?[0-9]{3})*(?:\.[0-9]{1,2})?`: digits, where every comma is
/// followed by a multiple of three digits, and up to two decimals.
fn amount(b: &[u8]) -> bool {
    let (whole, cents) = match b.iter().position(|&c| c == b'.') {
        Some(dot) => (&b[..dot], Some(&b[dot + 1..])),
        None => (b, None),
    };
    if let Some(cents) = cents
        && !(all_digits(cents) && cents.len() <= 2)
    {
        return false;
    }
    let mut groups = whole.split(|&c| c == b',');
    groups.next().is_some_and(all_digits)
        && groups.all(|g| all_digits(g) && g.len().is_multiple_of(3))
}

/// `b` without one leading space.
fn unspaced(b: &[u8]) -> &[u8] {
    b.strip_prefix(b" ").unwrap_or(b)
}

/// `^(?:[-+]?SYMBOL ?AMOUNT|\(SYMBOL ?AMOUNT\)|[-+]?AMOUNT ?SYMBOL)$` with the symbols `$€£¥₹`.
fn currency(b: &[u8]) -> bool {
    let d = unsigned(b);
    let lead = symbol_at_start(d);
    if lead > 0 && amount(unspaced(&d[lead..])) {
        return true;
    }
    if let Some(inner) = b.strip_prefix(b"(").and_then(|r| r.strip_suffix(b")")) {
        let lead = symbol_at_start(inner);
        if lead > 0 && amount(unspaced(&inner[lead..])) {
            return true;
        }
    }
    let trail = symbol_at_end(d);
    if trail > 0 {
        let body = &d[..d.len() - trail];
        return amount(body.strip_suffix(b" ").unwrap_or(body));
    }
    false
}

/// `^\+?\(?[0-9](?:[ ().-]*[0-9]){6,14}$`: after an optional `+` and `(`, 7 to 15 digits
/// separated by spaces, parentheses, dots and dashes, starting and ending with a digit.
fn phone(b: &[u8]) -> bool {
    let rest = b.strip_prefix(b"+").unwrap_or(b);
    let rest = rest.strip_prefix(b"(").unwrap_or(rest);
    let (Some(first), Some(last)) = (rest.first(), rest.last()) else {
        return false;
    };
    if !first.is_ascii_digit() || !last.is_ascii_digit() {
        return false;
    }
    let mut digits = 0;
    for &c in rest {
        if c.is_ascii_digit() {
            digits += 1;
        } else if !matches!(c, b' ' | b'(' | b')' | b'.' | b'-') {
            return false;
        }
    }
    (7..=15).contains(&digits)
}

/// `^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$`:
/// four numbers up to 255 without leading zeros.
fn ipv4(b: &[u8]) -> bool {
    if !(7..=15).contains(&b.len()) {
        return false;
    }
    let mut parts = 0;
    for part in b.split(|&c| c == b'.') {
        parts += 1;
        let ok = match part {
            [d] | [b'1'..=b'9', d] | [b'2', b'0'..=b'4', d] => d.is_ascii_digit(),
            [b'1', d, e] => d.is_ascii_digit() && e.is_ascii_digit(),
            [b'2', b'5', b'0'..=b'5'] => true,
            _ => false,
        };
        if !ok || parts > 4 {
            return false;
        }
    }
    parts == 4
}

/// `^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])` on the first ten bytes.
fn iso_date(b: &[u8]) -> bool {
    let [y1, y2, y3, y4, b'-', m1, m2, b'-', d1, d2, ..] = *b else {
        return false;
    };
    [y1, y2, y3, y4].iter().all(u8::is_ascii_digit)
        && matches!((m1, m2), (b'0', b'1'..=b'9') | (b'1', b'0'..=b'2'))
        && matches!(
            (d1, d2),
            (b'0', b'1'..=b'9') | (b'1' | b'2', b'0'..=b'9') | (b'3', b'0' | b'1')
        )
}

/// `(?:[01][0-9]|2[0-3])`
fn hour(h1: u8, h2: u8) -> bool {
    matches!((h1, h2), (b'0' | b'1', b'0'..=b'9') | (b'2', b'0'..=b'3'))
}

/// `[0-5][0-9]`
fn sixty(a: u8, b: u8) -> bool {
    matches!((a, b), (b'0'..=b'5', b'0'..=b'9'))
}

/// `ISO_DATE[T ]HH:MM(?::SS(?:[.,][0-9]{1,9})?)?(?:Z|[+-]HH:?MM)?$`
fn iso_datetime(b: &[u8]) -> bool {
    if b.len() < 16 || !iso_date(b) {
        return false;
    }
    let [b'T' | b' ', h1, h2, b':', m1, m2] = b[10..16] else {
        return false;
    };
    if !hour(h1, h2) || !sixty(m1, m2) {
        return false;
    }
    let mut rest = &b[16..];
    if let [b':', s1, s2, after @ ..] = rest {
        if !sixty(*s1, *s2) {
            return false;
        }
        rest = after;
        if let [b'.' | b',', after @ ..] = rest {
            let n = digit_run(after);
            if !(1..=9).contains(&n) {
                return false;
            }
            rest = &after[n..];
        }
    }
    match rest {
        [] | [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] | [b'+' | b'-', h1, h2, m1, m2] => {
            hour(*h1, *h2) && sixty(*m1, *m2)
        }
        _ => false,
    }
}

/// `^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`
fn uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// `^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$`: a local part, then
/// two or more dot-separated labels, the last of two or more letters.
fn email(b: &[u8]) -> bool {
    let Some(at) = memchr::memchr(b'@', b) else {
        return false;
    };
    let (local, domain) = (&b[..at], &b[at + 1..]);
    if local.is_empty()
        || !local
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-'))
    {
        return false;
    }
    let Some(last_dot) = memchr::memrchr(b'.', domain) else {
        return false;
    };
    let top = &domain[last_dot + 1..];
    top.len() >= 2
        && top.iter().all(u8::is_ascii_alphabetic)
        && domain[..last_dot].split(|&c| c == b'.').all(|label| {
            !label.is_empty()
                && label
                    .iter()
                    .all(|&c| c.is_ascii_alphanumeric() || c == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valid examples of every pattern, mutated below to find the edges.
    const SEEDS: &[&str] = &[
        "a.b+c@example.co.uk",
        "x@y.io",
        "https://x.org/a?b=1",
        "ftp://h/f",
        "123e4567-e89b-12d3-a456-426614174000",
        "192.168.0.1",
        "255.249.10.0",
        "2001:db8::1",
        "::1",
        "+1 (555) 123-4567",
        "020 7946 0958",
        "2024-02-29",
        "2024-01-31T12:30:00",
        "2024-01-31 12:30",
        "2024-01-31T12:30:00.123456789Z",
        "2024-01-31T23:59:59,5+02:00",
        "2024-01-31T12:30-0530",
        "$1,234.56",
        "€12",
        "12.50 €",
        "-$5",
        "($3.00)",
        "£1234,567.8",
        "+¥ 7",
        "₹1,000,000",
        "12.5%",
        "-3 %",
        ".5%",
        "-42",
        "007",
        "3.14",
        "-0.5e3",
        ".5",
        "1e9",
        "5.E+7",
        "yes",
        "No",
        "TRUE",
        "f",
        "0",
        "off",
        "0x1F",
        "deadbeef00",
        "{\"a\": [1, 2]}",
        " [1,2]",
        // Edges: out-of-range hours and octets, too many digits or decimals.
        "2024-01-31T24:00",
        "2024-01-31T20:60+24:00",
        "256.255.25.1",
        "1234567890123456",
        "+1 234 567 890 123 45",
        "$1.234",
        "1.5e",
    ];

    /// Characters that matter to some pattern.
    const ALPHABET: &[&str] = &[
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "e", "E", "f", "x", "T", "Z", "z",
        "-", "+", ".", ",", ":", " ", "%", "$", "€", "£", "¥", "₹", "(", ")", "@", "/", "{", "[",
        "é", "\n",
    ];

    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) as usize % n
        }
    }

    fn reference(value: &str) -> u32 {
        Pattern::ALL
            .iter()
            .filter(|p| p.matches(value))
            .fold(0, |acc, &p| acc | 1 << p as u32)
    }

    fn check(value: &str) {
        let (fast, slow) = (matching(value), reference(value));
        for p in Pattern::ALL {
            let bit = 1 << p as u32;
            assert_eq!(fast & bit, slow & bit, "{p:?} on {value:?}");
        }
    }

    #[test]
    fn hand_matchers_agree_with_the_regular_expressions() {
        for seed in SEEDS {
            check(seed);
        }
        let mut rng = Lcg(42);
        for _ in 0..100_000 {
            // A seed with a few characters replaced, inserted or removed.
            let mut chars: Vec<String> = SEEDS[rng.below(SEEDS.len())]
                .chars()
                .map(String::from)
                .collect();
            for _ in 0..=rng.below(3) {
                let at = rng.below(chars.len() + 1);
                let c = ALPHABET[rng.below(ALPHABET.len())].to_owned();
                match rng.below(3) {
                    0 if at < chars.len() => chars[at] = c,
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    _ => chars.insert(at, c),
                }
            }
            check(&chars.concat());
        }
        for _ in 0..100_000 {
            let len = rng.below(12);
            let value: String = (0..len)
                .map(|_| ALPHABET[rng.below(ALPHABET.len())])
                .collect();
            check(&value);
        }
    }
}
