// Package manifests decodes Kubernetes YAML manifests (multi-document files,
// a directory of them, or an embedded file system) into typed objects.
package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ErrNoManifests is LoadFS's error for a directory without *.yaml / *.yml files.
var ErrNoManifests = errors.New("no *.yaml manifests")

// Options tune LoadFSWith.
type Options struct {
	// Kinds, when set, is what the error for a document of a kind the
	// scheme does not know says is accepted instead of the decoder's
	// wording, e.g. "the simulator models Namespace (v1), ...".
	Kinds string
	// Check, when set, is called with every decoded object in order (of
	// files, then documents); an error refuses the object and is returned
	// prefixed with the file's name.
	Check func(client.Object) error
}

// LoadFS decodes every *.yaml / *.yml file under dir of fsys (recursively,
// in lexical order; kustomization.yaml is skipped) with scheme. Errors name
// the file and document number and say what is wrong, in one line.
func LoadFS(fsys fs.FS, dir string, scheme *runtime.Scheme) ([]client.Object, error) {
	return LoadFSWith(fsys, dir, scheme, Options{})
}

// LoadFSWith is LoadFS with opts.
func LoadFSWith(fsys fs.FS, dir string, scheme *runtime.Scheme, opts Options) ([]client.Object, error) {
	var files []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := path.Ext(p)
		if !d.IsDir() && (ext == ".yaml" || ext == ".yml") && path.Base(p) != "kustomization.yaml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read manifests in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoManifests, dir)
	}
	sort.Strings(files)
	var objs []client.Object
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		got, err := decode(f, data, scheme, opts.Kinds)
		if err != nil {
			return nil, err
		}
		if opts.Check != nil {
			for _, obj := range got {
				if err := opts.Check(obj); err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
			}
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// Decode splits data into YAML documents and decodes each into a typed
// object of scheme; empty documents are skipped. name is used in errors.
func Decode(name string, data []byte, scheme *runtime.Scheme) ([]client.Object, error) {
	return decode(name, data, scheme, "")
}

// decode is Decode; kinds, when set, replaces the decoder's error for an
// unknown kind (see Options.Kinds).
func decode(name string, data []byte, scheme *runtime.Scheme, kinds string) ([]client.Object, error) {
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	decoder := codecs.UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []client.Object
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			continue
		}
		obj, gvk, err := decoder.Decode(raw, nil, nil)
		if runtime.IsNotRegisteredError(err) && kinds != "" {
			var tm metav1.TypeMeta
			if yaml.Unmarshal(raw, &tm) == nil {
				return nil, fmt.Errorf("%s: document %d: unknown kind %q for apiVersion %q: %s", name, doc, tm.Kind, tm.APIVersion, kinds)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %s", name, doc, oneLine(notRegisteredScheme.ReplaceAllString(err.Error(), "")))
		}
		co, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%s: document %d: %s is not an object with metadata", name, doc, gvk.Kind)
		}
		objs = append(objs, co)
	}
}

func stripComments(raw []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// notRegisteredScheme is the scheme's name in runtime's "no kind is
// registered" error: the source line that created the scheme, noise to a user.
var notRegisteredScheme = regexp.MustCompile(` in scheme "[^"]*"`)

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
