package appupgrade

import (
	"errors"
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/distribution/reference"
)

// MaxImageLength bounds an image reference before it is parsed: the
// reference grammar allows a 255-character repository name, a 128-character
// tag and a digest (71 characters for sha256, 135 for sha512), well under
// 1,024 bytes. A longer string is refused without running the grammar.
const MaxImageLength = 1024

// ValidateImage checks image against the reference grammar of the
// container ecosystem, as the kubelet parses a pod's image
// (kubernetes/kubernetes pkg/util/parsers.ParseImageName →
// github.com/distribution/reference.ParseNormalizedNamed). Before the
// grammar it refuses, with a message naming the position: an empty string,
// more than MaxImageLength bytes, invalid UTF-8, and any control, format
// (e.g. bidirectional overrides, zero-width) or whitespace character
// (tab, newline, NBSP, …), which the grammar would refuse too but
// without saying where. The returned error never contains the raw
// character: it is shown as U+XXXX, and the image as a quoted, truncated
// excerpt (SafeText).
//
// A valid image is remembered (validImages): the checks are a pure
// function of the string, and every reconcile of an upgrade validates the
// same images again (the grammar's regular expressions were about 2.5 % of
// the simulator's CPU). Refusals are not remembered.
func ValidateImage(image string) error {
	if validImages.has(image) {
		return nil
	}
	if err := validateImage(image); err != nil {
		return err
	}
	validImages.add(image)
	return nil
}

// maxValidImages bounds validImages; when full it is emptied and refilled.
const maxValidImages = 4096

// validImages is the set of images ValidateImage accepted, shared by every
// reconcile (and worker) of the process.
var validImages imageSet

type imageSet struct {
	mu  sync.RWMutex
	set map[string]struct{}
}

func (s *imageSet) has(image string) bool {
	s.mu.RLock()
	_, ok := s.set[image]
	s.mu.RUnlock()
	return ok
}

func (s *imageSet) add(image string) {
	s.mu.Lock()
	if s.set == nil || len(s.set) >= maxValidImages {
		s.set = make(map[string]struct{})
	}
	s.set[image] = struct{}{}
	s.mu.Unlock()
}

func validateImage(image string) error {
	switch {
	case image == "":
		return errors.New("image is empty: set a reference such as registry.example.com/app:v2")
	case len(image) > MaxImageLength:
		return fmt.Errorf("image is %d bytes long, over the %d a reference can be: fix the image", len(image), MaxImageLength)
	case !utf8.ValidString(image):
		return fmt.Errorf("image %s is not valid UTF-8: fix the image", QuoteText(image, 80))
	}
	for i, r := range image {
		if bad := badRune(r); bad != "" {
			return fmt.Errorf("image %s contains %s U+%04X at byte %d: an image reference has no whitespace or control characters", QuoteText(image, 80), bad, r, i)
		}
	}
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return fmt.Errorf("image %s is not a valid image reference (%s): use [registry/]repository[:tag][@digest] with a lowercase repository", QuoteText(image, 80), SafeText(err.Error(), 200))
	}
	return nil
}

// badRune names the class of r when it may not appear in an image (or
// unescaped in a message): "a control character", "a whitespace
// character" or "a format character"; "" when r is fine.
func badRune(r rune) string {
	switch {
	case unicode.IsControl(r):
		return "a control character"
	case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
		return "a whitespace character"
	case unicode.Is(unicode.Cf, r), r == utf8.RuneError:
		return "a format character"
	}
	return ""
}
