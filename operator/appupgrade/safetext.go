package appupgrade

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SafeText returns s fit for a status message, an event note or a log
// line that a terminal (kubectl describe) prints raw: every control,
// format or non-ASCII whitespace character (C0, DEL, C1, ANSI escape
// sequences' ESC, NBSP, bidirectional overrides, zero-width characters,
// invalid UTF-8) is replaced by its \uXXXX escape; a tab, newline or
// carriage return likewise. The result is at most maxBytes bytes
// (maxBytes <= 0: no limit), cut at a rune boundary and ending in "…"
// when cut. Plain ASCII text and printable Unicode pass unchanged.
func SafeText(s string, maxBytes int) string {
	if clean(s) {
		return Truncate(s, maxBytes)
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				continue
			}
		}
		if r != ' ' && badRune(r) != "" {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return Truncate(b.String(), maxBytes)
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// QuoteText is s double-quoted with Go escapes for every non-printable or
// non-ASCII rune (strconv.QuoteToASCII), cut to about maxBytes of the
// original with "…" marking the cut: for naming hostile input in a
// message.
func QuoteText(s string, maxBytes int) string {
	if maxBytes > 0 && len(s) > maxBytes {
		return strconv.QuoteToASCII(s[:runeCut(s, maxBytes)]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

// Truncate cuts s to at most maxBytes bytes at a rune boundary, replacing
// the tail with "…" (3 bytes) when it cuts; maxBytes <= 0 means no limit.
func Truncate(s string, maxBytes int) string {
	if maxBytes <= 0 || len(s) <= maxBytes {
		return s
	}
	const ellipsis = "…"
	return s[:runeCut(s, maxBytes-len(ellipsis))] + ellipsis
}

// runeCut is the largest index <= n (and >= 0) at a rune boundary of s.
func runeCut(s string, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
