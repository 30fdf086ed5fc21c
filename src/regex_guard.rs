//! Load-time refusal of regexes that can backtrack catastrophically
//! (issue 17; see docs/decisions.md, "Hostile files").
//!
//! fancy-regex hands a pattern without lookaround, backreferences, atomic
//! groups or possessive quantifiers to the `regex` crate, whose matching is
//! linear in the text: `(a+)+$` is harmless there. A pattern with one of
//! those features runs in fancy-regex's backtracking VM, whose
//! `backtrack_limit` bounds the work of *one* search (one match) but not the
//! sum over a text: a pattern such as `(?:(?=a)a+)+(?=b)|[\s\S]` spends just
//! under the limit at every position and encodes 1 MB in minutes. Such
//! patterns are refused when the tokenizer is built: in a backtracking
//! pattern, a repetition of more than one item must not contain a choice (a
//! variable repetition or an alternation) outside an atomic group. Every
//! published pre-tokenizer pattern (GPT-2, cl100k, o200k, Llama 3, Qwen,
//! DeepSeek, Tekken) is a repetition of character classes and passes.

use crate::error::{Error, Result};
use fancy_regex::{Expr, Regex, RegexBuilder};

/// Backtracking steps one search may take (fancy-regex's limit), the last
/// of the tiers below.
pub(crate) const BACKTRACK_LIMIT: usize = 1_000_000;
/// A backtracking pattern searches with these limits in turn: a search that
/// fails at one limit is run again at the next (their sum is at most twice
/// the last), and each limit tried is charged to the text's budget.
const TIERS: [usize; 4] = [64, 4_096, 131_072, BACKTRACK_LIMIT];
/// The budget of backtracking steps for a text: this many per byte, plus
/// one search at the full limit. Every text costs at most this (x2 for the
/// retries), so encoding stays linear in the text whatever the pattern.
pub(crate) const BUDGET_PER_BYTE: usize = 256;

/// A regex whose matching over a text is bounded: a pattern the `regex`
/// crate can run (linear time) is used as it is; a backtracking one is
/// checked at load (`check`) and searched with a budget proportional to the
/// text. Exceeding it is an `Error::Pattern`, never a hang.
#[derive(Debug, Clone)]
pub struct GuardedRegex {
    tiers: Vec<Regex>,
}

impl GuardedRegex {
    /// Compiles `pattern` (`what` says where it comes from, for errors).
    pub fn new(pattern: &str, what: &str) -> Result<GuardedRegex> {
        check(pattern, what)?;
        let build = |limit: usize| {
            RegexBuilder::new(pattern)
                .backtrack_limit(limit)
                .build()
                .map_err(|e| Error::Pattern(format!("{what}: invalid regex {:?}: {e}", shorten(pattern))))
        };
        let backtracking = Expr::parse_tree(pattern).map(|t| needs_backtracking(&t.expr)).unwrap_or(false);
        let tiers = if backtracking {
            TIERS.iter().map(|&l| build(l)).collect::<Result<_>>()?
        } else {
            vec![build(BACKTRACK_LIMIT)?]
        };
        Ok(GuardedRegex { tiers })
    }

    pub(crate) fn as_str(&self) -> &str {
        self.tiers[0].as_str()
    }

    /// Calls `f(start, end)` on every match in `text`, as fancy-regex's
    /// `find_iter` (an empty match right after a match is skipped).
    pub(crate) fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) -> Result<()> {
        let too_much = |why: &str| {
            Error::Pattern(format!(
                "the regex {:?} backtracks too much on a text of {} bytes ({why}); it is refused rather than \
                 left to run for minutes",
                shorten(self.as_str()),
                text.len()
            ))
        };
        if self.tiers.len() == 1 {
            for m in self.tiers[0].find_iter(text) {
                let m = m.map_err(|e| too_much(&e.to_string()))?;
                f(m.start(), m.end());
            }
            return Ok(());
        }
        let budget = (BACKTRACK_LIMIT as u64) + (BUDGET_PER_BYTE as u64) * (text.len() as u64);
        let mut spent: u64 = 0;
        let mut pos = 0;
        let mut last_match: Option<usize> = None;
        while pos <= text.len() {
            let mut found = None;
            for (k, re) in self.tiers.iter().enumerate() {
                spent += TIERS[k] as u64;
                if spent > budget {
                    return Err(too_much(&format!(
                        "over its budget of {BUDGET_PER_BYTE} backtracking steps per byte"
                    )));
                }
                match re.find_from_pos(text, pos) {
                    Ok(m) => {
                        found = Some(m.map(|m| (m.start(), m.end())));
                        break;
                    }
                    Err(fancy_regex::Error::RuntimeError(fancy_regex::RuntimeError::BacktrackLimitExceeded))
                        if k + 1 < self.tiers.len() => {}
                    Err(e) => {
                        return Err(too_much(&format!("{e}, limit {BACKTRACK_LIMIT} steps for one match")))
                    }
                }
            }
            let Some((s, e)) = found.flatten() else { break };
            if s == e {
                pos = text[e..].chars().next().map_or(text.len() + 1, |c| e + c.len_utf8());
                if last_match == Some(e) {
                    continue;
                }
            } else {
                pos = e;
            }
            last_match = Some(e);
            f(s, e);
        }
        Ok(())
    }
}

/// Whether the pattern needs fancy-regex's backtracking VM.
fn needs_backtracking(e: &Expr) -> bool {
    match e {
        Expr::LookAround(..)
        | Expr::Backref { .. }
        | Expr::BackrefWithRelativeRecursionLevel { .. }
        | Expr::AtomicGroup(_)
        | Expr::KeepOut
        | Expr::ContinueFromPreviousMatchEnd
        | Expr::BackrefExistsCondition { .. }
        | Expr::Conditional { .. }
        | Expr::SubroutineCall(_)
        | Expr::BacktrackingControlVerb(_)
        | Expr::Absent(_)
        | Expr::DefineGroup { .. } => true,
        _ => e.children_iter().any(needs_backtracking),
    }
}

/// Whether matching `e` involves a choice the VM may revisit.
fn has_choice(e: &Expr) -> bool {
    match e {
        // zero-width and atomic in fancy-regex: a choice inside does not change what the repetition consumes
        Expr::AtomicGroup(_) | Expr::LookAround(..) => false,
        Expr::Repeat { lo, hi, .. } if hi > lo => true,
        Expr::Alt(items) if items.len() > 1 => true,
        // a subroutine call or conditional can re-enter anything
        Expr::SubroutineCall(_) | Expr::Conditional { .. } | Expr::BackrefExistsCondition { .. } => true,
        _ => e.children_iter().any(has_choice),
    }
}

/// A repetition (of more than one item) around a choice, outside atomic groups.
fn nested_repetition(e: &Expr) -> bool {
    match e {
        Expr::AtomicGroup(_) => false,
        Expr::Repeat { child, hi, .. } if *hi > 1 => has_choice(child) || nested_repetition(child),
        _ => e.children_iter().any(nested_repetition),
    }
}

/// `Err(Error::Pattern)` for a pattern that may backtrack catastrophically
/// (`what` says where it comes from). Patterns that do not parse are left to
/// the compiler, which gives the syntax error.
pub(crate) fn check(pattern: &str, what: &str) -> Result<()> {
    let Ok(tree) = Expr::parse_tree(pattern) else { return Ok(()) };
    if needs_backtracking(&tree.expr) && nested_repetition(&tree.expr) {
        return Err(Error::Pattern(format!(
            "{what}: the regex {:?} may backtrack catastrophically (a repeated group holds another \
             repetition or an alternation, and lookaround, a backreference or a possessive/atomic group \
             needs the backtracking engine); refused at load",
            shorten(pattern)
        )));
    }
    Ok(())
}

fn shorten(p: &str) -> String {
    if p.chars().count() <= 200 {
        p.to_string()
    } else {
        p.chars().take(200).chain("...".chars()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::{CL100K, GPT2};

    fn matches(p: &str, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        GuardedRegex::new(p, "test").unwrap().for_each_match(text, |s, e| out.push((s, e))).unwrap();
        out
    }

    #[test]
    fn guarded_matches_equal_find_iter() {
        for p in [r"\s+(?!\S)|\s+|\w+|[^\w\s]+", r"(?=a)|b", r"a*(?!x)", r"\b", r"(?<=a)b*", CL100K] {
            let re = Regex::new(p).unwrap();
            for text in ["", "a", "ab  ba", "aab bb  x ", "héllo wörld 123  \n\n x", "bbb"] {
                let want: Vec<_> = re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect();
                assert_eq!(matches(p, text), want, "{p:?} on {text:?}");
            }
        }
    }

    #[test]
    fn polynomial_backtracking_is_bounded() {
        let g = GuardedRegex::new(r"a*a*a*a*(?=b)|[\s\S]", "test").unwrap();
        let text = format!("{}c", "a".repeat(300)).repeat(300);
        assert!(matches!(g.for_each_match(&text, |_, _| {}), Err(Error::Pattern(_))));
    }

    #[test]
    fn published_patterns_pass() {
        for p in [
            GPT2,
            CL100K,
            crate::pipeline::pre_tokenizer::HF_BYTE_LEVEL_REGEX,
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        ] {
            check(p, "test").unwrap();
        }
    }

    #[test]
    fn catastrophic_patterns_are_refused() {
        for p in [r"(?:(?=a)a+)+(?=b)", r"(?:a|(?=a)a)+(?=b)", r"(a+)+\1b", r"((?=a)a+)+(?!a)b", r"(?:a*b?)*(?!x)"] {
            assert!(matches!(check(p, "test"), Err(Error::Pattern(_))), "{p}");
        }
        // the regex crate runs these in linear time
        for p in [r"(a+)+$", r"(a|a)*b", r"(?:(?>a+))+(?=b)", r"(?:(?!(?:ab|c+))[\s\S])+"] {
            check(p, "test").unwrap();
        }
    }
}
