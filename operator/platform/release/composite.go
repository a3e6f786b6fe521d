package release

import (
	"fmt"
	"strings"
)

// compositeSep separates product and Kubernetes in a composite release.
const compositeSep = " / "

// Composite is what a whole system runs: a product release and a
// Kubernetes version, written "starlingx-13.01.0 / v1.34.1" in status.
// A zero Kubernetes means "unspecified" (keep what runs).
type Composite struct {
	Platform   ID
	Kubernetes KubeVersion
}

// String is "<product> / <k8s>", or just "<product>" when Kubernetes is zero.
func (c Composite) String() string {
	if c.Kubernetes.IsZero() {
		return c.Platform.String()
	}
	return c.Platform.String() + compositeSep + c.Kubernetes.String()
}

// Equal reports whether both composites name the same product release and
// the same Kubernetes version.
func (c Composite) Equal(o Composite) bool {
	return c.Platform.Equal(o.Platform) && c.Kubernetes == o.Kubernetes
}

// ParseComposite parses "<product> / <k8s>" (status.release,
// deployFromRelease, deployToRelease).
func ParseComposite(s string) (Composite, error) {
	p, k, ok := strings.Cut(s, compositeSep)
	if !ok {
		return Composite{}, fmt.Errorf("composite release %q is not '<product> / <k8s>' (e.g. 'starlingx-13.01.0 / v1.34.1'): %w", s, ErrMalformed)
	}
	id, err := ParseProductID(p)
	if err != nil {
		return Composite{}, fmt.Errorf("composite release %q: %w", s, err)
	}
	v, err := ParseKubeVersion(k)
	if err != nil {
		return Composite{}, fmt.Errorf("composite release %q: %w", s, err)
	}
	return Composite{Platform: id, Kubernetes: v}, nil
}

// ParseSpec parses a desired release: a product id and an optional
// Kubernetes version ("" keeps what runs).
func ParseSpec(platform, kubernetes string) (Composite, error) {
	id, err := ParseProductID(platform)
	if err != nil {
		return Composite{}, err
	}
	if kubernetes == "" {
		return Composite{Platform: id}, nil
	}
	v, err := ParseKubeVersion(kubernetes)
	if err != nil {
		return Composite{}, err
	}
	return Composite{Platform: id, Kubernetes: v}, nil
}
