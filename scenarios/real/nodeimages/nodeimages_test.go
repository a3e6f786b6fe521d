package nodeimages

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The archive holds every image under its reference, each with its entry
// point, environment and user, and one layer with /tmp and its binaries.
func TestWriteArchive(t *testing.T) {
	dir := t.TempDir()
	for _, b := range Binaries {
		if err := os.WriteFile(filepath.Join(dir, b.Name), []byte("#!"+b.Name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "images.tar")
	imgs := Images()
	if err := WriteArchive(path, dir, imgs); err != nil {
		t.Fatal(err)
	}
	if len(imgs) != 2+len(DemoNames)*(len(DemoTags)+len(CrashTags)) {
		t.Fatalf("%d images", len(imgs))
	}
	for _, want := range []struct {
		ref, file, user string
		env             string
	}{
		{PauseImage, "pause", "", ""},
		{OperatorImage, "manager", "65532:65532", ""},
		{DemoRegistry + "job-worker:v2.0.0", "demoapp", "", "APP_VERSION=job-worker:v2.0.0"},
		{DemoRegistry + "job-api:" + CrashTag, "demoapp", "", "CRASH=1"},
		{DemoRegistry + "job-worker:crashloop", "demoapp", "", "CRASH=1"},
	} {
		tag, err := name.NewTag(want.ref)
		if err != nil {
			t.Fatal(err)
		}
		img, err := tarball.ImageFromPath(path, &tag)
		if err != nil {
			t.Fatalf("%s: %v", want.ref, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != "/"+want.file {
			t.Errorf("%s: entrypoint %q", want.ref, got)
		}
		if cf.Config.User != want.user {
			t.Errorf("%s: user %q, want %q", want.ref, cf.Config.User, want.user)
		}
		if want.env != "" && !contains(cf.Config.Env, want.env) {
			t.Errorf("%s: env %q lacks %s", want.ref, cf.Config.Env, want.env)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: layers %d, %v", want.ref, len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]int64{}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = h.Mode
		}
		rc.Close()
		if files["tmp/"] != 0o1777 || files[want.file] != 0o755 || len(files) != 2 {
			t.Errorf("%s: layer files (name: mode) %v", want.ref, files)
		}
	}
	if err := WriteArchive(filepath.Join(dir, "x.tar"), filepath.Join(dir, "missing"), imgs); err == nil {
		t.Error("no error for a missing binary")
	} else if _, statErr := os.Stat(filepath.Join(dir, "x.tar")); !os.IsNotExist(statErr) {
		t.Error("half-written archive left behind")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
