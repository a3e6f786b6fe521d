package eventlog

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// header is the first line of an event log file: {"eventlog":2}.
type header struct {
	Version int `json:"eventlog"`
}

// WriteHeader writes the header line that starts an event log file of
// this Version. A Recorder with an output writes it before its first event.
func WriteHeader(w io.Writer) error {
	line, _ := json.Marshal(header{Version: Version})
	_, err := fmt.Fprintf(w, "%s\n", line)
	return err
}

// ErrVersion1 is returned by Read for a log without the version-2 header:
// a version-1 log records one image per pod (its first container's) and
// no pod-template-hash, so which pods were old cannot be told from it.
var ErrVersion1 = errors.New(`event log version 1 (no {"eventlog":2} header line): its pods carry no pod-template-hash, so old pods cannot be told apart; record it again with this version (docs/eventlog.md)`)

// Read reads an event log file: the header line, then one Event a line.
// A log of another version is refused with one line (ErrVersion1 for the
// version-1 format); name is used in errors.
func Read(r io.Reader, name string) ([]Event, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	if !s.Scan() {
		if err := s.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: empty event log (no {\"eventlog\":%d} header line)", name, Version)
	}
	var h header
	if err := json.Unmarshal(s.Bytes(), &h); err != nil || h.Version == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrVersion1)
	}
	if h.Version != Version {
		return nil, fmt.Errorf("%s: event log version %d; this build reads version %d only", name, h.Version, Version)
	}
	var out []Event
	for line := 2; s.Scan(); line++ {
		var e Event
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		out = append(out, e)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// TemplateHash is the pod-template-hash the real Deployment controller
// gives the ReplicaSet (and pods) of template at collisionCount: FNV-32a
// over dump.ForHash(template) and the collision count's 8 little-endian
// bytes, safe-encoded (kubernetes/kubernetes pkg/controller/controller_utils.go
// ComputeHash, pkg/util/hash/hash.go DeepHashObject). The template is the
// Deployment's as the API server serves it (defaulted), as the controller's
// informer sees it.
func TemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		_, _ = h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}
