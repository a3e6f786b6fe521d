package platform

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cucumber/godog"
)

// features are the platform feature files, relative to this package.
var features = []string{filepath.Join("..", "..", "..", "features")}

// seed is PLATFORM_SEED (default 1): it seeds every scenario's simulator
// and model uuids. A failing run prints the command that replays it.
func seed(t *testing.T) int64 {
	s := int64(1)
	if v := os.Getenv("PLATFORM_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("PLATFORM_SEED=%q is not a number", v)
		}
		s = n
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: PLATFORM_SEED=%d go test ./scenarios/steps/platform -run '%s' -v", s, t.Name())
		}
	})
	return s
}

func run(t *testing.T, tags string, backend Backend) {
	s := seed(t)
	format := os.Getenv("GODOG_FORMAT")
	if format == "" {
		format = "progress"
	}
	suite := godog.TestSuite{
		Name:                "platform",
		ScenarioInitializer: func(sc *godog.ScenarioContext) { Initialize(sc, backend, s) },
		Options: &godog.Options{
			Format: format, Paths: features, Tags: tags, Strict: true, TestingT: t,
		},
	}
	if code := suite.Run(); code != 0 {
		t.Fatalf("platform features (%s) failed: exit %d", tags, code)
	}
}

// TestPlatformFeatures runs every @platform scenario on the simulator with
// the StarlingX model behind the operator's vim.Client.
func TestPlatformFeatures(t *testing.T) { run(t, "@platform", Direct) }

// TestPlatformFeaturesHTTP runs the @http scenarios again with fakevim
// over HTTP (httptest) behind the operator's HTTP VIM client.
func TestPlatformFeaturesHTTP(t *testing.T) { run(t, "@platform && @http", HTTP) }
