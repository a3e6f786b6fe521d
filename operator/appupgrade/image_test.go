package appupgrade

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileImages is the image part of the hostile-input corpus: every C0
// control character, DEL, every C1 control character, Unicode whitespace
// and format characters (NBSP, ideographic space, zero-width, bidi
// overrides, BOM), ANSI escape sequences, invalid UTF-8, grammar errors
// and over-long references. Each must be refused.
func hostileImages() map[string]string {
	out := map[string]string{}
	for r := rune(0); r < 0x20; r++ {
		out[fmt.Sprintf("C0 U+%04X in the tag", r)] = "registry.example.com/app:v" + string(r) + "2"
	}
	out["DEL"] = "app:v2\x7f"
	for r := rune(0x80); r < 0xa0; r++ {
		out[fmt.Sprintf("C1 U+%04X", r)] = "app" + string(r) + ":v2"
	}
	for _, r := range []rune{0xa0, 0x1680, 0x2000, 0x2007, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
		0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, 0xfeff, 0xad} {
		out[fmt.Sprintf("U+%04X", r)] = "app:v2" + string(r)
	}
	for name, img := range map[string]string{
		"leading space":             " app:v2",
		"trailing space":            "app:v2 ",
		"inner space":               "app: v2",
		"ANSI colour":               "app:v2\x1b[31m",
		"ANSI clear screen":         "\x1b[2J\x1b[Happ:v2",
		"OSC hyperlink":             "app:v2\x1b]8;;http://evil\x07",
		"invalid UTF-8":             "app:v2\xff\xfe",
		"lone continuation byte":    "app\x80:v2",
		"uppercase repository":      "Registry.example.com/App:v2",
		"empty tag":                 "app:",
		"double colon":              "app::v2",
		"tag too long":              "app:" + strings.Repeat("v", 129),
		"name too long":             strings.Repeat("a", 256) + ":v2",
		"over 1024 bytes":           "app:" + strings.Repeat("v", 5000),
		"bad digest":                "app@sha256:xyz",
		"short digest":              "app@sha256:abc",
		"slash at the end":          "registry.example.com/app/",
		"double slash":              "registry.example.com//app:v2",
		"shell injection":           "app:v2;rm -rf /",
		"command substitution":      "app:$(id)",
		"quotes":                    `app:"v2"`,
		"json break-out":            `app:v2","image":"evil`,
		"64-hex identifier as name": strings.Repeat("a", 64),
		"URL":                       "https://registry.example.com/app:v2",
		"empty":                     "",
		"only a tag":                ":v2",
		"path traversal":            "../../app:v2",
		"unicode homoglyph":         "аpp:v2", // Cyrillic a
		"emoji":                     "app:v2🙂",
	} {
		out[name] = img
	}
	return out
}

func TestValidateImageRefusesTheHostileCorpus(t *testing.T) {
	corpus := hostileImages()
	require.GreaterOrEqual(t, len(corpus), 80)
	for name, img := range corpus {
		t.Run(name, func(t *testing.T) {
			err := ValidateImage(img)
			require.Error(t, err, "%q must be refused", img)
			msg := err.Error()
			assert.True(t, utf8.ValidString(msg), "message is valid UTF-8")
			for _, r := range msg {
				assert.False(t, unicode.IsControl(r) || unicode.Is(unicode.Cf, r), "message carries U+%04X raw: %q", r, msg)
			}
			assert.LessOrEqual(t, len(msg), 600, "message stays short")
			assert.Contains(t, msg, "image")
		})
	}
}

func TestValidateImageAdmitsReferences(t *testing.T) {
	for _, img := range []string{
		"app", "app:v2", "job-worker:v2.0.0", "registry.example.com/team/job-worker:v2.0.0",
		"registry.example.com:5000/app:v2", "localhost:5000/app", "[::1]:5000/app:v2",
		"app@sha256:" + strings.Repeat("a", 64), "registry.example.com/app:v2@sha256:" + strings.Repeat("0", 64),
		"docker.io/library/busybox:1.36", "app:" + strings.Repeat("v", 128), "a_b__c-d.e:V_2.0-rc1",
	} {
		assert.NoError(t, ValidateImage(img), img)
	}
}

// The messages say what is wrong and where, without the raw character.
func TestValidateImageMessages(t *testing.T) {
	err := ValidateImage("app:v2\tlatest")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"app:v2\tlatest" contains a control character U+0009 at byte 6`)
	err = ValidateImage("app:v2\u00a0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a whitespace character U+00A0")
	err = ValidateImage("app:v2\u202e")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a format character U+202E")
	err = ValidateImage("App:v2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must be lowercase")
	err = ValidateImage(strings.Repeat("x", 2000))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2000 bytes long")
}

func TestSafeText(t *testing.T) {
	assert.Equal(t, "plain text: ok", SafeText("plain text: ok", 0))
	assert.Equal(t, "café ünïcode", SafeText("café ünïcode", 0))
	assert.Equal(t, `a\u001b[31mb\u0009c\u000ad\u202e\u00a0`, SafeText("a\x1b[31mb\tc\nd\u202e\u00a0", 0))
	assert.Equal(t, `bad\xff`, SafeText("bad\xff", 0))
	long := strings.Repeat("é", 1000) // 2,000 bytes
	cut := SafeText(long, 1024)
	assert.LessOrEqual(t, len(cut), 1024)
	assert.True(t, utf8.ValidString(cut))
	assert.True(t, strings.HasSuffix(cut, "…"))
	assert.Equal(t, "ab…", Truncate("abcdefgh", 5))
	assert.Equal(t, `"ab"…`, QuoteText("abcdef", 2))
}

// FuzzSafeText: the result is valid UTF-8, within the bound and free of
// control and format characters, whatever the input.
func FuzzSafeText(f *testing.F) {
	for _, img := range hostileImages() {
		f.Add(img, 64)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n%2048 + 8
		if n < 8 {
			n = 8
		}
		out := SafeText(s, n)
		if len(out) > n || !utf8.ValidString(out) {
			t.Fatalf("SafeText(%q, %d) = %q", s, n, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("SafeText(%q) kept U+%04X", s, r)
			}
		}
	})
}

// ValidateImage remembers the images it accepted: a second call answers
// as the first (and as the checks themselves) for valid and refused images
// alike, and the remembered set stays bounded.
func TestValidateImageRemembersOnlyWhatItAccepted(t *testing.T) {
	imgs := []string{"app:v2", "registry.example.com/team/job-worker:v2.0.0", "App:v2", "app:v2\tlatest", ""}
	for _, img := range hostileImages() {
		imgs = append(imgs, img)
	}
	for _, img := range imgs {
		want := validateImage(img)
		for range 2 {
			got := ValidateImage(img)
			if want == nil {
				assert.NoError(t, got, "%q", img)
			} else {
				require.Error(t, got, "%q", img)
				assert.Equal(t, want.Error(), got.Error())
			}
		}
		assert.Equal(t, want == nil, validImages.has(img), "%q remembered only when valid", img)
	}
	for i := range maxValidImages + 10 {
		require.NoError(t, ValidateImage(fmt.Sprintf("app:v%d", i)))
	}
	validImages.mu.RLock()
	n := len(validImages.set)
	validImages.mu.RUnlock()
	assert.LessOrEqual(t, n, maxValidImages)
}
