//! Text that comes from processes, made safe to print. Any process names itself (its
//! `comm`, up to 15 bytes of anything but NUL) and its executable's path: a name
//! holding an escape sequence or a line break would move the cursor, retitle the
//! window or forge lines in whatever terminal shows schedlab's output. Every control
//! character (C0, DEL, C1) is written as an escape instead, `\x1b` or `\u{9b}`, as
//! `ps` and systemd do in their way; the rest is left as it is.

use std::borrow::Cow;

/// `text` with every control character written as an escape (`\n` as `\x0a` too: a
/// name is one line).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c as u32 {
            n if c.is_control() && n < 0x80 => out.push_str(&format!("\\x{n:02x}")),
            n if c.is_control() => out.push_str(&format!("\\u{{{n:x}}}")),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("my-batch-job"), Cow::Borrowed("my-batch-job")));
        assert_eq!(printable("évier ✓"), "évier ✓");
        assert_eq!(printable("\x1b]0;pwned\x07x"), "\\x1b]0;pwned\\x07x");
        assert_eq!(printable("a\nfake line"), "a\\x0afake line");
        assert_eq!(printable("\u{9b}31m\u{7f}"), "\\u{9b}31m\\x7f");
    }
}
