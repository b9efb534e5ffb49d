//! A small C++ tokenizer: enough to find declarations, robust to what it
//! does not understand. Comments, preprocessor lines (with their `\`
//! continuations) and the contents of character literals are dropped;
//! string literals are kept (their text, escapes as written) because
//! `m.def("op", ...)` names ops with them.

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// A string literal's contents (without quotes and prefix).
    Str(String),
    /// A number (its spelling).
    Num(String),
    /// Punctuation: `::`, `->`, `&&` are one token; everything else one char.
    Punct(&'static str),
    /// A character literal (contents dropped).
    Char,
}

/// A token and the 1-based line it starts on.
#[derive(Clone, Debug)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its line.
    pub line: u32,
}

impl Token {
    /// Whether this is identifier `s`.
    pub fn is_ident(&self, s: &str) -> bool {
        matches!(&self.tok, Tok::Ident(i) if i == s)
    }

    /// Whether this is punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if *q == p)
    }

    /// The identifier, if it is one.
    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(i) => Some(i),
            _ => None,
        }
    }
}

const PUNCTS: &[&str] =
    &["::", "->", "&&", "||", "(", ")", "{", "}", "[", "]", "<", ">", ",", ";", "&", "*", "=", ".", ":", "+", "-", "/", "%", "!", "~", "^", "|", "?"];

/// Tokenizes `src`. Never fails: an unterminated comment or literal ends
/// at the end of the input.
pub fn tokenize(src: &str) -> Vec<Token> {
    lex(src, &[]).0
}

/// Tokenizes `src` as the compiler sees it with `-D` definitions
/// `defines`: code in a branch of a decidable conditional that is not
/// compiled is dropped ([`super::cond`]). Also returns the object-like
/// macros the file defines (name, replacement).
pub fn lex(src: &str, defines: &[String]) -> (Vec<Token>, Vec<(String, String)>) {
    let mut cond = super::cond::Cond::with_defines(defines);
    // (last line of a directive, whether code after it is compiled).
    let mut switches: Vec<(u32, bool)> = Vec::new();
    let toks = lex_raw(src, &mut |text, line| {
        let before = cond.active();
        cond.directive(text);
        if cond.active() != before {
            switches.push((line, cond.active()));
        }
    });
    let mut k = 0;
    let mut active = true;
    let mut out = Vec::with_capacity(toks.len());
    for t in toks {
        while k < switches.len() && switches[k].0 < t.line {
            active = switches[k].1;
            k += 1;
        }
        if active {
            out.push(t);
        }
    }
    let mut macros: Vec<(String, String)> = cond.macros.into_iter().filter(|(n, _)| !defines.iter().any(|d| d.split('=').next() == Some(n))).collect();
    macros.sort();
    (out, macros)
}

fn lex_raw(src: &str, on_directive: &mut dyn FnMut(&str, u32)) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1u32);
    // Whether only whitespace precedes `i` on its line (a `#` there starts
    // a preprocessor line).
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    // A line comment continues past a backslash-newline.
                    if let Some(k) = continuation(b, i) {
                        line += 1;
                        i += k;
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    line += u32::from(b[i] == b'\n');
                    i += 1;
                }
                i = (i + 2).min(b.len());
            }
            b'#' if line_start => {
                // A directive: to the end of the line, with continuations
                // (comments inside it are skipped with it).
                let mut text = Vec::new();
                i += 1;
                while i < b.len() && b[i] != b'\n' {
                    if let Some(k) = continuation(b, i) {
                        line += 1;
                        i += k;
                        text.push(b' ');
                    } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
                        while i + 1 < b.len() && b[i + 1] != b'\n' {
                            i += 1;
                        }
                    } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        i += 2;
                        while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                            line += u32::from(b[i] == b'\n');
                            i += 1;
                        }
                        i += 1;
                        text.push(b' ');
                    } else {
                        text.push(b[i]);
                    }
                    i += 1;
                }
                on_directive(&String::from_utf8_lossy(&text), line);
            }
            b'"' => {
                let (s, next, lines) = string_body(b, i + 1);
                out.push(Token { tok: Tok::Str(s), line });
                line += lines;
                i = next;
                line_start = false;
            }
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(Token { tok: Tok::Char, line });
                line_start = false;
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                    i += 1;
                }
                let word = &src[start..i];
                // Raw string literal: R"delim( ... )delim" (with prefixes).
                if b.get(i) == Some(&b'"') && matches!(word, "R" | "LR" | "uR" | "UR" | "u8R") {
                    let (s, next, lines) = raw_string(src, i + 1);
                    out.push(Token { tok: Tok::Str(s), line });
                    line += lines;
                    i = next;
                } else if b.get(i) == Some(&b'"') && matches!(word, "L" | "u" | "U" | "u8") {
                    let (s, next, lines) = string_body(b, i + 1);
                    out.push(Token { tok: Tok::Str(s), line });
                    line += lines;
                    i = next;
                } else {
                    out.push(Token { tok: Tok::Ident(word.to_owned()), line });
                }
                line_start = false;
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'\'' || b[i] == b'_') {
                    // An exponent sign belongs to the number.
                    if (b[i] == b'e' || b[i] == b'E' || b[i] == b'p' || b[i] == b'P') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(Token { tok: Tok::Num(src[start..i].to_owned()), line });
                line_start = false;
            }
            _ => {
                let rest = &src[i..];
                let p = PUNCTS.iter().find(|p| rest.starts_with(**p));
                if let Some(p) = p {
                    out.push(Token { tok: Tok::Punct(p), line });
                    i += p.len();
                } else {
                    // Anything else (`@`, `$`, a stray backslash): skipped.
                    i += rest.chars().next().map_or(1, char::len_utf8);
                }
                line_start = false;
            }
        }
    }
    out
}

/// At a backslash that ends the line (`\\` then LF or CRLF): how many
/// bytes after it to skip to reach the newline's last byte.
fn continuation(b: &[u8], i: usize) -> Option<usize> {
    match (b[i], b.get(i + 1), b.get(i + 2)) {
        (b'\\', Some(b'\n'), _) => Some(1),
        (b'\\', Some(b'\r'), Some(b'\n')) => Some(2),
        _ => None,
    }
}

/// The body of a `"..."` literal starting at `i` (past the quote): its
/// text, the index past the closing quote, and the newlines it spans.
fn string_body(b: &[u8], mut i: usize) -> (String, usize, u32) {
    let start = i;
    let mut lines = 0;
    while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'\n') {
                lines += 1;
            }
            i += 1;
        }
        i += 1;
    }
    let end = i.min(b.len());
    (String::from_utf8_lossy(&b[start..end]).into_owned(), (i + 1).min(b.len()), lines)
}

/// A raw string starting at `i` (past the opening quote).
fn raw_string(src: &str, i: usize) -> (String, usize, u32) {
    let rest = &src[i..];
    let Some(open) = rest.find('(') else { return (String::new(), src.len(), 0) };
    let close = format!("){}\"", &rest[..open]);
    let body = &rest[open + 1..];
    let (text, used) = match body.find(&close) {
        Some(e) => (&body[..e], open + 1 + e + close.len()),
        None => (body, rest.len()),
    };
    (text.to_owned(), i + used, text.matches('\n').count() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        tokenize(src).into_iter().filter_map(|t| t.ident().map(str::to_owned)).collect()
    }

    #[test]
    fn comments_directives_and_literals_hide_their_contents() {
        let src = "#include <a.h>\n#define X(a) \\\n  foo(a) {\n// bar() {\n/* baz() { */ int q = 'x'; const char* s = \"qux() {\"; auto r = R\"d(raw() {)d\";\nint f();";
        assert_eq!(idents(src), ["int", "q", "const", "char", "s", "auto", "r", "int", "f"]);
        let lines: Vec<u32> = tokenize(src).iter().filter(|t| t.is_ident("f")).map(|t| t.line).collect();
        assert_eq!(lines, [6]);
    }

    #[test]
    fn crlf_sources_and_their_continuations() {
        let src = "#define X(a) \\\r\n  foo(a) {\r\n// c \\\r\n bar() {\r\nint f();\r\n";
        assert_eq!(idents(src), ["int", "f"]);
        assert_eq!(tokenize(src).iter().find(|t| t.is_ident("f")).map(|t| t.line), Some(5));
    }

    #[test]
    fn strings_keep_their_text_and_scope_punctuation_is_one_token() {
        let t = tokenize("m.def(\"relu\", &a::b);");
        assert!(matches!(&t[4].tok, Tok::Str(s) if s == "relu"));
        assert!(t.iter().any(|t| t.is_punct("::")));
    }
}
