//! GPT-2's byte-level alphabet: each byte as a printable char, and the
//! rewrite of aligned text into it.

use super::normalized::NStr;
use std::sync::OnceLock;

pub(crate) fn bytes_char() -> &'static [char; 256] {
    static T: OnceLock<[char; 256]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = ['\0'; 256];
        let mut n = 0u32;
        for b in 0..256u32 {
            let keep = (b'!' as u32..=b'~' as u32).contains(&b)
                || (0xA1..=0xAC).contains(&b)
                || (0xAE..=0xFF).contains(&b);
            t[b as usize] = if keep {
                char::from_u32(b).unwrap()
            } else {
                n += 1;
                char::from_u32(255 + n).unwrap()
            };
        }
        t
    })
}

/// Every char becomes the byte-level chars of its UTF-8 bytes.
pub(crate) fn byte_level_transform(n: &mut NStr) {
    let t = bytes_char();
    if !n.track {
        let mut s = String::with_capacity(n.s.len() * 2);
        for b in n.s.bytes() {
            s.push(t[b as usize]);
        }
        n.s = s;
        return;
    }
    let mut dest = Vec::with_capacity(n.s.len());
    for c in n.s.chars() {
        let mut buf = [0u8; 4];
        for (i, b) in c.encode_utf8(&mut buf).bytes().enumerate() {
            dest.push((t[b as usize], isize::from(i > 0)));
        }
    }
    n.transform(dest, 0);
}
