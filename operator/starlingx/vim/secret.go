package vim

import (
	"fmt"
	"log/slog"
)

// Secret holds a password. Every way of printing it (fmt verbs, JSON, text
// marshalling, slog) shows "[redacted]"; only the Keystone request reads
// the value.
type Secret string

const redacted = "[redacted]"

// String implements fmt.Stringer.
func (Secret) String() string { return redacted }

// GoString implements fmt.GoStringer (%#v).
func (Secret) GoString() string { return redacted }

// Format implements fmt.Formatter for every verb, %x and %q included.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON implements json.Marshaler.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue implements slog.LogValuer.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// reveal returns the value, for the Keystone body only.
func (s Secret) reveal() string { return string(s) }
