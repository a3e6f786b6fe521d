package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
)

// rawObject splits an object into the members encoding/json finds (the
// same keys, each value the same JSON), and refuses what it leaves to
// encoding/json: escaped or repeated keys, anything but an object.
func TestRawObjectSplitsAsEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : -1.5e3 , "b":true,"c":null,"d":false}`,
		`{"s":"x\"}],{[y","t":"\\","u":"\u00e9\n"}`,
		`{"o":{"p":[1,{"q":"]}"},[]],"r":{}},"z":[ ]}`,
		"{\n  \"metadata\": {\"resourceVersion\": \"12\"},\n  \"status\": {\"components\": [{\"name\": \"api\", \"phase\": \"Rolled\"}], \"phase\": \"Completed\"}\n}",
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		docs = append(docs, randomJSONObject(r, 3))
	}
	for _, d := range docs {
		data := []byte(d)
		if !json.Valid(data) {
			t.Fatalf("test document is not JSON: %s", d)
		}
		got, ok := rawObject(data)
		if !ok {
			t.Errorf("%s: refused", d)
			continue
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d members, encoding/json %d", d, len(got), len(want))
		}
		for _, m := range got {
			w, found := want[string(m.key)]
			if !found || !sameJSON(t, m.val, w) {
				t.Errorf("%s: member %q = %s, encoding/json %s", d, m.key, m.val, w)
			}
		}
	}
	for _, d := range []string{`{"a":1,"a":2}`, `{"\u0061":1}`, `{"a\"b":1}`, "{\"a\xffb\":1}", `[1]`, `"x"`, `null`, `1`} {
		if _, ok := rawObject([]byte(d)); ok {
			t.Errorf("%s: split, want refused (left to encoding/json)", d)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var ca, cb bytes.Buffer
	if err := json.Compact(&ca, a); err != nil {
		t.Fatalf("member %s is not JSON: %v", a, err)
	}
	if err := json.Compact(&cb, b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// randomJSONObject is an object of random members (distinct plain keys),
// values of every JSON kind, strings with quotes, brackets and escapes,
// nested to depth, with random white space.
func randomJSONObject(r *rand.Rand, depth int) string {
	var b bytes.Buffer
	ws := func() {
		b.WriteString([]string{"", "", " ", "\n  ", "\t"}[r.Intn(5)])
	}
	b.WriteByte('{')
	n := r.Intn(5)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		ws()
		fmt.Fprintf(&b, `"k%d_%d"`, i, r.Intn(100))
		ws()
		b.WriteByte(':')
		ws()
		b.WriteString(randomJSONValue(r, depth))
		ws()
	}
	b.WriteByte('}')
	return b.String()
}

func randomJSONValue(r *rand.Rand, depth int) string {
	k := r.Intn(8)
	if depth <= 0 {
		k %= 4 // scalars only
	}
	switch k {
	case 0:
		return fmt.Sprint(r.Intn(2000) - 1000)
	case 1:
		return []string{"true", "false", "null", "1.5e-3", "-0"}[r.Intn(5)]
	case 2, 3:
		s, _ := json.Marshal([]string{"", "plain", `q"uote`, "br}ack]et,{[", `back\slash`, "é\n\t\u2028"}[r.Intn(6)])
		return string(s)
	case 4, 5:
		return randomJSONObject(r, depth-1)
	default:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, n := 0, r.Intn(4); i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(randomJSONValue(r, depth-1))
		}
		b.WriteByte(']')
		return b.String()
	}
}
