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
//!
//! What the VM does not count (the reads of the sub-patterns it hands to the
//! `regex` crate, the work of lookaround and atomic bodies that succeeded)
//! is bounded at load: `check_vm` refuses a pattern where such a piece can
//! match unbounded text (bytepair's vetted presets excepted). Alternations
//! ending `\s+(?!\S)|\s+`, and possessive runs that never give back, are
//! rewritten exactly (`rewrite`, `drop_atomics`) to run in the lazy DFA.

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

    /// The alternatives of a rewritten pattern (`Rewrite`), one pattern id
    /// each, tried in order as an alternation is. `None` when the lazy DFA
    /// cannot take them without quitting (a Unicode word boundary): such a
    /// pattern keeps the backtracking route.
    fn new_many(branches: &[String]) -> Option<Counted> {
        use regex_automata::hybrid::dfa;
        let re = DfaRegex::builder()
            .dfa(dfa::Config::new().cache_capacity(DFA_CACHE_BYTES).minimum_cache_clear_count(None))
            .build_many(branches)
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
/// never a hang. What the VM does not count (its calls into the `regex`
/// crate, lookaround and atomic bodies) is bounded at load (`check_vm`),
/// and `C+(?!D)|C+` alternations skip the VM (`rewrite`).
#[derive(Debug, Clone)]
pub struct GuardedRegex {
    tiers: Vec<Regex>,
    counted: Option<Arc<Counted>>,
    /// Per pattern id of `counted`: whether a match gives back its last
    /// character unless it is a single character or ends the text (the
    /// `C+(?!D)` alternatives of `rewrite`).
    trims: Vec<bool>,
}

impl GuardedRegex {
    /// Compiles `pattern` (`what` says where it comes from, for errors).
    pub fn new(pattern: &str, what: &str) -> Result<GuardedRegex> {
        let build = |limit: usize| {
            // fancy-regex panics on some constructs it parses but cannot hand to its inner engine (`\R` in a
            // backtracking pattern): a refusal, never a panic across the FFI
            match std::panic::catch_unwind(|| RegexBuilder::new(pattern).backtrack_limit(limit).build()) {
                Ok(built) => {
                    built.map_err(|e| Error::Pattern(format!("{what}: invalid regex {:?}: {e}", shorten(pattern))))
                }
                Err(_) => Err(Error::Pattern(format!(
                    "{what}: unsupported regex {:?}: fancy-regex cannot compile it",
                    shorten(pattern)
                ))),
            }
        };
        let backtracking = Expr::parse_tree(pattern).map(|t| needs_backtracking(&t.expr)).unwrap_or(false);
        // `\s+(?!\S)|\s+` and its kin run without the backtracking VM (see `rewrite`)
        let rewritten = if backtracking {
            rewrite(pattern).and_then(|(branches, trims)| Some((Counted::new_many(&branches)?, trims)))
        } else {
            None
        };
        if let Some((counted, trims)) = rewritten {
            // every search runs in the counted lazy DFA, where a repetition inside a repetition costs nothing
            // more (EXAONE MoE's letter runs); the VM only searches where that DFA quits, on a Unicode word
            // boundary, so a pattern that may have one is checked as the VM's patterns are
            if pattern.contains(r"\b") || pattern.contains(r"\B") {
                check(pattern, what)?;
            }
            return Ok(GuardedRegex { tiers: vec![build(BACKTRACK_LIMIT)?], counted: Some(Arc::new(counted)), trims });
        }
        check(pattern, what)?;
        if backtracking {
            check_vm(pattern, what)?;
        }
        let tiers = if backtracking {
            TIERS.iter().map(|&l| build(l)).collect::<Result<_>>()?
        } else {
            vec![build(BACKTRACK_LIMIT)?]
        };
        let counted = if backtracking { None } else { Counted::new(pattern).map(Arc::new) };
        Ok(GuardedRegex { tiers, counted, trims: Vec::new() })
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
                    m.map(|m| {
                        let (s, mut e) = (m.start(), m.end());
                        if self.trims.get(m.pattern().as_usize()) == Some(&true) && e < text.len() {
                            // `C+(?!D)`: the run of C ends before a character of D, so the lookahead
                            // fails there and holds one character back (if the run has two)
                            let last = text[s..e].chars().next_back().map_or(0, char::len_utf8);
                            if e - last > s {
                                e -= last;
                            }
                        }
                        (s, e)
                    })
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
        | Expr::DefineGroup { .. }
        // hard in fancy-regex too (its VM runs them), and its `Expr::to_str` cannot write them back as text
        | Expr::GeneralNewline { .. }
        | Expr::LiteralBytes { .. } => true,
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

/// The pattern without its lookaheads, when every alternative that needs
/// the backtracking VM is `C+(?!D)`, with `C` and `D` one-character classes
/// that are each other's complement, followed by the alternative `C+` (the
/// `\s+(?!\S)|\s+` of GPT-2, cl100k, o200k, Llama 3, Qwen, Tekken...).
/// Returns the alternatives, `C+(?!D)` written as `C+`, and which of them
/// give back their last character.
///
/// Why this is the same pattern: at a position where no earlier alternative
/// matches, let the longest run of `C` be `[s, q)`. Inside the run the next
/// character is in `C`, so not in `D`, and `(?!D)` holds; at `q < len` the
/// next character is not in `C`, so in `D`, and it fails. Greedy `C+(?!D)`
/// therefore matches `[s, q)` when `q` is the end of the text, else `[s, q)`
/// minus its last character when the run has two or more, else fails, and
/// then the next alternative `C+` matches `[s, q)`, the same words the
/// rewritten alternation gives after trimming. Where `C` does not match at
/// `s`, both fail there and the later alternatives decide, unchanged. So the
/// positions where the pattern matches, and each match, are the same.
/// fancy-regex runs `C+(?!D)` in its VM, pushing one backtracking entry per
/// character, and refuses a run of a million spaces ("max stack size
/// exceeded"); the rewritten alternation runs in the counted lazy DFA.
fn rewrite(pattern: &str) -> Option<(Vec<String>, Vec<bool>)> {
    use fancy_regex::LookAround;
    let tree = Expr::parse_tree(pattern).ok()?;
    let branches: Vec<&Expr> = match &tree.expr {
        Expr::Alt(v) => v.iter().collect(),
        e => vec![e],
    };
    let to_str = |e: &Expr| regex_text(e, 1);
    let mut out = Vec::with_capacity(branches.len());
    let mut trims = Vec::with_capacity(branches.len());
    for (i, b) in branches.iter().enumerate() {
        if !needs_backtracking(b) {
            out.push(to_str(b)?);
            trims.push(false);
            continue;
        }
        if let Some(e) = drop_atomics(b).filter(|e| !needs_backtracking(e)) {
            out.push(to_str(&e)?);
            trims.push(false);
            continue;
        }
        let Expr::Concat(parts) = b else { return None };
        let [run @ Expr::Repeat { child, lo: 1, hi: usize::MAX, greedy: true }, Expr::LookAround(body, LookAround::LookAheadNeg)] =
            parts.as_slice()
        else {
            return None;
        };
        let (c, d) = (one_char_class(child)?, one_char_class(body)?);
        let mut not_c = c.clone();
        not_c.negate();
        if d != not_c {
            return None;
        }
        let run = to_str(run)?;
        // the next alternative matches where `C+(?!D)` fails (a run of one `C` before a `D`): `C+` or `C`
        let next = branches.get(i + 1)?;
        if to_str(next)? != run && !(one_char_class(next).as_ref() == Some(&c) && max_len(next).is_some()) {
            return None;
        }
        out.push(run);
        trims.push(true);
    }
    Some((out, trims))
}

/// The alternative `b` without its atomic groups (possessive quantifiers),
/// when that changes none of its matches: an atomic group `(?>E)` in `b`'s
/// sequence only differs from `E` when what follows it fails and the VM
/// would try a shorter match of `E`. That never happens when what follows
/// always matches (each part can match empty: `[\r\n]*+`), nor when `E` is a
/// greedy run of one class `C` (`\p{L}++`, `X?+`) and what follows is the end
/// of the text (`\z`: a shorter run ends before a `C`, not at the end) or
/// starts with a class disjoint from `C` (`[^\r\n\p{L}\p{N}]?+\p{L}++`: a
/// shorter run ends before a `C`, where that cannot start). Gives the
/// possessive forms of GPT-2 and cl100k (tiktoken's, and bytepair's
/// tokenizer.json export of them) to the lazy DFA.
fn drop_atomics(b: &Expr) -> Option<Expr> {
    use fancy_regex::Assertion;
    let parts: Vec<&Expr> = match b {
        Expr::Concat(v) => v.iter().collect(),
        e => vec![e],
    };
    let mut out = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let Expr::AtomicGroup(inner) = p else {
            out.push((*p).clone());
            continue;
        };
        let inner: &Expr = inner;
        let rest = &parts[i + 1..];
        let run = greedy_class_run(inner);
        let ok = rest.iter().all(|r| always_matches(r))
            || (run.is_some() && matches!(rest, [Expr::Assertion(Assertion::EndText)]))
            || match (&run, rest.first()) {
                (Some(c), Some(k0)) => first_class(k0).is_some_and(|k| {
                    let mut both = k.clone();
                    both.intersect(c);
                    both.ranges().is_empty()
                }),
                _ => false,
            };
        if !ok {
            return None;
        }
        out.push(inner.clone());
    }
    Some(if out.len() == 1 { out.pop()? } else { Expr::Concat(out) })
}

/// Whether `e` can match the empty text at any position.
fn always_matches(e: &Expr) -> bool {
    match e {
        Expr::Empty => true,
        Expr::Repeat { lo: 0, .. } => true,
        Expr::Group(c) => always_matches(c),
        Expr::AtomicGroup(c) => always_matches(c),
        Expr::Concat(v) => v.iter().all(always_matches),
        Expr::Alt(v) => v.iter().any(always_matches),
        _ => false,
    }
}

/// `C` when `e` is a greedy repetition of the one-character class `C`.
fn greedy_class_run(e: &Expr) -> Option<regex_syntax::hir::ClassUnicode> {
    match e {
        Expr::Repeat { child, greedy: true, .. } => one_char_class(child),
        _ => None,
    }
}

/// The class every match of `e` starts with, for a class or a repetition
/// (at least once) of one, possibly atomic.
fn first_class(e: &Expr) -> Option<regex_syntax::hir::ClassUnicode> {
    match e {
        Expr::AtomicGroup(c) => first_class(c),
        Expr::Group(c) => first_class(c),
        Expr::Repeat { child, lo, .. } if *lo >= 1 => one_char_class(child),
        e => one_char_class(e),
    }
}

/// `e` written back as a pattern of the `regex` crate (`precedence` as in
/// fancy-regex's `Expr::to_str`), or None where fancy-regex runs `e` in its
/// VM: it writes back only what it hands to that crate, and panics on the
/// rest (`\R`), a panic kept from the FFI here in any case.
fn regex_text(e: &Expr, precedence: u8) -> Option<String> {
    if needs_backtracking(e) {
        return None;
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut s = String::new();
        e.to_str(&mut s, precedence);
        s
    }))
    .ok()
}

/// The code points `e` matches, when it is one character class (or escape).
fn one_char_class(e: &Expr) -> Option<regex_syntax::hir::ClassUnicode> {
    use regex_syntax::hir::{Class, HirKind};
    let s = regex_text(e, 3)?;
    match regex_syntax::Parser::new().parse(&s).ok()?.into_kind() {
        HirKind::Class(Class::Unicode(c)) => Some(c),
        HirKind::Literal(lit) => {
            let mut chars = std::str::from_utf8(&lit.0).ok()?.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else { return None };
            Some(regex_syntax::hir::ClassUnicode::new([regex_syntax::hir::ClassUnicodeRange::new(c, c)]))
        }
        _ => None,
    }
}

/// The longest text `e` can match, in bytes (`None`: unbounded or unknown).
fn max_len(e: &Expr) -> Option<usize> {
    max_len_or_reach(e, false)
}

/// With `reach`, lookaround bodies count too: a bound on how far from a
/// position matching `e` there may read.
fn max_len_or_reach(e: &Expr, reach: bool) -> Option<usize> {
    let max_len = |e: &Expr| max_len_or_reach(e, reach);
    match e {
        Expr::LookAround(body, _) if reach => max_len(body),
        Expr::Empty | Expr::Assertion(_) | Expr::LookAround(..) | Expr::KeepOut | Expr::ContinueFromPreviousMatchEnd => {
            Some(0)
        }
        Expr::Any { .. } => Some(4),
        // `\r\n`, or one newline character: U+2028 and U+2029 take 3 bytes
        Expr::GeneralNewline { unicode } => Some(if *unicode { 3 } else { 2 }),
        // a case-insensitive character may fold to one of another length (k, KELVIN SIGN)
        Expr::Literal { val, .. } => Some(4 * val.chars().count()),
        Expr::LiteralBytes { bytes } => Some(bytes.len()),
        Expr::Delegate { inner, casei } => {
            let p = if *casei { format!("(?i:{inner})") } else { inner.clone() };
            regex_syntax::Parser::new().parse(&p).ok()?.properties().maximum_len()
        }
        Expr::Concat(v) => v.iter().try_fold(0usize, |acc, c| acc.checked_add(max_len(c)?)),
        Expr::Alt(v) => v.iter().try_fold(0usize, |acc, c| Some(acc.max(max_len(c)?))),
        Expr::Group(c) => max_len(c),
        Expr::AtomicGroup(c) => max_len(c),
        Expr::Repeat { child, hi, .. } => {
            if *hi == usize::MAX {
                if max_len(child)? == 0 { Some(0) } else { None }
            } else {
                max_len(child)?.checked_mul(*hi)
            }
        }
        _ => None,
    }
}

/// The first place where fancy-regex's VM would run a piece of unbounded
/// length whose work it does not count (mirrors fancy-regex 0.20's compiler:
/// `visit`, `compile_concat`, `compile_repeat`, lookaround and atomic
/// bodies): a sub-expression handed to the `regex` crate ("delegated",
/// which reads as far as its automaton lives, uncounted), or the body of a
/// lookaround or atomic group (whose backtracking entries are dropped when
/// it succeeds, uncounted). `hard` is true where something after `e` may
/// backtrack into it (the VM then runs `e` itself).
fn unbounded_vm_piece(e: &Expr, hard: bool) -> Option<&Expr> {
    let bounded = |x: &'_ Expr| max_len(x).is_some();
    if !hard && !needs_backtracking(e) {
        return if bounded(e) { None } else { Some(e) };
    }
    if !needs_backtracking(e) {
        // run by the VM itself: it delegates only pieces of constant size here
        return None;
    }
    match e {
        Expr::Concat(children) => {
            let suffix = if hard { 0 } else { children.iter().rev().take_while(|c| !needs_backtracking(c)).count() };
            let split = children.len() - suffix;
            children[..split]
                .iter()
                .find_map(|c| unbounded_vm_piece(c, true))
                .or_else(|| children[split..].iter().find(|c| !bounded(c)))
        }
        Expr::Alt(children) => children.iter().find_map(|c| unbounded_vm_piece(c, hard)),
        Expr::Group(c) => unbounded_vm_piece(c, hard),
        // fancy-regex compiles `e?` in the incoming context, other repetitions in a hard one
        Expr::Repeat { child, lo: 0, hi: 1, .. } => unbounded_vm_piece(child, hard),
        Expr::Repeat { child, .. } => unbounded_vm_piece(child, true),
        Expr::LookAround(body, _) | Expr::AtomicGroup(body) => {
            if bounded(body) {
                None
            } else {
                Some(e)
            }
        }
        // backreferences, conditionals, subroutine calls...: only in a pattern of bounded length
        _ => None,
    }
}

/// Patterns of the library's own presets that the VM runs with unbounded
/// lookahead or atomic bodies, checked by hand (docs/decisions.md, "Backtracking
/// patterns: what the VM may run"): each lookahead body's reads stop where
/// the body matches, and there the repetition around it stops too. Must
/// equal `GPT2`, `CL100K`, `DEEPSEEK` and `SUPERBPE` of python/bytepair/patterns.py
/// (tests/test_hostile_files.py loads each as a custom Split pattern).
pub(crate) const VETTED_VM_PATTERNS: [&str; 4] = [
    crate::pretok::patterns::GPT2,
    crate::pretok::patterns::CL100K,
    r##"\p{N}{1,3}|(?:(?=[一-龥぀-ゟ゠-ヿ])[^\r\n\p{L}\p{P}\p{S}])?(?:(?=[一-龥぀-ゟ゠-ヿ])[\p{L}\p{M}])+|(?:(?=[一-龥぀-ゟ゠-ヿ])[\p{P}\p{S}])+|(?:(?!(?:(?=[一-龥぀-ゟ゠-ヿ])[^\r\n\p{L}\p{P}\p{S}])?(?:(?=[一-龥぀-ゟ゠-ヿ])[\p{L}\p{M}])+|(?:(?=[一-龥぀-ゟ゠-ヿ])[\p{P}\p{S}])+)[一-龥぀-ゟ゠-ヿ])+|[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}\p{N}一-龥぀-ゟ゠-ヿ]?[^\p{N}\p{P}\p{S}\p{Z}\p{C}一-龥぀-ゟ゠-ヿ]+| ?[^\p{L}\p{M}\p{N}\p{Z}\p{C}一-龥぀-ゟ゠-ヿ]+[\r\n]*|\s*[\r\n]+|\s+(?![^\s\p{N}一-龥぀-ゟ゠-ヿ])|\s+|(?:(?!\p{N}|[一-龥぀-ゟ゠-ヿ]|[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}\p{N}一-龥぀-ゟ゠-ヿ]?[^\p{N}\p{P}\p{S}\p{Z}\p{C}一-龥぀-ゟ゠-ヿ]+| ?[^\p{L}\p{M}\p{N}\p{Z}\p{C}一-龥぀-ゟ゠-ヿ]+[\r\n]*|\s*[\r\n]+|\s+(?![^\s\p{N}一-龥぀-ゟ゠-ヿ])|\s+)[\s\S])+"##,
    r##"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)|(?:(?!\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S))[\s\S])+"##,
];

/// Whether `pattern` is a vetted preset, as written or as a `tokenizer.json`
/// Split holds it (`$` made multi-line, Oniguruma's meaning).
fn vetted(pattern: &str) -> bool {
    VETTED_VM_PATTERNS.iter().any(|v| *v == pattern || v.replace('$', "(?m:$)") == pattern)
}

/// `Err(Error::Pattern)` for a pattern the backtracking VM would run with
/// uncounted work that grows with the text (`unbounded_vm_piece`), unless
/// the whole pattern has a bounded length or is a vetted preset.
pub(crate) fn check_vm(pattern: &str, what: &str) -> Result<()> {
    let Ok(tree) = Expr::parse_tree(pattern) else { return Ok(()) };
    if !needs_backtracking(&tree.expr) || max_len_or_reach(&tree.expr, true).is_some() || vetted(pattern) {
        return Ok(());
    }
    let other = |e: &Expr| {
        matches!(e, Expr::LookAround(..) | Expr::AtomicGroup(_) | Expr::Group(_) | Expr::Concat(_) | Expr::Alt(_) | Expr::Repeat { .. })
            || !needs_backtracking(e)
    };
    fn exotic(e: &Expr, ok: &dyn Fn(&Expr) -> bool) -> bool {
        !ok(e) || e.children_iter().any(|c| exotic(c, ok))
    }
    let piece = if exotic(&tree.expr, &other) { Some(&tree.expr) } else { unbounded_vm_piece(&tree.expr, false) };
    if let Some(piece) = piece {
        let mut s = String::new();
        let shown = if std::ptr::eq(piece, &tree.expr) {
            pattern.to_string()
        } else {
            piece_str(piece, &mut s);
            s
        };
        return Err(Error::Pattern(format!(
            "{what}: the regex {:?} needs the backtracking engine (lookaround, a backreference, an atomic \
             group or \\R) and its part {:?} can match text of any length, which that engine would read again from \
             every position without counting it (time growing with the square of the text); refused at load. \
             Bound that part (e.g. {{0,100}} for + or *), or drop what needs that engine",
            shorten(pattern),
            shorten(&shown)
        )));
    }
    Ok(())
}

/// `to_str` of a piece that may be hard (lookaround and atomic groups are
/// written back in their syntax; anything else hard as `...`).
fn piece_str(e: &Expr, buf: &mut String) {
    use fancy_regex::LookAround::*;
    match e {
        Expr::LookAround(body, la) => {
            buf.push_str(match la {
                LookAhead => "(?=",
                LookAheadNeg => "(?!",
                LookBehind => "(?<=",
                LookBehindNeg => "(?<!",
            });
            piece_str(body, buf);
            buf.push(')');
        }
        Expr::AtomicGroup(body) => {
            buf.push_str("(?>");
            piece_str(body, buf);
            buf.push(')');
        }
        Expr::Concat(v) => v.iter().for_each(|c| piece_str(c, buf)),
        Expr::Alt(v) => {
            buf.push_str("(?:");
            for (i, c) in v.iter().enumerate() {
                if i > 0 {
                    buf.push('|');
                }
                piece_str(c, buf);
            }
            buf.push(')');
        }
        Expr::Group(c) => {
            buf.push('(');
            piece_str(c, buf);
            buf.push(')');
        }
        Expr::Repeat { child, lo, hi, greedy } => {
            buf.push_str("(?:");
            piece_str(child, buf);
            buf.push(')');
            let q = match (*lo, *hi) {
                (0, usize::MAX) => "*".to_string(),
                (1, usize::MAX) => "+".to_string(),
                (0, 1) => "?".to_string(),
                (l, usize::MAX) => format!("{{{l},}}"),
                (l, h) if l == h => format!("{{{l}}}"),
                (l, h) => format!("{{{l},{h}}}"),
            };
            buf.push_str(&q);
            if !greedy {
                buf.push('?');
            }
        }
        e if !needs_backtracking(e) => e.to_str(buf, 3),
        _ => buf.push_str("..."),
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
    use crate::pretok::patterns::{CL100K, GPT2};

    fn matches(p: &str, text: &str) -> Vec<(usize, usize)> {
        guarded_matches(&GuardedRegex::new(p, "test").unwrap(), text)
    }

    fn guarded_matches(g: &GuardedRegex, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        g.for_each_match(text, |s, e| out.push((s, e))).unwrap();
        out
    }

    #[test]
    fn guarded_matches_equal_find_iter() {
        for p in [r"\s+(?!\S)|\s+|\w+|[^\w\s]+", r"(?=a)|b", r"a*(?!x)", r"\b", r"(?<=a)b{0,9}", CL100K] {
            let re = Regex::new(p).unwrap();
            for text in ["", "a", "ab  ba", "aab bb  x ", "héllo wörld 123  \n\n x", "bbb"] {
                let want: Vec<_> = re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect();
                assert_eq!(matches(p, text), want, "{p:?} on {text:?}");
            }
        }
    }

    /// `\R` is hard for fancy-regex, which cannot write it back as text: it runs in the VM, and the rewrite of
    /// `C+(?!D)` leaves a pattern that holds it alone (it panicked there, and in `one_char_class`)
    #[test]
    fn general_newlines_match_as_in_fancy_regex() {
        let texts = ["", "a\r\nb", "x \r\n\n  y", "\u{2028}\u{85}\r\r\n", "ab  \u{2029} c\n"];
        let same_matches = |p: &str, g: &GuardedRegex| {
            let re = Regex::new(p).unwrap();
            for text in texts {
                let want: Vec<_> = re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect();
                let mut got = Vec::new();
                g.for_each_match(text, |s, e| got.push((s, e))).unwrap();
                assert_eq!(got, want, "{p:?} on {text:?}");
            }
        };
        for p in [r"\R", r"\R{2}|\w", r"(?i:\R)|a", r"[a\r]|\R"] {
            same_matches(p, &GuardedRegex::new(p, "test").unwrap());
        }
        // where rewriting `C+(?!D)` meets it: the same matches, or refused as the VM's unbounded patterns are
        for p in [r"\s+(?!\S)|\R", r"\s+(?!\S)|\s+|\R", r"\R+(?!\S)|\R", r"\s+(?!\S)|\s+|\R{2}"] {
            match GuardedRegex::new(p, "test") {
                Ok(g) => same_matches(p, &g),
                Err(e) => assert!(matches!(e, Error::Pattern(_)), "{p:?}: {e}"),
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
            crate::pretok::patterns::HF_BYTE_LEVEL_REGEX,
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
    #[test]
    fn nested_repetitions_run_in_the_lazy_dfa_when_the_lookahead_is_rewritten() {
        // EXAONE MoE's letter runs beside `\s+(?!\S)|\s+`: every search runs in the counted DFA
        let p = r"[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
        assert!(check(p, "test").is_err());
        let re = GuardedRegex::new(p, "test").unwrap();
        assert!(re.counted.is_some());
        let text = "ab cd\u{301} e  f ".repeat(20_000) + &"a ".repeat(100_000);
        let mut got = Vec::new();
        re.for_each_match(&text, |s, e| got.push((s, e))).unwrap();
        assert_eq!(got, find_iter(p, &text));
        // where the DFA may quit (a word boundary), the VM would search: still refused
        assert!(GuardedRegex::new(&format!(r"\b(?:a*b?)*|{p}"), "test").is_err());
    }

    fn find_iter(p: &str, text: &str) -> Vec<(usize, usize)> {
        unguarded_matches(&unguarded(p), text)
    }

    /// fancy-regex without a backtrack limit: the oracle of the guarded scan
    fn unguarded(p: &str) -> Regex {
        RegexBuilder::new(p).backtrack_limit(usize::MAX).build().unwrap()
    }

    fn unguarded_matches(re: &Regex, text: &str) -> Vec<(usize, usize)> {
        re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect()
    }

    const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    #[test]
    fn rewritten_lookaheads_equal_find_iter() {
        let pats = [
            LLAMA3,
            crate::pretok::patterns::HF_BYTE_LEVEL_REGEX,
            r"\s+(?!\S)|\s+",
            r"a+(?![^a])|a+|b",
            r"(?i)k+(?![^k])|k+|\s",
            r"[ \t]+(?![^ \t])|[ \t]+|\w+|\n",
        ];
        for p in pats {
            let g = GuardedRegex::new(p, "test").unwrap();
            assert!(g.counted.is_some() && g.trims.contains(&true), "{p} is rewritten");
            let mut texts: Vec<String> =
                ["", " ", "  ", "a", " a", "  a", "a ", "a  ", " \t\n x  y   z\n\n  ", "héllo  wörld \u{a0}\u{a0}é  ", "aab ba  ", "xX  x"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
            let mut seed = 7u64;
            let alphabet = [" ", "\t", "\n", "a", "b", "x", "é", "\u{3000}", "1", "'s", ".", "\r"];
            for _ in 0..300 {
                let mut t = String::new();
                for _ in 0..(seed % 24) {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    t.push_str(alphabet[(seed >> 33) as usize % alphabet.len()]);
                }
                texts.push(t);
            }
            let oracle = unguarded(p);
            for t in &texts {
                assert_eq!(guarded_matches(&g, t), unguarded_matches(&oracle, t), "{p:?} on {t:?}");
            }
        }
        // possessive forms (tiktoken's GPT-2 and cl100k, and their tokenizer.json export) lose their atomic groups
        for p in [
            crate::pretok::patterns::GPT2,
            crate::pretok::patterns::CL100K,
            r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|(?>\p{N}{1,3})| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\z|\s*[\r\n]|\s+(?!\S)|\s",
        ] {
            let g = GuardedRegex::new(p, "test").unwrap();
            assert!(g.counted.is_some(), "{p} is rewritten");
            let oracle = unguarded(p);
            for t in ["", " ", "a  b", "don't  \n\n x ", "héllo wörld 12345  \u{3000}\t\n", "  x\n  ", "ab!!  ?\n\n"] {
                assert_eq!(guarded_matches(&g, t), unguarded_matches(&oracle, t), "{p:?} on {t:?}");
            }
        }
        // possessive runs whose giving back would change the match keep the VM
        for p in [r"(?>a+)ab|b", r"\s++(?m:$)|\s"] {
            let g = GuardedRegex::new(p, "test");
            assert!(g.map_or(true, |g| g.counted.is_none()), "{p}");
        }
        // not rewritten: D is not the complement of C, or no `C+` follows
        for p in [r"\s+(?!\S)", r"\s+(?!x)|\s{1,9}", r"\s+(?!\S)|\w{1,5}", r"\s*(?!\S)|\s{0,3}"] {
            let g = GuardedRegex::new(p, "test").unwrap();
            assert!(g.trims.is_empty(), "{p}");
        }
    }

    #[test]
    fn a_million_spaces_encode() {
        let text = format!("x{}y{}\n{}", " ".repeat(1_000_000), "\t".repeat(1_000_000), " \n".repeat(500_000));
        let got = matches(LLAMA3, &text);
        assert_eq!(got[..3], [(0, 1), (1, 1_000_000), (1_000_000, 1_000_002)]);
        assert_eq!(got.iter().map(|m| m.1 - m.0).sum::<usize>(), text.len());
    }

    #[test]
    fn unbounded_vm_pieces_are_refused() {
        for p in [
            r"(?=a+b)|[\s\S]",
            r"(?!a*b)[\s\S]",
            r"(?<=a+)b|[\s\S]",
            r"a(?:[ab]*c)?|(?=x)y",
            r"(?>a+)ab|b",
            r"(?:x(?=y)c+)?",
            r"(?:(?=(?:a(?!b))+)c|[\s\S])",
            r"\s*[\r\n]+|\s+(?!\S)",
            r"(a+)\1|b",
        ] {
            match GuardedRegex::new(p, "test") {
                Err(Error::Pattern(m)) => assert!(m.contains("any length") && m.contains("test"), "{m}"),
                other => panic!("{p} gave {other:?}"),
            }
        }
        // bounded pieces, and the VM's own loops (counted), are accepted
        for p in [r"\s+(?!\S)", r"a+(?=b)|c", r"(?=ab{1,5})|x", r"(?<=ab)c{1,5}", r"(?>a{1,9})b|a", r"\w+(?=\s|$)"] {
            GuardedRegex::new(p, "test").unwrap();
        }
        for p in VETTED_VM_PATTERNS {
            GuardedRegex::new(p, "test").unwrap();
        }
    }
}

