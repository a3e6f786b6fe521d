package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	op   string // upper case: FROM, RUN, ...
	args string
}

func parseDockerfile(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, op: strings.ToUpper(op), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// lintDockerfile returns one line per rule the Dockerfile breaks: the
// rules of a small, static, non-root manager image.
func lintDockerfile(text string, dockerignore bool) []string {
	var problems []string
	ins := parseDockerfile(text)
	var froms []instruction
	for _, in := range ins {
		if in.op == "FROM" {
			froms = append(froms, in)
		}
	}
	if len(froms) < 2 {
		problems = append(problems, "not multi-stage: want a builder stage and a runtime stage")
		return problems
	}
	pinned := regexp.MustCompile(`^[^\s:@]+(:[^\s]+|@sha256:[0-9a-f]{64})(\s|$)`)
	for _, f := range froms {
		if !pinned.MatchString(f.args) || strings.Contains(f.args, ":latest") {
			problems = append(problems, "line "+strconv.Itoa(f.line)+": base image not pinned to a tag or digest: "+f.args)
		}
	}
	final := froms[len(froms)-1]
	if !strings.Contains(final.args, "distroless/static") && !strings.HasPrefix(final.args, "scratch") {
		problems = append(problems, "runtime stage is not distroless/static or scratch: "+final.args)
	}
	var user, entrypoint string
	static := false
	for _, in := range ins {
		switch in.op {
		case "ADD":
			if strings.Contains(in.args, "://") {
				problems = append(problems, "line "+strconv.Itoa(in.line)+": ADD of a URL; download in a RUN with a checksum instead")
			}
		case "RUN":
			if strings.Contains(in.args, "go build") {
				if !strings.Contains(in.args, "CGO_ENABLED=0") {
					problems = append(problems, "line "+strconv.Itoa(in.line)+": no static build: want CGO_ENABLED=0 go build")
				}
				static = true
			}
		case "USER":
			if in.line > final.line {
				user = in.args
			}
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	if !static {
		problems = append(problems, "no go build: want a RUN with CGO_ENABLED=0 go build")
	}
	if !regexp.MustCompile(`^[1-9][0-9]*(:[1-9][0-9]*)?$`).MatchString(user) {
		problems = append(problems, "runtime stage must end as a numeric non-root USER (runAsNonRoot can only verify a UID), got "+strconv.Quote(user))
	}
	if !strings.HasPrefix(entrypoint, "[") {
		problems = append(problems, "ENTRYPOINT must be exec form, got "+strconv.Quote(entrypoint))
	}
	if !dockerignore {
		problems = append(problems, ".dockerignore missing: the build context would include bin/ (hundreds of MB)")
	}
	return problems
}

func TestDockerfileLint(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	_, err = os.Stat("../.dockerignore")
	assert.Empty(t, lintDockerfile(string(data), err == nil))
}

// The lint can fail: each broken Dockerfile is reported.
func TestDockerfileLintCatchesBreakage(t *testing.T) {
	good, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	cases := map[string]struct {
		from, to string
		want     string
	}{
		"root user":        {"USER 65532:65532", "USER root", "numeric non-root USER"},
		"no user":          {"USER 65532:65532", "", "numeric non-root USER"},
		"latest base":      {"golang:1.26.8-bookworm", "golang:latest", "not pinned"},
		"cgo":              {"CGO_ENABLED=0", "CGO_ENABLED=1", "no static build"},
		"shell entrypoint": {`ENTRYPOINT ["/manager"]`, "ENTRYPOINT /manager", "exec form"},
		"full base":        {"gcr.io/distroless/static-debian12:nonroot", "debian:12", "not distroless"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			broken := strings.Replace(string(good), tc.from, tc.to, 1)
			require.NotEqual(t, string(good), broken, "the Dockerfile no longer contains %q", tc.from)
			got := lintDockerfile(broken, true)
			require.NotEmpty(t, got)
			assert.Contains(t, strings.Join(got, "\n"), tc.want)
		})
	}
	assert.Contains(t, strings.Join(lintDockerfile(string(good), false), "\n"), ".dockerignore")
	assert.Contains(t, strings.Join(lintDockerfile("FROM golang:1.26\nRUN true\n", true), "\n"), "multi-stage")
}

// Every package of the module that a `go build` of the Dockerfile
// compiles (go list -deps) lies under one of its COPY sources and is let
// through by a `!dir/` line of .dockerignore: the image builds from the
// context it is given (no engine runs in CI to find out otherwise).
func TestDockerfileCopiesEverySourceItBuilds(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	ignore, err := os.ReadFile("../.dockerignore")
	require.NoError(t, err)
	var copied, built []string
	for _, in := range parseDockerfile(string(data)) {
		f := strings.Fields(in.args)
		switch {
		case in.op == "COPY" && !strings.HasPrefix(in.args, "--from"):
			copied = append(copied, f[:len(f)-1]...)
		case in.op == "RUN" && strings.Contains(in.args, "go build"):
			built = append(built, f[len(f)-1])
		}
	}
	require.Contains(t, built, "./cmd/simulate", "the image carries simulate for deploy/sweep")
	module := "github.com/lunadas/upgrade-operator/"
	for _, pkg := range built {
		list := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg)
		list.Dir = ".."
		out, err := list.CombinedOutput()
		require.NoError(t, err, string(out))
		for _, dep := range strings.Fields(string(out)) {
			dir, ok := strings.CutPrefix(dep, module)
			if !ok {
				continue
			}
			under := func(prefixes []string) bool {
				for _, p := range prefixes {
					if strings.HasPrefix(dir+"/", strings.TrimPrefix(p, "!")) {
						return true
					}
				}
				return false
			}
			assert.True(t, under(copied), "%s builds %s, which no COPY brings in (%v)", pkg, dir, copied)
			assert.True(t, under(strings.Fields(string(ignore))), "%s builds %s, which .dockerignore leaves out", pkg, dir)
		}
	}
}
