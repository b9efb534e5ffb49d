//! The C++ types a custom op may take and return, mapped to argument
//! kinds (SPEC §6, §11): `Tensor`, `Scalar` (torch/at/c10 spellings), by
//! value, `const&` or `&`; `double`, `float`, `int`, `int64_t`, `long`,
//! `long long`, by value or `const&`.

use super::lexer::{Tok, Token};
use crate::schema::{ArgKind, Param};

/// Why a type was refused: the type as written.
#[derive(Debug)]
pub struct Unsupported(pub String);

/// Spells tokens back as C++ (for messages).
pub fn spell(toks: &[Token]) -> String {
    let mut s = String::new();
    for t in toks {
        let w = match &t.tok {
            Tok::Ident(i) | Tok::Num(i) => i.clone(),
            Tok::Str(x) => format!("\"{x}\""),
            Tok::Punct(p) => (*p).to_owned(),
            Tok::Char => "'.'".to_owned(),
        };
        let glue =
            matches!(&t.tok, Tok::Punct("::" | "&" | "&&" | "*" | "," | ">" | ")" | "<" | "(")) || s.ends_with("::") || s.ends_with('<') || s.ends_with('(');
        if !s.is_empty() && !glue {
            s.push(' ');
        }
        s.push_str(&w);
    }
    s
}

/// The base of a type with qualifiers removed, as a canonical name.
fn base(words: &[String]) -> Option<&'static str> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    Some(match w.as_slice() {
        ["torch", "::", "Tensor"] | ["at", "::", "Tensor"] | ["Tensor"] | ["::", "torch", "::", "Tensor"] | ["::", "at", "::", "Tensor"] => "torch::Tensor",
        ["torch", "::", "Scalar"] | ["at", "::", "Scalar"] | ["c10", "::", "Scalar"] | ["Scalar"] | ["::", "c10", "::", "Scalar"] => "torch::Scalar",
        ["double"] => "double",
        ["float"] => "float",
        ["int"] | ["signed"] | ["signed", "int"] => "int",
        ["int64_t"] | ["std", "::", "int64_t"] | ["::", "int64_t"] => "int64_t",
        ["long"] | ["long", "int"] | ["signed", "long"] => "long",
        ["long", "long"] | ["long", "long", "int"] | ["signed", "long", "long"] => "long long",
        _ => return None,
    })
}

/// Splits a parameter's tokens into the type's words, whether it is
/// `const`, its reference marker, and drops the parameter name.
fn split(toks: &[Token]) -> (Vec<String>, bool, Option<&'static str>) {
    let mut words = Vec::new();
    let mut is_const = false;
    let mut reference = None;
    for t in toks {
        match &t.tok {
            Tok::Ident(w) if w == "const" => is_const = true,
            Tok::Ident(w) => words.push(w.clone()),
            Tok::Punct(p @ ("&" | "&&" | "*" | "::" | "<" | ">" | "," | "[" | "]")) => {
                if matches!(*p, "&" | "&&" | "*") {
                    // A second marker (`T*&`) is kept as unsupported.
                    reference = Some(if reference.is_some() { "*" } else { p });
                } else {
                    words.push((*p).to_owned());
                }
            }
            _ => words.push(spell(std::slice::from_ref(t))),
        }
    }
    // The name: a last identifier after a complete type (`int x`,
    // `torch::Tensor t`), never the only word nor a qualified name's end.
    let type_words = ["int", "long", "short", "signed", "unsigned", "double", "float", "char", "bool"];
    if words.len() >= 2 {
        let last = words.len() - 1;
        let is_ident = words[last].chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_ident && words[last - 1] != "::" && !type_words.contains(&words[last].as_str()) {
            words.pop();
        }
    }
    (words, is_const, reference)
}

/// The kind and canonical declaration spelling of a parameter.
pub fn param(toks: &[Token]) -> Result<Param, Unsupported> {
    let (words, is_const, reference) = split(toks);
    let refused = || Unsupported(spell(toks));
    let b = base(&words).ok_or_else(refused)?;
    let kind = match b {
        "torch::Tensor" => ArgKind::Tensor,
        "torch::Scalar" => ArgKind::Scalar,
        "double" => ArgKind::Double,
        "float" => ArgKind::Float,
        "int" => ArgKind::Int,
        _ => ArgKind::LongLong,
    };
    let class = matches!(kind, ArgKind::Tensor | ArgKind::Scalar);
    let cpp_type = match (reference, is_const) {
        (None, _) => b.to_owned(),
        (Some("&"), true) => format!("const {b}&"),
        // A mutable reference binds the wrapper's local: fine for classes.
        (Some("&"), false) if class => format!("{b}&"),
        _ => return Err(refused()),
    };
    Ok(Param { kind, cpp_type })
}

/// Whether a return type is one tensor by value.
pub fn returns_tensor(ret: &[Token]) -> bool {
    let (words, _, reference) = split(ret);
    reference.is_none() && base(&words) == Some("torch::Tensor")
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn p(s: &str) -> Result<(ArgKind, String), String> {
        param(&tokenize(s)).map(|p| (p.kind, p.cpp_type)).map_err(|e| e.0)
    }

    #[test]
    fn the_documented_kinds_map() {
        assert_eq!(p("const torch::Tensor& t_in").unwrap(), (ArgKind::Tensor, "const torch::Tensor&".into()));
        assert_eq!(p("at::Tensor t").unwrap(), (ArgKind::Tensor, "torch::Tensor".into()));
        assert_eq!(p("Tensor& t").unwrap(), (ArgKind::Tensor, "torch::Tensor&".into()));
        assert_eq!(p("torch::Tensor").unwrap(), (ArgKind::Tensor, "torch::Tensor".into()));
        assert_eq!(p("const c10::Scalar &s").unwrap(), (ArgKind::Scalar, "const torch::Scalar&".into()));
        assert_eq!(p("double alpha").unwrap(), (ArgKind::Double, "double".into()));
        assert_eq!(p("const int64_t n").unwrap(), (ArgKind::LongLong, "int64_t".into()));
        assert_eq!(p("long long").unwrap(), (ArgKind::LongLong, "long long".into()));
        assert_eq!(p("long long n").unwrap(), (ArgKind::LongLong, "long long".into()));
        assert_eq!(p("long n").unwrap(), (ArgKind::LongLong, "long".into()));
        assert_eq!(p("int").unwrap(), (ArgKind::Int, "int".into()));
        assert_eq!(p("float f").unwrap(), (ArgKind::Float, "float".into()));
    }

    #[test]
    fn other_kinds_are_refused_as_written() {
        assert_eq!(p("bool flag").unwrap_err(), "bool flag");
        assert_eq!(p("std::vector<float> v").unwrap_err(), "std::vector<float> v");
        assert!(p("unsigned n").is_err());
        assert!(p("torch::Tensor* t").is_err());
        assert!(p("torch::Tensor&& t").is_err());
        assert!(p("int& n").is_err());
    }

    #[test]
    fn only_a_tensor_by_value_is_a_tensor_return() {
        assert!(returns_tensor(&tokenize("torch::Tensor")));
        assert!(returns_tensor(&tokenize("at::Tensor")));
        assert!(!returns_tensor(&tokenize("void")));
        assert!(!returns_tensor(&tokenize("std::tuple<torch::Tensor, torch::Tensor>")));
        assert!(!returns_tensor(&tokenize("torch::Tensor&")));
    }
}
