package deploy

import (
	"os"
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
			if strings.Contains(in.args, "go build") && strings.Contains(in.args, "CGO_ENABLED=0") {
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
		problems = append(problems, "no static build: want a RUN with CGO_ENABLED=0 go build")
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
