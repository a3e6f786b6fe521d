package judge

import "testing"

// TestWorldHashAndEqual: a world's hash depends on its entries alone (two
// worlds built from the same entries agree), and a change of any field
// of any entry makes the worlds unequal — and, for these cases, changes
// the hash, as the key string it replaces did.
func TestWorldHashAndEqual(t *testing.T) {
	base := func() (map[string]deployment, map[string]pod) {
		return map[string]deployment{
				"ns/api":    {name: "api", images: []string{"api:v1"}, hash: "h1", spec: 3},
				"ns/worker": {name: "worker", images: []string{"w:v2", "envoy:1"}, hash: "h2", spec: 2, wasRolled: true},
			}, map[string]pod{
				"ns/api-a":    {name: "api-a", deployment: "ns/api", images: []string{"api:v1"}, hash: "h1", ready: true},
				"ns/worker-b": {name: "worker-b", deployment: "ns/worker", images: []string{"w:v2", "envoy:1"}, hash: "h2", deleting: true},
			}
	}
	d, p := base()
	a := newWorld(d, p)
	d2, p2 := base()
	b := newWorld(d2, p2)
	if a.hash != b.hash || !a.equal(b) {
		t.Fatal("two worlds of the same entries differ")
	}
	changes := map[string]func(map[string]deployment, map[string]pod){
		"deployment image": func(d map[string]deployment, _ map[string]pod) {
			x := d["ns/api"]
			x.images = []string{"api:v2"}
			d["ns/api"] = x
		},
		"deployment hash":   func(d map[string]deployment, _ map[string]pod) { x := d["ns/api"]; x.hash = "h9"; d["ns/api"] = x },
		"deployment spec":   func(d map[string]deployment, _ map[string]pod) { x := d["ns/api"]; x.spec = 4; d["ns/api"] = x },
		"deployment rolled": func(d map[string]deployment, _ map[string]pod) { x := d["ns/api"]; x.wasRolled = true; d["ns/api"] = x },
		"image order": func(d map[string]deployment, _ map[string]pod) {
			x := d["ns/worker"]
			x.images = []string{"envoy:1", "w:v2"}
			d["ns/worker"] = x
		},
		"image split": func(d map[string]deployment, _ map[string]pod) {
			x := d["ns/worker"]
			x.images = []string{"w:v2envoy:1"}
			d["ns/worker"] = x
		},
		"pod ready": func(_ map[string]deployment, p map[string]pod) {
			x := p["ns/api-a"]
			x.ready = false
			p["ns/api-a"] = x
		},
		"pod deleting": func(_ map[string]deployment, p map[string]pod) {
			x := p["ns/api-a"]
			x.deleting = true
			p["ns/api-a"] = x
		},
		"pod owner": func(_ map[string]deployment, p map[string]pod) {
			x := p["ns/api-a"]
			x.deployment = "ns/worker"
			p["ns/api-a"] = x
		},
		"pod gone":  func(_ map[string]deployment, p map[string]pod) { delete(p, "ns/api-a") },
		"pod added": func(_ map[string]deployment, p map[string]pod) { p["ns/api-c"] = p["ns/api-a"] },
		"entries swap kinds": func(d map[string]deployment, p map[string]pod) {
			delete(d, "ns/api")
			p["ns/api"] = pod{deployment: "api", images: []string{"api:v1"}, hash: "h1"}
		},
		"deployment renamed": func(d map[string]deployment, _ map[string]pod) { d["ns/api2"] = d["ns/api"]; delete(d, "ns/api") },
	}
	for name, change := range changes {
		d, p := base()
		change(d, p)
		c := newWorld(d, p)
		if c.equal(a) || a.equal(c) {
			t.Errorf("%s: the changed world equals the original", name)
		}
		if c.hash == a.hash {
			t.Errorf("%s: the changed world has the original's hash", name)
		}
	}
}
