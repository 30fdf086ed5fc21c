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
//!
//! A pattern the `regex` crate runs alone is linear per *search*, not per
//! text: an alternative that reads a long stretch before failing, ahead of
//! a short one that matches (`a+$|.`, `(a+)+$|.`, `a+b|.` on a run of `a`s),
//! is read again from every position, quadratic in the stretch. Such
//! patterns search with a lazy DFA of our own (`regex_automata::hybrid`,
//! the engine the `regex` crate uses for them) whose caches count the bytes
//! each search reads; a text may read at most `SCAN_PER_BYTE` bytes per
//! byte of text plus `SCAN_BUDGET`, past which encoding is a
//! `Error::Pattern` naming the pattern.

use crate::error::{Error, Result};
use fancy_regex::{Expr, Regex, RegexBuilder};
use regex_automata::hybrid::regex::{Cache as DfaCache, Regex as DfaRegex};
use regex_automata::util::pool::Pool;
use regex_automata::Input;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

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
/// Bytes the lazy DFA may read per byte of text (forward and reverse
/// searches together); published patterns read one to three.
pub(crate) const SCAN_PER_BYTE: usize = 64;
/// Bytes any text may read on top of `SCAN_PER_BYTE` per byte.
pub(crate) const SCAN_BUDGET: usize = 1 << 20;
/// Memory of one lazy DFA cache (the `regex` crate's default is 2 MiB).
const DFA_CACHE_BYTES: usize = 8 << 20;

type CacheFn = Box<dyn Fn() -> DfaCache + Send + Sync + UnwindSafe + RefUnwindSafe>;

/// A pattern without backtracking features, searched by a lazy DFA whose
/// caches (one per thread at a time, from the pool) count what it reads.
struct Counted {
    re: Arc<DfaRegex>,
    caches: Pool<DfaCache, CacheFn>,
}

impl std::fmt::Debug for Counted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counted(..)")
    }
}

impl Counted {
    /// `None` when the lazy DFA cannot take the pattern (fancy-regex
    /// syntax the `regex` crate lacks): it then runs uncounted.
    fn new(pattern: &str) -> Option<Counted> {
        use regex_automata::hybrid::dfa;
        let re = DfaRegex::builder()
            .dfa(
                dfa::Config::new()
                    .cache_capacity(DFA_CACHE_BYTES)
                    .unicode_word_boundary(true)
                    .minimum_cache_clear_count(None),
            )
            .build(pattern)
            .ok()?;
        let re = Arc::new(re);
        let re2 = Arc::clone(&re);
        let make: CacheFn = Box::new(move || re2.create_cache());
        Some(Counted { re, caches: Pool::new(make) })
    }
}

/// A regex whose matching over a text is bounded: a pattern the `regex`
/// crate can run searches with a counting lazy DFA (`Counted`) and a budget
/// of bytes read proportional to the text; a backtracking one is checked
/// at load (`check`) and searched with a budget of backtracking steps
/// proportional to the text. Exceeding either is an `Error::Pattern`,
/// never a hang. (Not counted: what the backtracking VM's calls into the
/// `regex` crate read; see docs/decisions.md.)
#[derive(Debug, Clone)]
pub struct GuardedRegex {
    tiers: Vec<Regex>,
    counted: Option<Arc<Counted>>,
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
        let counted = if backtracking { None } else { Counted::new(pattern).map(Arc::new) };
        Ok(GuardedRegex { tiers, counted })
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
        if let Some(counted) = &self.counted {
            return self.for_each_counted(counted, text, f);
        }
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
            if advance(text, (s, e), &mut pos, &mut last_match) {
                f(s, e);
            }
        }
        Ok(())
    }
}

impl GuardedRegex {
    /// `for_each_match` of a pattern the lazy DFA runs: every search's
    /// bytes read (forward, to where the DFA dies, and back to the match
    /// start) are charged to a budget of `SCAN_PER_BYTE` per byte of text
    /// plus `SCAN_BUDGET`.
    fn for_each_counted(&self, counted: &Counted, text: &str, mut f: impl FnMut(usize, usize)) -> Result<()> {
        let budget = (SCAN_BUDGET as u64) + (SCAN_PER_BYTE as u64) * (text.len() as u64);
        let mut cache = counted.caches.get();
        let mut spent: u64 = 0;
        let mut pos = 0;
        let mut last_match: Option<usize> = None;
        while pos <= text.len() {
            let read_before = read(&cache);
            let found = match counted.re.try_search(&mut cache, &Input::new(text).range(pos..)) {
                Ok(m) => {
                    let after = read(&cache);
                    // a cache cleared during the search restarted its count: charge what it still holds
                    spent += if after.1 == read_before.1 { after.0.saturating_sub(read_before.0) } else { after.0 };
                    m.map(|m| (m.start(), m.end()))
                }
                // the lazy DFA quits on a Unicode word boundary next to a non-ASCII byte: this
                // search runs in fancy-regex (the `regex` crate's other engines), charged to the match end
                Err(_) => {
                    let m = self.tiers[0].find_from_pos(text, pos).map_err(|e| {
                        Error::Pattern(format!("the regex {:?} failed: {e}", shorten(self.as_str())))
                    })?;
                    let m = m.map(|m| (m.start(), m.end()));
                    spent += (m.map_or(text.len(), |m| m.1) - pos + 1) as u64;
                    m
                }
            };
            if spent > budget {
                return Err(Error::Pattern(format!(
                    "the regex {:?} reads too much of a text of {} bytes (over {} bytes read by its \
                     searches, {SCAN_PER_BYTE} per byte: an alternative reads far ahead and fails, then \
                     a later one matches, at every position); it is refused rather than left to run for \
                     a time that grows with the square of the text",
                    shorten(self.as_str()),
                    text.len(),
                    budget
                )));
            }
            let Some((s, e)) = found else { break };
            if advance(text, (s, e), &mut pos, &mut last_match) {
                f(s, e);
            }
        }
        Ok(())
    }
}

/// Moves `pos` past the match `(s, e)` as `find_iter` does (one character
/// past an empty match) and says whether to report it: an empty match right
/// where the previous match ended is not reported.
fn advance(text: &str, (s, e): (usize, usize), pos: &mut usize, last_match: &mut Option<usize>) -> bool {
    if s == e {
        *pos = text[e..].chars().next().map_or(text.len() + 1, |c| e + c.len_utf8());
        if *last_match == Some(e) {
            return false;
        }
    } else {
        *pos = e;
    }
    *last_match = Some(e);
    true
}

/// Bytes read so far by a lazy DFA cache (forward plus reverse) and how
/// many times its two parts were cleared (a clear restarts the count).
fn read(cache: &DfaCache) -> (u64, usize) {
    let (fwd, rev) = cache.as_parts();
    ((fwd.search_total_len() + rev.search_total_len()) as u64, fwd.clear_count() + rev.clear_count())
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

    /// Bytes one text reads through the counted engine, or the error.
    fn scanned(p: &str, text: &str) -> std::result::Result<usize, Error> {
        let g = GuardedRegex::new(p, "test").unwrap();
        let counted = g.counted.as_ref().expect("the lazy DFA takes the pattern");
        let before = read(&counted.caches.get()).0;
        g.for_each_match(text, |_, _| {})?;
        let after = read(&counted.caches.get()).0;
        Ok((after - before) as usize)
    }

    #[test]
    fn counted_matches_equal_find_iter() {
        for p in [r"(a+)+$|[\s\S]", r"a+b|.", r"\w+|[^\w\s]+|\s+", r"a*", r"\b\w+\b|\s+", r"(?i)Ab+|é|$", r"x?"] {
            let re = Regex::new(p).unwrap();
            let g = GuardedRegex::new(p, "test").unwrap();
            assert!(g.counted.is_some(), "{p}");
            for text in ["", "a", "ab  ba", "aab bb  x ", "héllo wörld 123  \n\n x", "bbb", "aaaa", "ééAbbé"] {
                let want: Vec<_> = re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect();
                assert_eq!(matches(p, text), want, "{p:?} on {text:?}");
            }
        }
    }

    #[test]
    fn quadratic_alternations_are_bounded() {
        // each search reads the run of a's to its end before `.` wins: quadratic, refused once over budget
        let run = "a".repeat(1 << 20);
        let tail = format!("{run}b");
        for (p, text) in [(r"(a+)+$|.", &tail), (r"a+$|.", &tail), (r"a+b|[\s\S]", &run), (r"(?:a|b)+c|a", &run)] {
            let err = scanned(p, text).unwrap_err();
            assert!(matches!(&err, Error::Pattern(m) if m.contains("reads too much") && m.contains(&p[..3])), "{err:?}");
        }
        // linear patterns read about the text once (forward, then back over each match)
        let text = "hello world  123 ".repeat(1 << 14);
        let n = scanned(r"\s+|\w+|[^\w\s]+", &text).unwrap();
        assert!(n <= 3 * text.len(), "{n} bytes read for {}", text.len());
        // where the long alternative matches, it is read once
        let n = scanned(r"(a+)+$|.", &run).unwrap();
        assert!(n <= 3 * run.len(), "{n} bytes read for {}", run.len());
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
