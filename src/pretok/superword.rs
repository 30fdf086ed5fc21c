//! A hand-written splitter for the `superbpe` preset (SuperBPE's stage-2
//! pre-tokenizer, `bytepair.patterns.SUPERBPE`): the pieces of HF's
//! `Split(A, behavior="isolated")` with the authors' regex
//! `A = \p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)`: each match of A,
//! and each stretch of text between matches. The same pieces as the regex
//! `A|(?:(?!A)[\s\S])+` (checked below against fancy-regex), several times
//! faster: a lookahead at every character is the regex engine's slow path.

use crate::pretok::lexer::{is_letter, is_number, is_space};

/// The end of A's match at byte `i` (leftmost alternative first), if any.
#[inline]
fn match_at(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i..];
    let mut chars = rest.char_indices();
    let (_, c) = chars.next()?;
    // \p{N}{1,3}
    if is_number(c) {
        let mut end = i + c.len_utf8();
        for (k, d) in rest.char_indices().skip(1).take(2) {
            if !is_number(d) {
                break;
            }
            end = i + k + d.len_utf8();
        }
        return Some(end);
    }
    let other = |ch: char| !is_space(ch) && !is_letter(ch) && !is_number(ch);
    // ` ?[^\s\p{L}\p{N}]{2,}[\r\n/]*` (a leading space, or none: without it
    // the run starts at `c`, which must then be an "other" character)
    let start = if c == ' ' { i + 1 } else { i };
    let mut run = 0;
    let mut end = start;
    for ch in text[start..].chars() {
        if !other(ch) {
            break;
        }
        run += 1;
        end += ch.len_utf8();
    }
    if run >= 2 {
        end += text[end..].bytes().take_while(|b| matches!(b, b'\r' | b'\n' | b'/')).count();
        return Some(end);
    }
    // ` +(?!\S)`: the run of spaces, or one less when a non-space follows it
    if c == ' ' {
        let k = rest.bytes().take_while(|&b| b == b' ').count();
        let after = text[i + k..].chars().next();
        return match after {
            None => Some(i + k),
            Some(n) if is_space(n) => Some(i + k),
            Some(_) if k >= 2 => Some(i + k - 1),
            Some(_) => None,
        };
    }
    None
}

/// The end of the piece that starts at byte `i` (below `text.len()`).
pub(crate) fn next_piece(text: &str, i: usize) -> usize {
    if let Some(end) = match_at(text, i) {
        return end;
    }
    // a stretch up to the next position where A matches (or the end)
    let mut p = i + text[i..].chars().next().map_or(1, char::len_utf8);
    while p < text.len() && match_at(text, p).is_none() {
        p += text[p..].chars().next().map_or(1, char::len_utf8);
    }
    p
}

/// Calls `f` on every piece of `text`, in order.
pub fn for_each_piece<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let mut i = 0;
    while i < text.len() {
        let end = next_piece(text, i);
        f(&text[i..end]);
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::patterns::SUPERBPE;
    use fancy_regex::Regex;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_piece(text, |w| out.push(w));
        out
    }

    #[test]
    fn equals_the_regex_on_generated_text() {
        let re = Regex::new(SUPERBPE).unwrap();
        let alphabet: Vec<char> =
            "ab Z \u{a0}\u{3000}\t\r\n\u{b}\u{85}\u{2028}.,!?-/\\()\"_*#@120٣২Ⅻ²½éßжש你こ한\u{301}\u{93f}🙂𝟘".chars().collect();
        let mut rng = crate::testing::Rng(0x9E3779B97F4A7C15);
        let n = std::env::var("LEXER_FUZZ").ok().and_then(|v| v.parse().ok()).unwrap_or(30_000);
        for _ in 0..n {
            let len = (rng.next() % 40) as usize;
            let text: String = (0..len).map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize]).collect();
            let expected: Vec<&str> = re.find_iter(&text).map(|m| m.unwrap().as_str()).collect();
            assert_eq!(pieces(&text), expected, "on {text:?}");
        }
    }

    #[test]
    fn pieces_bridge_single_spaces_only() {
        assert_eq!(
            pieces("By the way, it cost 1234 dollars!! Really...\n  ok  end  "),
            ["By the way, it cost ", "123", "4", " dollars", "!!", " Really", "...\n", " ", " ok", " ", " end", "  "]
        );
    }
}
