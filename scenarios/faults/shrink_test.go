package faults

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func schedule(t *testing.T, spec string) Schedule {
	t.Helper()
	fs, err := ParseFaults(spec)
	require.NoError(t, err)
	return Schedule{Seed: 7, Scenario: "demo", Faults: fs}
}

// The failure needs a crash and at least 2 conflicts; everything else is noise.
func TestShrinkKeepsWhatTheFailureNeeds(t *testing.T) {
	s := schedule(t, "node-lost@3s,conflict@4:n=6,stale@1s:for=40s,crash@9:down=8s,edit@2s")
	fails := func(c Schedule) bool {
		crash, conflicts := false, 0
		for _, f := range c.Faults {
			crash = crash || f.Kind == Crash
			if f.Kind == Conflict {
				conflicts = f.Int("n")
			}
		}
		return crash && conflicts >= 2
	}
	require.True(t, fails(s))
	res := Shrink(s, fails)
	assert.Equal(t, "conflict@4:n=3,crash@9:down=1s", res.Schedule.Spec())
	assert.Equal(t, int64(7), res.Schedule.Seed)
	assert.Equal(t, "demo", res.Schedule.Scenario)
	assert.True(t, fails(res.Schedule))
	assert.Equal(t, "node-lost@3s,conflict@4:n=6,stale@1s:for=40s,crash@9:down=8s,edit@2s", s.Spec(), "the input is not modified")
	assert.Positive(t, res.Runs)
}

func TestShrinkToNothingWhenNoFaultIsNeeded(t *testing.T) {
	res := Shrink(schedule(t, "crash@3,drop@1s"), func(Schedule) bool { return true })
	assert.Empty(t, res.Schedule.Faults)
	assert.Equal(t, 1, res.Runs)
}
